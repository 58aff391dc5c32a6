"""Adadelta (torch.optim.Adadelta): step sizes from running averages of squared gradients
and squared updates, for gradient g of parameter p:

    g  <- g + weight_decay * p
    v  <- rho v + (1 - rho) g²                                 (square_avg)
    d  <- sqrt(u + eps) / sqrt(v + eps) * g                    (the update)
    u  <- rho u + (1 - rho) d²                                 (acc_delta)
    p  <- p - lr d
"""

from __future__ import annotations

import whylab

from .optimizer import Optimizer, check_implementation_flags


class Adadelta(Optimizer):
    def __init__(
        self,
        params,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach=None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_implementation_flags("Adadelta", capturable, differentiable)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, param, group) -> None:
        grad = -param.grad if group["maximize"] else param.grad
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        state = self.state[param]
        if not state:
            state["step"] = whylab.tensor(0.0)
            state["square_avg"] = whylab.zeros_like(param)
            state["acc_delta"] = whylab.zeros_like(param)
        state["step"].add_(1)
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
        delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * grad
        acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
        param.add_(delta, alpha=-group["lr"])
