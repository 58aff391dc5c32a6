"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay.

The update follows ``torch.optim.SGD`` step by step. For gradient g of parameter p:

    g  <- g + weight_decay * p                       (L2 penalty folded into the gradient)
    b  <- g                     on the first step    (momentum buffer)
    b  <- momentum * b + (1 - dampening) * g         afterwards
    g  <- g + momentum * b      with nesterov, else  g <- b
    p  <- p - lr * g

Note the first step copies the gradient into the buffer without dampening, as torch does.
"""

from __future__ import annotations

from .optimizer import Optimizer, check_implementation_flags


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (>= 0).
        momentum: momentum factor (>= 0).
        dampening: dampening applied to the gradient in the momentum update.
        weight_decay: L2 penalty coefficient (>= 0).
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening == 0).
        maximize: ascend the objective instead of descending it.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        check_implementation_flags("SGD", differentiable=differentiable)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} (must be >= 0)")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum} (must be >= 0)")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay} (must be >= 0)")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(self, param, group) -> None:
        grad = param._grad  # a leaf's gradient (Optimizer.step reads it the same way)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(param, alpha=group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[param]
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = grad.clone().detach()
                state["momentum_buffer"] = buffer
            else:
                buffer.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            if group["nesterov"]:
                grad = grad.add(buffer, alpha=momentum)
            else:
                grad = buffer
        param.add_(grad, alpha=-group["lr"])
