"""The composites of the loss family: ``nll_loss`` (and ``nll_loss2d``, ``nll_loss_nd``)
and ``cross_entropy_loss``. Schemas and kernels: ``whylab/dispatch/native_functions.py``.

They follow PyTorch's split, so a trace or a graph reads like torch's:

* ``nll_loss_forward`` / ``nll_loss2d_forward`` are the kernels' operators:
  they return the loss and the total weight of the counted targets, and their
  backward nodes are ``NllLossBackward0`` / ``NllLoss2DBackward0``
  (derivatives.py), running ``nll_loss_backward`` / ``nll_loss2d_backward``;
* ``nll_loss`` and ``nll_loss2d`` are composites that keep the loss;
* ``nll_loss_nd`` is the composite ``F.nll_loss`` calls: (C,) and (N, C) go to
  ``nll_loss``, (N, C, H, W) to ``nll_loss2d``, other ranks are viewed as
  (N, C, 1, rest) first, as torch's ``nll_loss_nd`` does;
* ``cross_entropy_loss`` is the composite ``F.cross_entropy`` calls:
  ``log_softmax`` then ``nll_loss_nd`` for class indices (plus the
  label-smoothing term, built from ordinary ops), or a sum of products for
  class probabilities.

``reduction`` is PyTorch's enum, 0 none, 1 mean, 2 sum (``F.*`` take the
strings and translate). There are no top-level bindings (torch has none
either); reach them as ``whylab.ops.nll_loss`` or through ``whylab.nn.functional``.
"""

from __future__ import annotations

from math import prod

from whylab.dispatch.operator import ops
from whylab.kernels.cpu.loss import REDUCTION_MEAN, REDUCTION_NONE, REDUCTION_SUM


def nll_loss_composite(self, target, weight=None, reduction=1, ignore_index=-100):
    """The loss of ``nll_loss_forward``, without the total weight."""
    return ops.nll_loss_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss2d_composite(self, target, weight=None, reduction=1, ignore_index=-100):
    """The loss of ``nll_loss2d_forward``, without the total weight."""
    return ops.nll_loss2d_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss_nd_composite(self, target, weight=None, reduction=1, ignore_index=-100):
    """Pick ``nll_loss`` or ``nll_loss2d`` by rank, viewing other ranks as images."""
    ndim = len(self._sizes)
    if ndim < 1:
        raise ValueError("nll_loss: input must have at least one dimension (the classes)")
    if ndim <= 2:
        return ops.nll_loss(self, target, weight, reduction, ignore_index)
    if ndim == 4:
        return ops.nll_loss2d(self, target, weight, reduction, ignore_index)
    batch, classes = self._sizes[0], self._sizes[1]
    rest = tuple(self._sizes[2:])
    expected = (batch,) + rest
    if tuple(target._sizes) != expected:
        raise ValueError(
            f"nll_loss: target of shape {tuple(target._sizes)} does not match input of shape "
            f"{tuple(self._sizes)} (expected target shape {expected})"
        )
    # torch views a contiguous copy as images of height 1 (nodes CloneBackward0, ViewBackward0)
    images = ops.view(ops.contiguous(self), (batch, classes, 1, prod(rest)))
    labels = ops.view(ops.contiguous(target), (batch, 1, prod(rest)))
    out = ops.nll_loss2d(images, labels, weight, reduction, ignore_index)
    return out.view(expected) if reduction == REDUCTION_NONE else out


def _mul_scalar(tensor, number):
    return getattr(ops, "mul.Scalar")(tensor, number)


def _div_scalar(tensor, number):
    return getattr(ops, "div.Scalar")(tensor, number)


def _add_scalar(tensor, number):
    return getattr(ops, "add.Scalar")(tensor, number)


def _class_dim(input) -> int:
    ndim = len(input._sizes)
    if ndim == 0:
        raise ValueError("cross_entropy: input must have at least one dimension (the classes)")
    return 0 if ndim == 1 else 1


def _along_classes(values, input, class_dim):
    """``values`` (one per class) shaped to broadcast along ``input``'s class dimension."""
    shape = [1] * input.ndim
    shape[class_dim] = input._sizes[class_dim]
    return values.reshape(shape)


def _probability_loss(log_probs, target, weight, reduction, smoothing, class_dim):
    """Cross-entropy against class probabilities (the target may require grad too)."""
    if tuple(target._sizes) != tuple(log_probs._sizes):
        raise ValueError(
            f"cross_entropy: probability target of shape {tuple(target._sizes)} must match "
            f"input of shape {tuple(log_probs._sizes)}"
        )
    classes = log_probs._sizes[class_dim]
    if smoothing > 0:
        target = _add_scalar(_mul_scalar(target, 1 - smoothing), smoothing / classes)
    terms = log_probs * target
    if weight is not None:
        terms = terms * _along_classes(weight, log_probs, class_dim)
    if reduction == REDUCTION_NONE:
        return -terms.sum(class_dim)
    if reduction == REDUCTION_SUM:
        return -terms.sum()
    return _div_scalar(-terms.sum(), log_probs.numel() // classes)


def _smoothed_index_loss(log_probs, target, weight, reduction, ignore_index, smoothing, class_dim):
    """``(1 - s) * nll + (s / C) * sum over classes of -log p``, torch's label smoothing.

    The smoothing term skips ignored targets; for "mean" it is divided by the same
    normaliser as the nll term (the summed weight of the counted targets).
    """
    nll = ops.nll_loss_nd(log_probs, target, weight, reduction, ignore_index)
    classes = log_probs._sizes[class_dim]
    ignored = target == ignore_index
    if weight is not None:
        smooth = -(log_probs * _along_classes(weight, log_probs, class_dim)).sum(class_dim)
    else:
        smooth = -log_probs.sum(class_dim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == REDUCTION_SUM:
        smooth = smooth.sum()
    elif reduction == REDUCTION_MEAN:
        if weight is not None:
            # the weight of each counted target: class 0's (always valid) stands in for
            # ignored ones and is masked out, so no shape depends on the data (Meta works)
            counted = ignored.logical_not().reshape(-1)
            picked = weight.gather(0, target.masked_fill(ignored, 0).reshape(-1)) * counted
            smooth = smooth.sum() / picked.sum()
        else:
            smooth = smooth.sum() / ignored.logical_not().sum()
    return _mul_scalar(nll, 1 - smoothing) + _mul_scalar(smooth, smoothing / classes)


def cross_entropy_composite(
    self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0
):
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(
            f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    class_dim = _class_dim(self)
    log_probs = self.log_softmax(class_dim)
    if target.is_floating_point():
        return _probability_loss(log_probs, target, weight, reduction, label_smoothing, class_dim)
    if label_smoothing > 0:
        return _smoothed_index_loss(
            log_probs, target, weight, reduction, ignore_index, label_smoothing, class_dim
        )
    return ops.nll_loss_nd(log_probs, target, weight, reduction, ignore_index)
