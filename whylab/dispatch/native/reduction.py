"""The hand-written parts of the reduction family: ``max``/``min`` with their overloads,
``var``/``std`` with ``unbiased``, and ``all``/``any`` (composites of ``eq``/``sum``).

Schemas, kernels and names: ``whylab/dispatch/native_functions.py``.
"""

from __future__ import annotations

from collections import namedtuple

from whylab.dispatch.native._registry import numpy_names
from whylab.dispatch.operator import ops

#: ``max(dim)`` and ``min(dim)`` return this named tuple. Deviation: PyTorch returns
#: ``torch.return_types.max``; the fields (``values``, ``indices``) are the same.
MaxMin = namedtuple("MaxMin", ["values", "indices"])


def _correction(op, unbiased, correction):
    if correction is not None and unbiased is not None:
        raise RuntimeError(f"{op}: can't specify both unbiased and correction")
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def max(input, dim=None, keepdim=False, **numpy_keywords):  # noqa: A001  (torch.max)
    """``max(t)`` is the largest element; ``max(t, dim)`` returns ``(values, indices)``
    (operator ``max.dim``); ``max(t, other_tensor)`` is ``maximum``."""
    if numpy_keywords:
        dim, keepdim = numpy_names("max", numpy_keywords, dim, None, keepdim)
    if dim is None:
        return ops.max(input)
    if not isinstance(dim, int):
        return ops.maximum(input, dim)
    return MaxMin(*getattr(ops, "max.dim")(input, dim, keepdim))


def min(input, dim=None, keepdim=False, **numpy_keywords):  # noqa: A001  (torch.min)
    """``min(t)``, ``min(t, dim)`` -> ``(values, indices)``, or ``minimum`` with a tensor."""
    if numpy_keywords:
        dim, keepdim = numpy_names("min", numpy_keywords, dim, None, keepdim)
    if dim is None:
        return ops.min(input)
    if not isinstance(dim, int):
        return ops.minimum(input, dim)
    return MaxMin(*getattr(ops, "min.dim")(input, dim, keepdim))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, **numpy_keywords):
    """Variance with divisor ``N - correction`` (``unbiased=False`` means correction 0)."""
    if numpy_keywords:
        dim, keepdim = numpy_names("var", numpy_keywords, dim, None, keepdim)
    return ops.var(input, dim, _correction("var", unbiased, correction), keepdim)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, **numpy_keywords):
    """Standard deviation with divisor ``N - correction``."""
    if numpy_keywords:
        dim, keepdim = numpy_names("std", numpy_keywords, dim, None, keepdim)
    return ops.std(input, dim, _correction("std", unbiased, correction), keepdim)


def all_(input, dim=None, keepdim=False, **numpy_keywords):
    """Whether every element (along ``dim``) is non-zero; a bool tensor."""
    if numpy_keywords:
        dim, keepdim = numpy_names("all", numpy_keywords, dim, None, keepdim)
    zero = input == 0
    return (zero.sum() if dim is None else zero.sum(dim, keepdim)) == 0


def any_(input, dim=None, keepdim=False, **numpy_keywords):
    """Whether some element (along ``dim``) is non-zero; a bool tensor."""
    if numpy_keywords:
        dim, keepdim = numpy_names("any", numpy_keywords, dim, None, keepdim)
    nonzero = input != 0
    return (nonzero.sum() if dim is None else nonzero.sum(dim, keepdim)) > 0


# Named all_/any_ here so that this module keeps Python's own all() and any().
all_.__name__, any_.__name__ = "all", "any"
all_.__qualname__, any_.__qualname__ = "all", "any"


def trace(input):
    """The sum of the main diagonal of a 2-D tensor.

    Deviation: composed of ``diagonal`` and ``sum``, so the graph shows SumBackward0
    over a diagonal view where torch records one TraceBackward0 (same gradient).
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return ops.sum(ops.diagonal(input, 0, 0, 1))


def equal(input, other) -> bool:
    """True when both tensors have the same size and the same elements (a Python bool)."""
    if tuple(input._sizes) != tuple(other._sizes):
        return False
    return bool(ops.eq(input, other).all().item()) if input.numel() else True
