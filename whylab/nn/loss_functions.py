"""Regression and binary losses of ``nn.functional``, composed of differentiable ops.

Every function takes torch's ``reduction`` ("mean", "sum" or "none"). When input
and target shapes differ, torch broadcasts them with a warning; so do these
(the class-index losses, ``nll_loss`` and ``cross_entropy``, are operators:
see :mod:`whylab.nn.functional`).
"""

from __future__ import annotations

import warnings

import whylab
from whylab.nn.activation_functions import stable_softplus

REDUCTIONS = ("none", "mean", "sum")


def check_reduction(op: str, reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def reduce(loss, reduction: str):
    """Apply a reduction to elementwise losses."""
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _warn_if_broadcast(op: str, input, target) -> None:
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"{op}: Using a target size ({tuple(target.shape)}) that is different to the input "
            f"size ({tuple(input.shape)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def mse_loss(input, target, reduction: str = "mean"):
    """Squared difference ``(input - target) ** 2``, reduced."""
    check_reduction("mse_loss", reduction)
    _warn_if_broadcast("mse_loss", input, target)
    # the mse_loss operator (node MseLossBackward0) on the broadcast operands, as torch's
    expanded_input, expanded_target = whylab.broadcast_tensors(input, target)
    return whylab.ops.mse_loss(expanded_input, expanded_target, REDUCTIONS.index(reduction))


def l1_loss(input, target, reduction: str = "mean"):
    """Absolute difference ``|input - target|``, reduced."""
    check_reduction("l1_loss", reduction)
    _warn_if_broadcast("l1_loss", input, target)
    return reduce((input - target).abs(), reduction)


def smooth_l1_loss(input, target, reduction: str = "mean", beta: float = 1.0):
    """``0.5 d² / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta = 0``: L1)."""
    check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta, got {beta}")
    _warn_if_broadcast("smooth_l1_loss", input, target)
    distance = (input - target).abs()
    if beta == 0:
        return reduce(distance, reduction)
    quadratic = distance * distance * (0.5 / beta)
    return reduce(whylab.where(distance < beta, quadratic, distance - 0.5 * beta), reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0):
    """``0.5 d²`` where ``|d| <= delta``, else ``delta (|d| - 0.5 delta)``."""
    check_reduction("huber_loss", reduction)
    if delta <= 0:
        raise RuntimeError(
            f"huber_loss does not support non-positive values for delta, got {delta}"
        )
    _warn_if_broadcast("huber_loss", input, target)
    distance = (input - target).abs()
    linear = (distance - 0.5 * delta) * delta
    return reduce(whylab.where(distance <= delta, 0.5 * distance * distance, linear), reduction)


def binary_cross_entropy(input, target, weight=None, reduction: str = "mean"):
    """``-(y log x + (1 - y) log(1 - x))`` for probabilities ``x`` (logs clamped at -100, as
    torch clamps them)."""
    check_reduction("binary_cross_entropy", reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size "
            f"({tuple(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    log_x = input.log().clamp(min=-100)
    log_not_x = (1 - input).log().clamp(min=-100)
    loss = -(target * log_x + (1 - target) * log_not_x)
    if weight is not None:
        loss = loss * weight
    return reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, reduction: str = "mean", pos_weight=None
):
    """Binary cross-entropy of ``sigmoid(input)``, computed stably from the logits.

    ``(1 - y) x + l softplus(-x)`` with ``l = 1 + (pos_weight - 1) y``, which never takes
    the log of a rounded probability.
    """
    check_reduction("binary_cross_entropy_with_logits", reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"Target size ({tuple(target.shape)}) must be the same as input size "
            f"({tuple(input.shape)})"
        )
    softplus_of_minus_x = stable_softplus(-input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * softplus_of_minus_x
    else:
        loss = (1 - target) * input + softplus_of_minus_x
    if weight is not None:
        loss = loss * weight
    return reduce(loss, reduction)


def kl_div(input, target, reduction: str = "mean", log_target: bool = False):
    """KL divergence with ``input`` as log-probabilities: ``target (log target - input)``.

    ``reduction="batchmean"`` divides the sum by the batch size (the mathematically right
    mean; torch's ``"mean"`` divides by the number of elements).
    """
    if reduction not in REDUCTIONS + ("batchmean",):
        raise ValueError(f"kl_div: reduction must be one of {REDUCTIONS + ('batchmean',)}")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        safe_log = whylab.where(target > 0, target, 1.0).log()
        loss = target * (safe_log - input)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return reduce(loss, reduction)
