"""Stateless neural-network functions, with torch.nn.functional's names and semantics.

Most functions here are short compositions of whylab's differentiable tensor ops, so their
gradients - and gradients of gradients - come from the engine's one table of derivative
formulas (``log_softmax`` and ``softmax`` are the engine's own ops). Two are graph nodes of
their own, for the reasons PyTorch makes them native ops:

* :func:`linear` is one node (torch records one ``AddmmBackward``) instead of three
  (transpose, matmul, broadcast add). Its backward computes the weight's gradient as
  ``grad.T @ input``, which lands in the weight's own row-major layout, and skips the
  input's gradient when the input (typically the data batch) does not require grad;
* the class-index losses (:func:`nll_loss`, :func:`cross_entropy`) are one node that forms
  ``-sum(coefficients * log_probs)`` with a constant coefficient array holding the class
  weights at the target positions (and the label-smoothing mass).

Both backwards are written with whylab ops, so they can themselves be differentiated.
:func:`cross_entropy` is ``log_softmax`` followed by that loss node: two nodes, as in torch.
"""

from __future__ import annotations

import numpy as np

import whylab
from whylab.autograd import Function

_REDUCTIONS = ("none", "mean", "sum")


# --------------------------------------------------------------------------- helpers
def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _numpy(tensor) -> np.ndarray:
    """The tensor's values as a NumPy array (a view, not a copy), for reading only.

    A CPU tensor keeps that view as ``_array``; reading it directly skips building a
    ``.data`` alias (a new Tensor, about 1.5 us) several times per training step. Other
    devices go through ``.data.numpy()``, which raises its error naming the device.
    """
    if tensor.device.type != "cpu":
        return tensor.data.numpy()
    return tensor._array


# --------------------------------------------------------------------------- activations
def relu(input, inplace: bool = False):
    """Elementwise ``max(x, 0)``; ``inplace=True`` overwrites ``input``."""
    # whylab has no relu_ op; clamping from below at 0 in place computes the same values.
    return input.clamp_(min=0) if inplace else input.relu()


def _rows_times_weight_t(rows: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``rows @ weight.T``, computed as ``(weight @ rows.T).T`` where OpenBLAS is faster so.

    Measured with one thread (NumPy 2.4, OpenBLAS): in float32, with a few rows and many
    output features, OpenBLAS's ``rows @ weight.T`` is up to 2x slower than the same product
    taken the other way round (batch 16 through a 784->256 layer: 160 us against 85 us,
    which is what torch's linear takes). Elsewhere (float64, one row, or as many rows as
    output features) the two forms cost the same or the direct one wins, so it is kept.
    The product taken that way round comes out column-major; it is copied to row-major
    (a few microseconds) so that the output is contiguous, as torch's is.
    """
    row_count, out_features = rows.shape[0], weight.shape[0]
    if rows.dtype == np.float32 and 8 <= row_count < out_features // 2:
        return np.ascontiguousarray(np.dot(weight, rows.T).T)
    return np.dot(rows, weight.T)


class _Linear(Function):
    """``input @ weight.T + bias`` as one graph node (any number of leading dimensions)."""

    @staticmethod
    def forward(ctx, input, weight, bias):
        rows = _numpy(input).reshape(-1, weight.shape[1])
        output = _rows_times_weight_t(rows, _numpy(weight))
        if bias is not None:
            output += _numpy(bias)
        ctx.save_for_backward(input, weight)
        ctx.has_bias = bias is not None
        return whylab.from_numpy(output.reshape(*input.shape[:-1], weight.shape[0]))

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        # Work on (rows, features) matrices; only inputs with other than 2 dims need reshaping.
        out_features, in_features = weight.shape
        grad_rows = grad_output
        input_rows = input
        if input.dim() != 2:
            grad_rows = grad_output.reshape(-1, out_features)
            input_rows = input.reshape(-1, in_features)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_rows.mm(weight)
            if input.dim() != 2:
                grad_input = grad_input.reshape(input.shape)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_rows.t().mm(input_rows)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_rows.sum(0)
        return grad_input, grad_weight, grad_bias


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` for ``weight`` of shape (out_features, in_features).

    ``input`` has shape (*, in_features); the result has shape (*, out_features).
    """
    if weight.dim() != 2 or input.dim() == 0 or input.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"linear: input of shape {tuple(input.shape)} does not fit weight of shape "
            f"{tuple(weight.shape)} (need input (*, in_features) and weight "
            "(out_features, in_features))"
        )
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(
            f"linear: bias of shape {tuple(bias.shape)} does not fit weight of shape "
            f"{tuple(weight.shape)} (need ({weight.shape[0]},))"
        )
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and tensor.dtype != input.dtype:
            raise RuntimeError(
                f"linear: input and {name} must have the same dtype, but got {input.dtype} "
                f"and {tensor.dtype}"
            )
    return _Linear.apply(input, weight, bias)


