"""Adam and AdamW, following ``torch.optim.Adam`` / ``torch.optim.AdamW`` step by step.

For gradient g of parameter p at step t (counting from 1):

    Adam:  g <- g + weight_decay * p          (L2 penalty folded into the gradient)
    AdamW: p <- p * (1 - lr * weight_decay)   (decoupled weight decay, applied to p directly)
    m <- m + (1 - beta1) * (g - m)            (torch writes this as lerp)
    v <- beta2 * v + (1 - beta2) * g * g
    v_max <- max(v_max, v)                    (amsgrad only; then v_max replaces v below)
    denom <- sqrt(v) / sqrt(1 - beta2^t) + eps
    p <- p - (lr / (1 - beta1^t)) * m / denom

The order of operations matches torch's single-tensor CPU path, so results agree to
rounding in the last bits.
"""

from __future__ import annotations

import math

import whylab

from .optimizer import Optimizer, check_implementation_flags


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015), as ``torch.optim.Adam``.

    Args:
        params: parameters or parameter groups to optimize.
        lr: learning rate (>= 0).
        betas: decay rates of the first and second moment estimates, each in [0, 1).
        eps: term added to the denominator for numerical stability (>= 0).
        weight_decay: L2 penalty (Adam) or decoupled decay rate (AdamW), >= 0.
        amsgrad: use the running maximum of the second moment (Reddi et al., 2018).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: decay parameters directly (AdamW) instead of through g.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach=None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_implementation_flags(type(self).__name__, capturable, differentiable)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} (must be >= 0)")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps} (must be >= 0)")
        for index, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Invalid beta parameter at index {index}: {beta} (must be in [0, 1))"
                )
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay} (must be >= 0)")
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _init_state(self, param, amsgrad: bool) -> dict:
        state = self.state[param]
        if len(state) == 0:
            state["step"] = 0
            state["exp_avg"] = whylab.zeros_like(param)
            state["exp_avg_sq"] = whylab.zeros_like(param)
            if amsgrad:
                state["max_exp_avg_sq"] = whylab.zeros_like(param)
        return state

    def _update(self, param, group) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        weight_decay = group["weight_decay"]
        state = self._init_state(param, group["amsgrad"])

        grad = param.grad
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        step = state["step"]

        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        exp_avg = state["exp_avg"]
        exp_avg_sq = state["exp_avg_sq"]
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)

        bias_correction1 = 1 - beta1**step
        bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        step_size = lr / bias_correction1

        if group["amsgrad"]:
            max_exp_avg_sq = state["max_exp_avg_sq"]
            max_exp_avg_sq.copy_(whylab.maximum(max_exp_avg_sq, exp_avg_sq))
            second_moment = max_exp_avg_sq
        else:
            second_moment = exp_avg_sq
        denom = (second_moment.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        param.add_(exp_avg / denom, alpha=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019), as ``torch.optim.AdamW``.

    Same arguments as :class:`Adam`, but ``weight_decay`` defaults to 1e-2 and shrinks the
    parameters directly instead of being added to the gradient.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        check_implementation_flags("AdamW", capturable, differentiable)
        super().__init__(
            params,
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
        )


def _lerp_(start, end, weight: float) -> None:
    """In place ``start <- start + weight * (end - start)``, rounded the way torch's lerp is.

    torch evaluates the interpolation from whichever end is closer, which keeps the result
    exact at weight 0 and weight 1.
    """
    if weight < 0.5:
        start.add_(end - start, alpha=weight)
    else:
        start.copy_(end - (end - start) * (1 - weight))
