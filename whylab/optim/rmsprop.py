"""RMSprop and Adagrad: per-coordinate step sizes from running sums of squared gradients.

RMSprop (torch.optim.RMSprop), for gradient g of parameter p:

    g  <- g + weight_decay * p
    v  <- alpha v + (1 - alpha) g²                     (square_avg)
    m  <- alpha m + (1 - alpha) g,  a <- sqrt(v - m²) + eps    with centered
    a  <- sqrt(v) + eps                                         otherwise
    b  <- momentum b + g / a,  p <- p - lr b                    with momentum
    p  <- p - lr g / a                                          otherwise

Adagrad (torch.optim.Adagrad): ``s <- s + g²`` and ``p <- p - clr g / (sqrt(s) + eps)``
with ``clr = lr / (1 + (step - 1) lr_decay)``.
"""

from __future__ import annotations

import whylab

from .optimizer import Optimizer


def _check(name: str, value: float) -> None:
    if value < 0.0:
        raise ValueError(f"Invalid {name}: {value} (must be >= 0)")


class RMSprop(Optimizer):
    def __init__(
        self,
        params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        for name, value in (
            ("learning rate", lr),
            ("epsilon value", eps),
            ("alpha value", alpha),
            ("momentum value", momentum),
            ("weight_decay value", weight_decay),
        ):
            _check(name, value)
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(self, param, group) -> None:
        grad = -param.grad if group["maximize"] else param.grad
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        state = self.state[param]
        if not state:
            state["step"] = whylab.tensor(0.0)
            state["square_avg"] = whylab.zeros_like(param)
            if group["momentum"] > 0:
                state["momentum_buffer"] = whylab.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = whylab.zeros_like(param)
        state["step"].add_(1)
        alpha = group["alpha"]
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt().add_(group["eps"])
        else:
            avg = square_avg.sqrt().add_(group["eps"])
        if group["momentum"] > 0:
            buffer = state["momentum_buffer"]
            buffer.mul_(group["momentum"]).add_(grad / avg)
            param.add_(buffer, alpha=-group["lr"])
        else:
            param.add_(grad / avg, alpha=-group["lr"])


class Adagrad(Optimizer):
    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        for name, value in (
            ("learning rate", lr),
            ("lr_decay", lr_decay),
            ("weight_decay value", weight_decay),
            ("initial_accumulator_value", initial_accumulator_value),
            ("epsilon value", eps),
        ):
            _check(name, value)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(self, param, group) -> None:
        grad = -param.grad if group["maximize"] else param.grad
        state = self.state[param]
        if not state:
            state["step"] = whylab.tensor(0.0)
            state["sum"] = whylab.full_like(param, group["initial_accumulator_value"])
        state["step"].add_(1)
        step = float(state["step"].item())
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state["sum"].add_(grad * grad)
        std = state["sum"].sqrt().add_(group["eps"])
        param.add_(grad / std, alpha=-clr)