def softmax(input, dim: int):
    """``exp(x) / sum(exp(x))`` along ``dim`` (the engine's softmax op)."""
    return whylab.softmax(input, dim)


def log_softmax(input, dim: int):
    """``x - log(sum(exp(x)))`` along ``dim``, computed stably (the engine's op)."""
    return whylab.log_softmax(input, dim)


# --------------------------------------------------------------------------- losses
def _class_layout(op: str, input, target_shape: tuple) -> tuple[int, int, tuple]:
    """Return ``(class_dim, n_classes, expected_target_shape)`` for class-index targets."""
    shape = tuple(input.shape)
    if len(shape) == 0:
        raise ValueError(f"{op}: input must have at least one dimension (the classes)")
    class_dim = 0 if len(shape) == 1 else 1
    expected = shape[:class_dim] + shape[class_dim + 1 :]
    if tuple(target_shape) != expected:
        raise ValueError(
            f"{op}: target of shape {tuple(target_shape)} does not match input of shape "
            f"{shape} (expected target shape {expected})"
        )
    return class_dim, shape[class_dim], expected


class _NegatedWeightedSum(Function):
    """``-sum(coefficients * log_probs)`` over the class dimension, optionally summed over
    all elements, as one graph node.

    ``coefficients`` is a constant array shaped like ``log_probs``. For nll_loss it holds
    ``weight[t_i]`` at each element's target class ``t_i`` and zero elsewhere (so the sum
    *picks* ``log_probs[i, t_i]``); cross_entropy's label smoothing adds
    ``weight[c] * smoothing / C`` at every class ``c``; for ``"mean"`` everything is already
    divided by the normaliser. The backward, ``-grad * coefficients``, is linear in the
    upstream gradient and written with whylab ops, so double backward works.
    """

    @staticmethod
    def forward(ctx, log_probs, coefficients, class_dim, reduce_all):
        per_element = -(_numpy(log_probs) * coefficients).sum(axis=class_dim)
        result = per_element.sum() if reduce_all else per_element
        ctx.class_dim = class_dim
        ctx.reduce_all = reduce_all
        ctx.coefficients = coefficients
        return whylab.from_numpy(np.asarray(result))

    @staticmethod
    def backward(ctx, grad_output):
        if not ctx.reduce_all:
            grad_output = grad_output.unsqueeze(ctx.class_dim)
        return grad_output * whylab.from_numpy(-ctx.coefficients), None, None, None


