"""The hand-written parts of the reduction family: ``max``/``min`` with their overloads,
``var``/``std`` with ``unbiased``, and ``all``/``any`` (composites of ``eq``/``sum``).

Schemas, kernels and names: ``whylab/dispatch/native_functions.py``.
"""

from __future__ import annotations

from collections import namedtuple

from whylab.dispatch.native._registry import numpy_keywords
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


@numpy_keywords
def max(input, dim=None, keepdim=False):  # noqa: A001  (torch.max)
    """``max(t)`` is the largest element; ``max(t, dim)`` returns ``(values, indices)``
    (operator ``max.dim``); ``max(t, other_tensor)`` is ``maximum``."""
    if dim is None:
        return ops.max(input)
    if not isinstance(dim, int):
        return ops.maximum(input, dim)
    return MaxMin(*getattr(ops, "max.dim")(input, dim, keepdim))


@numpy_keywords
def min(input, dim=None, keepdim=False):  # noqa: A001  (torch.min)
    """``min(t)``, ``min(t, dim)`` -> ``(values, indices)``, or ``minimum`` with a tensor."""
    if dim is None:
        return ops.min(input)
    if not isinstance(dim, int):
        return ops.minimum(input, dim)
    return MaxMin(*getattr(ops, "min.dim")(input, dim, keepdim))


@numpy_keywords
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with divisor ``N - correction`` (``unbiased=False`` means correction 0)."""
    return ops.var(input, dim, _correction("var", unbiased, correction), keepdim)


@numpy_keywords
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation with divisor ``N - correction``."""
    return ops.std(input, dim, _correction("std", unbiased, correction), keepdim)


def _all(input, dim=None, keepdim=False):
    """Whether every element (along ``dim``) is non-zero; a bool tensor."""
    zero = input == 0
    return (zero.sum() if dim is None else zero.sum(dim, keepdim)) == 0


def _any(input, dim=None, keepdim=False):
    """Whether some element (along ``dim``) is non-zero; a bool tensor."""
    nonzero = input != 0
    return (nonzero.sum() if dim is None else nonzero.sum(dim, keepdim)) > 0


# Named _all/_any here so that this module keeps Python's own all() and any().
_all.__name__, _any.__name__ = "all", "any"
all_, any_ = numpy_keywords(_all), numpy_keywords(_any)
