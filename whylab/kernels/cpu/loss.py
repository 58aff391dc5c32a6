"""Loss kernels in NumPy: the negative log-likelihood of class-index targets.

As in PyTorch, ``nll_loss_forward`` returns two tensors, the loss and the total
weight of the counted targets (the normaliser of ``"mean"``), and
``nll_loss_backward`` takes that total weight back. ``nll_loss2d_*`` are the
same kernels for images, (N, C, H, W) against (N, H, W); PyTorch keeps them as
separate operators (its backward node is ``NllLoss2DBackward0``), and so do we.

``reduction`` is PyTorch's enum: 0 none, 1 mean, 2 sum.
"""

from __future__ import annotations

import numpy as np

from whylab.kernels.cpu.common import wrap_contiguous as wrap

REDUCTION_NONE, REDUCTION_MEAN, REDUCTION_SUM = 0, 1, 2


def check_nll_loss(op: str, self, target, weight, reduction, image: bool) -> int:
    """Shape and dtype checks shared with the meta kernels; returns the class count."""
    if reduction not in (REDUCTION_NONE, REDUCTION_MEAN, REDUCTION_SUM):
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    shape, target_shape = tuple(self._sizes), tuple(target._sizes)
    if image:
        if len(shape) != 4:
            raise ValueError(f"{op}: input must be 4-D (N, C, H, W), got shape {shape}")
        expected = (shape[0],) + shape[2:]
    else:
        if len(shape) not in (1, 2):
            raise ValueError(f"{op}: input must be 1-D (C) or 2-D (N, C), got shape {shape}")
        expected = shape[:-1]
    if target_shape != expected:
        raise ValueError(
            f"{op}: target of shape {target_shape} does not match input of shape {shape} "
            f"(expected target shape {expected})"
        )
    if target.dtype.is_floating_point or target.dtype.name == "bool":
        raise TypeError(f"{op}: class-index targets must be integers, got {target.dtype}")
    if not self.dtype.is_floating_point:
        raise TypeError(f"{op}: input must be floating point, got {self.dtype}")
    classes = shape[0 if len(shape) == 1 else 1]
    if weight is not None and tuple(weight._sizes) != (classes,):
        raise ValueError(
            f"{op}: weight of shape {tuple(weight._sizes)} must hold one value per class "
            f"({classes},)"
        )
    return classes


def _picked(op: str, self, target, weight, ignore_index):
    """Per-target arrays: the class axis moved last, the targets (0 where ignored), their
    weights (0 where ignored), whether each is counted, and where the class axis was."""
    ndim = len(self._sizes)
    class_axis = 0 if ndim == 1 else 1
    # (N, C) and (C,) already have the classes last: no moveaxis needed.
    log_probs = self._array if ndim <= 2 else np.moveaxis(self._array, class_axis, -1)
    labels = np.asarray(target._array).astype(np.int64, copy=False)
    classes = log_probs.shape[-1]
    counted = labels != ignore_index
    bad = counted & ((labels < 0) | (labels >= classes))
    if bad.any():
        raise IndexError(
            f"{op}: Target {labels[bad].flat[0]} is out of bounds for {classes} classes"
        )
    safe = np.where(counted, labels, 0)
    class_weight = np.ones(classes, dtype=log_probs.dtype) if weight is None else weight._array
    element_weight = np.where(counted, class_weight[safe], 0).astype(log_probs.dtype)
    return log_probs, safe, element_weight, counted, class_axis


def _forward(op, self, target, weight, reduction, ignore_index, image):
    check_nll_loss(op, self, target, weight, reduction, image)
    log_probs, safe, element_weight, _, _ = _picked(op, self, target, weight, ignore_index)
    chosen = np.take_along_axis(log_probs, safe[..., None], axis=-1)[..., 0]
    losses = -chosen * element_weight
    total = element_weight.sum(dtype=log_probs.dtype)
    if reduction == REDUCTION_NONE:
        output = losses
    elif reduction == REDUCTION_SUM:
        output = losses.sum(dtype=log_probs.dtype)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):  # no counted target: nan, as torch
            output = losses.sum(dtype=log_probs.dtype) / total
    return wrap(np.asarray(output, dtype=log_probs.dtype), self.dtype), wrap(
        np.asarray(total, dtype=log_probs.dtype), self.dtype
    )


def _backward(op, grad_output, self, target, weight, reduction, ignore_index, total_weight, image):
    check_nll_loss(op, self, target, weight, reduction, image)
    picked = _picked(op, self, target, weight, ignore_index)
    log_probs, safe, element_weight, counted, class_axis = picked
    upstream = np.asarray(grad_output._array, dtype=log_probs.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        if reduction == REDUCTION_MEAN:
            upstream = upstream / np.asarray(total_weight._array, dtype=log_probs.dtype)
        # Ignored targets get exactly zero, even when the mean's normaliser is 0.
        values = np.where(counted, -element_weight * upstream, 0).astype(log_probs.dtype)
    grad = np.zeros(log_probs.shape, dtype=log_probs.dtype)
    np.put_along_axis(grad, safe[..., None], values[..., None], axis=-1)
    if grad.ndim > 2:
        grad = np.moveaxis(grad, -1, class_axis)
    return wrap(grad, self.dtype)


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    return _forward("nll_loss", self, target, weight, reduction, ignore_index, image=False)


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _backward(
        "nll_loss", grad_output, self, target, weight, reduction, ignore_index, total_weight, False
    )


def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    return _forward("nll_loss2d", self, target, weight, reduction, ignore_index, image=True)


def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _backward(
        "nll_loss2d", grad_output, self, target, weight, reduction, ignore_index, total_weight, True
    )