def _class_index_loss(op, log_probs, target, weight, ignore_index, reduction, smoothing):
    """Shared body of nll_loss and cross_entropy with class-index targets.

    Builds the coefficient array described in :class:`_NegatedWeightedSum`:
    ``(1 - smoothing) * w[t_i] * onehot(t_i) + (smoothing / C) * w``, zero on ignored
    elements, divided by ``sum_i w[t_i]`` over non-ignored elements for ``"mean"`` (torch
    normalises the smoothing term by that same sum).
    """
    class_dim, n_classes, _ = _class_layout(op, log_probs, tuple(target.shape))
    labels = _numpy(target)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"{op}: class-index targets must be integers, got {labels.dtype}")
    keep = labels != ignore_index
    out_of_range = keep & ((labels < 0) | (labels >= n_classes))
    if out_of_range.any():
        raise IndexError(
            f"{op}: Target {labels[out_of_range].flat[0]} is out of bounds for {n_classes} "
            "classes"
        )
    if weight is None and smoothing == 0 and log_probs.dim() == 2 and keep.all():
        return _plain_class_index_loss(log_probs, labels, reduction)
    safe_labels = np.where(keep, labels, 0)
    class_weight = np.ones(n_classes) if weight is None else _numpy(weight).astype(np.float64)
    element_weight = np.where(keep, class_weight[safe_labels], 0.0)

    # class_ids broadcasts along the class dimension: (1, C, 1, ...) or (C,) for 1-D input.
    broadcast = [1] * log_probs.dim()
    broadcast[class_dim] = n_classes
    class_ids = np.arange(n_classes).reshape(broadcast)
    is_target = class_ids == np.expand_dims(safe_labels, class_dim)
    coefficients = is_target * np.expand_dims(element_weight * (1.0 - smoothing), class_dim)
    if smoothing > 0:
        counted = np.expand_dims(keep, class_dim)
        coefficients += counted * class_weight.reshape(broadcast) * (smoothing / n_classes)
    total_weight = element_weight.sum()
    if reduction == "mean" and total_weight != 0:
        coefficients /= total_weight
    coefficients = coefficients.astype(_numpy(log_probs).dtype)
    loss = _NegatedWeightedSum.apply(log_probs, coefficients, class_dim, reduction != "none")
    if reduction == "mean" and total_weight == 0:
        # A mean over no counted targets: torch returns nan, with a zero gradient.
        loss = loss + float("nan")
    return loss


def _plain_class_index_loss(log_probs, labels, reduction):
    """The common case of :func:`_class_index_loss`: (N, C) input, no class weights, no
    smoothing, no ignored targets. The coefficients are then one-hot rows (scaled by
    ``1 / N`` for ``"mean"``), built directly instead of through the general formula."""
    rows = labels.shape[0]
    coefficients = np.zeros(tuple(log_probs.shape), dtype=_numpy(log_probs).dtype)
    coefficients[np.arange(rows), labels] = 1.0 / rows if reduction == "mean" and rows else 1.0
    loss = _NegatedWeightedSum.apply(log_probs, coefficients, 1, reduction != "none")
    if reduction == "mean" and rows == 0:
        loss = loss + float("nan")  # a mean over no targets, as in the general path
    return loss


