"""Stateless neural-network functions, with torch.nn.functional's names and semantics.

Each function is a short composition of whylab's differentiable tensor operators, or
one operator of its own where PyTorch has one (``linear``, ``nll_loss``,
``cross_entropy``: see ``whylab/dispatch/native/linalg.py`` and ``loss.py``), so a
dispatch trace shows them and their gradients - and gradients of gradients - come from
the engine's one table of derivative formulas.
"""

from __future__ import annotations

import warnings

import whylab
from whylab._core import unsupported as _unsupported
from whylab.nn.activation_functions import (  # noqa: F401  (part of this namespace)
    celu,
    elu,
    gelu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    logsigmoid,
    mish,
    normalize,
    prelu,
    relu6,
    selu,
    silu,
    softmin,
    softplus,
    softsign,
    tanhshrink,
)
from whylab.nn.batchnorm import batch_norm  # noqa: F401  (part of this namespace)
from whylab.nn.conv_functions import (  # noqa: F401  (part of this namespace)
    adaptive_avg_pool2d,
    avg_pool2d,
    conv1d,
    conv2d,
    max_pool2d,
    pad,
)
from whylab.nn.loss_functions import (  # noqa: F401  (part of this namespace)
    REDUCTIONS,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    check_reduction,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)

# torch.nn.functional re-exports these tensor functions under the same names.
one_hot = whylab.one_hot
sigmoid = whylab.sigmoid
tanh = whylab.tanh


# --------------------------------------------------------------------------- activations
def relu(input, inplace: bool = False):
    """Elementwise ``max(x, 0)``; ``inplace=True`` overwrites ``input``."""
    return input.relu_() if inplace else input.relu()


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` for ``weight`` of shape (out_features, in_features).

    ``input`` has shape (*, in_features); the result has shape (*, out_features).
    The ``linear`` operator computes it as torch does: one ``addmm`` for a 2-D input
    with a bias (node ``AddmmBackward0``), else a ``matmul`` with ``weight.t()``.
    """
    return whylab.ops.linear(input, weight, bias)


def implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """torch's deprecated choice of dim when none is given: 0 for 0-, 1- and 3-D, else 1."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (the engine's softmax op), computed in ``dtype``.

    Without ``dim`` torch's deprecated implicit choice applies, with its warning.
    """
    if dim is None:
        dim = implicit_softmax_dim("softmax", input.ndim, _stacklevel)
    return whylab.softmax(input, dim, dtype)


def log_softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """``log(softmax(x))`` along ``dim``, computed stably (the engine's log_softmax op)."""
    if dim is None:
        dim = implicit_softmax_dim("log_softmax", input.ndim, _stacklevel)
    return whylab.log_softmax(input, dim, dtype)


# --------------------------------------------------------------------------- losses
def _reduction_enum(op: str, reduction: str) -> int:
    """torch's Reduction enum for the operators: none 0, mean 1, sum 2."""
    check_reduction(op, reduction)
    return REDUCTIONS.index(reduction)


def nll_loss(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean"):
    """Negative log-likelihood of class-index targets, from log-probabilities ``input``.

    ``input`` is (C,), (N, C) or (N, C, d1, ...); ``target`` holds class indices of shape
    (), (N,) or (N, d1, ...). With ``weight`` each element counts ``weight[target]``;
    elements whose target equals ``ignore_index`` count zero. ``"mean"`` divides by the sum
    of the counted weights (the number of non-ignored elements without ``weight``), so a
    batch whose targets are all ignored gives nan, as in torch. The ``nll_loss_nd``
    operator picks ``nll_loss`` (node ``NllLossBackward0``) or, from three dimensions on,
    ``nll_loss2d`` (``NllLoss2DBackward0``), as torch does.
    """
    reduction_enum = _reduction_enum("nll_loss", reduction)
    return whylab.ops.nll_loss_nd(input, target, weight, reduction_enum, ignore_index)


def cross_entropy(
    input,
    target,
    weight=None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
):
    """Cross-entropy between logits ``input`` and ``target``: ``log_softmax``, then the loss.

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
    reduction_enum = _reduction_enum("cross_entropy", reduction)
    return whylab.ops.cross_entropy_loss(
        input, target, weight, reduction_enum, ignore_index, label_smoothing
    )


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


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels: dimension 1 of (N, C, H, W), or 0 of unbatched (C, H, W)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead.",
            UserWarning,
            stacklevel=2,
        )
        if input.ndim < 2:
            raise ValueError(f"dropout2d: expected 3-D or 4-D input, got {input.ndim}-D")
    if not training or p == 0.0:
        return input
    # (N, C, H, W) and (C, H, W) drop whole channels; other inputs, as in torch, treat
    # their first two dimensions as (N, C).
    kept_dims = input.ndim - 2 if input.ndim in (3, 4) else 2
    channels = tuple(input.shape[:kept_dims]) + (1,) * (input.ndim - kept_dims)
    keep = whylab.rand(*channels, dtype=input.dtype) >= p
    scale = keep.to(input.dtype) / (1.0 - p) if p < 1.0 else whylab.zeros((), dtype=input.dtype)
    return input.mul_(scale) if inplace else input * scale


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing ``normalized_shape`` dimensions:
    ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance (the
    ``native_layer_norm`` operator, node ``NativeLayerNormBackward0``, as in torch)."""
    normalized_shape = (
        (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    )
    return whylab.ops.layer_norm(input, normalized_shape, weight, bias, eps)


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


# A torch.nn name whylab lacks fails with an error naming the torch API.
__getattr__ = _unsupported.module_getattr("torch.nn.functional", "whylab.nn.functional")
