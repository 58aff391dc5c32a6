"""``torch.linalg``'s norms: ``vector_norm``, ``matrix_norm`` and ``norm``.

Each is composed of differentiable ops, so gradients flow. The matrix 2-norm and
nuclear norm need singular values: they are computed with NumPy's SVD and, as a
deviation from torch, carry no gradient (a clear error says so if one is needed).
"""

from __future__ import annotations

import math

import numpy as np

from whylab._tensor.tensor import Tensor, tensor_method
from whylab.autograd.grad_mode import is_grad_enabled


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None):
    """``(sum |x|^ord)^(1/ord)`` over ``dim`` (all elements when None); ord may be ±inf or 0."""
    if dtype is not None:
        x = x.to(dtype)
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point input, got {x.dtype}")
    dims = _dims(dim, x.ndim)
    magnitude = x.abs()
    if ord == math.inf:
        return magnitude.amax(dims, keepdim=keepdim)
    if ord == -math.inf:
        return magnitude.amin(dims, keepdim=keepdim)
    if ord == 0:
        return (magnitude != 0).to(x.dtype).sum(dims, keepdim=keepdim)
    if ord == 1:
        return magnitude.sum(dims, keepdim=keepdim)
    if ord == 2:
        return (x * x).sum(dims, keepdim=keepdim).sqrt()
    return magnitude.pow(ord).sum(dims, keepdim=keepdim).pow(1.0 / ord)


def _singular_values(x):
    if x.requires_grad and is_grad_enabled():
        raise NotImplementedError(
            "linalg: the gradient of the spectral and nuclear norms is not implemented"
        )
    values = np.linalg.svd(x.detach().numpy(), compute_uv=False)
    return Tensor._from_numpy_result(values)


def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):
    """Frobenius ("fro"), nuclear ("nuc"), 1, -1, inf, -inf, 2 or -2 norm of the matrices."""
    if dtype is not None:
        x = x.to(dtype)
    if x.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor must have at least 2 dims")
    rows, cols = (d % x.ndim for d in dim)
    if ord == "fro":
        return vector_norm(x, 2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):
        if (rows, cols) != (x.ndim - 2, x.ndim - 1):
            x = x.movedim((rows, cols), (-2, -1))
        values = _singular_values(x)
        result = (
            values.sum(-1) if ord == "nuc" else (values.amax(-1) if ord == 2 else values.amin(-1))
        )
        if keepdim:
            result = result.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols))
        return result
    if ord in (1, -1):
        sums = x.abs().sum(rows, keepdim=True)
        reduce = sums.amax if ord == 1 else sums.amin
        result = reduce(cols, keepdim=True)
    elif ord in (math.inf, -math.inf):
        sums = x.abs().sum(cols, keepdim=True)
        reduce = sums.amax if ord == math.inf else sums.amin
        result = reduce(rows, keepdim=True)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return result if keepdim else result.squeeze((rows, cols) if rows < cols else (cols, rows))


def norm(x, ord=None, dim=None, keepdim: bool = False, *, dtype=None):
    """A vector norm for 1-D ``dim``, a matrix norm for 2-D; ``ord=None`` means 2 / "fro"."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and x.ndim == 2):
        return matrix_norm(x, "fro" if ord is None else ord, dim or (-2, -1), keepdim, dtype=dtype)
    if ord is not None and dim is None and x.ndim != 1:
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D"
        )
    return vector_norm(x, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def tensor_norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """``torch.norm`` (and ``Tensor.norm``): the older entry point to the norms.

    ``p="fro"`` or a number is a vector norm over ``dim`` (all elements when None);
    ``p="nuc"`` is the nuclear norm of a matrix.
    """
    if p == "nuc":
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    order = 2 if p == "fro" else p
    if p == "fro" and dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(input, "fro", dim, keepdim, dtype=dtype)
    return vector_norm(input, order, dim, keepdim, dtype=dtype)


tensor_method("norm")(tensor_norm)