def nll_loss(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean"):
    """Negative log-likelihood of class-index targets, from log-probabilities ``input``.

    ``input`` is (C,), (N, C) or (N, C, d1, ...); ``target`` holds class indices of shape
    (), (N,) or (N, d1, ...). With ``weight`` each element counts ``weight[target]``;
    elements whose target equals ``ignore_index`` count zero. ``"mean"`` divides by the sum
    of the counted weights (the number of non-ignored elements without ``weight``), so a
    batch whose targets are all ignored gives nan, as in torch.
    """
    _check_reduction("nll_loss", reduction)
    return _class_index_loss("nll_loss", input, target, weight, ignore_index, reduction, 0.0)


def cross_entropy(
    input,
    target,
    weight=None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
):
    """Cross-entropy between logits ``input`` and ``target``, fused as in torch.

    ``input`` holds unnormalised scores, (C,), (N, C) or (N, C, d1, ...). ``target`` is either
    class indices (shape of ``input`` without the class dimension) or class probabilities
    (same shape as ``input``, floating point).

    With class indices the loss is ``nll_loss(log_softmax(input))``; ``label_smoothing``
    ``s`` mixes in ``s / C`` times the (weighted) sum of all classes' negative
    log-probabilities, and for ``"mean"`` that term is divided by the same normaliser as the
    main term - the sum of ``weight[target]`` over non-ignored elements. Ignored elements
    contribute nothing to either term.

    With probabilities, smoothing replaces ``p`` by ``p * (1 - s) + s / C``; ``"mean"``
    divides by the number of elements ``N * d1 * ...`` (not by the weights).
    """
    _check_reduction("cross_entropy", reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(
            f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    if input.dim() == 0:
        raise ValueError("cross_entropy: input must have at least one dimension (the classes)")
    class_dim = 0 if input.dim() == 1 else 1
    log_probs = log_softmax(input, class_dim)
    if target.is_floating_point():
        return _probability_target_loss(log_probs, target, weight, reduction, label_smoothing)
    return _class_index_loss(
        "cross_entropy", log_probs, target, weight, ignore_index, reduction, label_smoothing
    )


def _probability_target_loss(log_probs, target, weight, reduction, smoothing):
    """Cross-entropy against class probabilities, composed of differentiable ops (the
    target can require grad too)."""
    if tuple(target.shape) != tuple(log_probs.shape):
        raise ValueError(
            f"cross_entropy: probability target of shape {tuple(target.shape)} must match "
            f"input of shape {tuple(log_probs.shape)}"
        )
    class_dim = 0 if log_probs.dim() == 1 else 1
    n_classes = log_probs.shape[class_dim]
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / n_classes
    terms = log_probs * target
    if weight is not None:
        broadcast = [1] * log_probs.dim()
        broadcast[class_dim] = n_classes
        terms = terms * weight.reshape(broadcast)
    if reduction == "none":
        return -terms.sum(class_dim)
    if reduction == "sum":
        return -terms.sum()
    return -terms.sum() / (log_probs.numel() // n_classes)


def mse_loss(input, target, reduction: str = "mean"):
    """Mean (or summed, or elementwise) squared difference ``(input - target) ** 2``."""
    _check_reduction("mse_loss", reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"mse_loss: input of shape {tuple(input.shape)} and target of shape "
            f"{tuple(target.shape)} differ; broadcasting here is almost always a bug"
        )
    difference = input - target
    squared = difference * difference
    if reduction == "none":
        return squared
    return squared.sum() if reduction == "sum" else squared.mean()


# --------------------------------------------------------------------------- regularisation
def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability ``p`` and scale survivors by ``1 / (1 - p)``
    (so the expected value is unchanged); the identity when ``training`` is False."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        scale = whylab.zeros((), dtype=input.dtype)
    else:
        keep = whylab.rand(*input.shape, dtype=input.dtype) >= p
        scale = keep.to(input.dtype) / (1.0 - p)
    return input.mul_(scale) if inplace else input * scale


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing ``normalized_shape`` dimensions:
    ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance."""
    normalized_shape = (
        (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    )
    count = len(normalized_shape)
    if count == 0 or tuple(input.shape[-count:]) != normalized_shape or input.dim() < count:
        raise RuntimeError(
            f"layer_norm: input of shape {tuple(input.shape)} does not end with "
            f"normalized_shape {normalized_shape}"
        )
    dims = tuple(range(-count, 0))
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    variance = (centered * centered).mean(dims, keepdim=True)
    output = centered * (variance + eps).rsqrt()
    if weight is not None:
        output = output * weight
    if bias is not None:
        output = output + bias
    return output


def embedding(input, weight, padding_idx: int | None = None):
    """Rows of ``weight`` picked by the integer tensor ``input`` (shape ``input.shape + (D,)``).

    The row ``padding_idx`` is returned as stored but receives no gradient.
    """
    if input.is_floating_point():
        raise TypeError(f"embedding: indices must be integers, got {input.dtype}")
    output = weight[input]
    if padding_idx is None:
        return output
    padding_idx = padding_idx % weight.shape[0]
    trainable = (input != padding_idx).unsqueeze(-1)
    return whylab.where(trainable, output, output.detach())
