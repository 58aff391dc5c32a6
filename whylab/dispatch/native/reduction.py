"""Reduction operators: sum, mean, prod, amax/amin, max/min (with indices), argmax/argmin,
var/std, logsumexp, softmax, log_softmax."""

from __future__ import annotations

from collections import namedtuple

from whylab._tensor.dtypes import to_dtype
from whylab._tensor.tensor import tensor_method
from whylab.dispatch.native._registry import native, numpy_keywords
from whylab.kernels.cpu import reduction as cpu
from whylab.kernels.meta import reduction as meta

_DIMS = "int[]? dim=None, bool keepdim=False"

_sum = native(f"sum(Tensor self, {_DIMS}, *, ScalarType? dtype=None) -> Tensor", cpu.sum, meta.sum)
_prod = native(
    "prod(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    cpu.prod,
    meta.prod,
)
_mean = native(
    f"mean(Tensor self, {_DIMS}, *, ScalarType? dtype=None) -> Tensor", cpu.mean, meta.mean
)
_amax = native("amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", cpu.amax, meta.amax)
_amin = native("amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", cpu.amin, meta.amin)
_max = native("max(Tensor self) -> Tensor", cpu.max, meta.max)
_min = native("min(Tensor self) -> Tensor", cpu.min, meta.min)
_max_dim = native(
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    cpu.max_dim,
    meta.max_dim,
)
_min_dim = native(
    "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    cpu.min_dim,
    meta.min_dim,
)
_argmax = native(
    "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", cpu.argmax, meta.argmax
)
_argmin = native(
    "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", cpu.argmin, meta.argmin
)
_var = native(
    "var(Tensor self, int[]? dim=None, *, Scalar? correction=1, bool keepdim=False) -> Tensor",
    cpu.var,
    meta.var,
)
_std = native(
    "std(Tensor self, int[]? dim=None, *, Scalar? correction=1, bool keepdim=False) -> Tensor",
    cpu.std,
    meta.std,
)
_logsumexp = native(
    "logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor", cpu.logsumexp, meta.logsumexp
)
_softmax = native(
    "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", cpu.softmax, meta.softmax
)
_log_softmax = native(
    "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    cpu.log_softmax,
    meta.log_softmax,
)

#: ``max(dim)`` and ``min(dim)`` return this named tuple. Deviation: PyTorch returns
#: ``torch.return_types.max``; the fields (``values``, ``indices``) are the same.
MaxMin = namedtuple("MaxMin", ["values", "indices"])


def _dtype(dtype):
    return None if dtype is None else to_dtype(dtype)


def _correction(op, unbiased, correction):
    if correction is not None and unbiased is not None:
        raise RuntimeError(f"{op}: can't specify both unbiased and correction")
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (an int, a tuple, or None for all); integers accumulate in int64."""
    return _sum(input, dim, keepdim, _dtype(dtype))


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over ``dim`` (an int) or of all elements; integers accumulate in int64."""
    return _prod(input, dim, keepdim, _dtype(dtype))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim``; the input must be floating point (as in PyTorch)."""
    return _mean(input, dim, keepdim, _dtype(dtype))


def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (an int or tuple; all dims when empty)."""
    return _amax(input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    """Smallest value over ``dim`` (an int or tuple; all dims when empty)."""
    return _amin(input, dim, keepdim)


def max(input, dim=None, keepdim=False):
    """``max(t)`` is the largest element; ``max(t, dim)`` returns ``(values, indices)``;
    ``max(t, other_tensor)`` is ``maximum``."""
    if dim is None:
        return _max(input)
    if not isinstance(dim, int):
        from whylab.dispatch.native.elementwise import maximum

        return maximum(input, dim)
    return MaxMin(*_max_dim(input, dim, keepdim))


def min(input, dim=None, keepdim=False):
    """``min(t)``, ``min(t, dim)`` -> ``(values, indices)``, or ``minimum`` with a tensor."""
    if dim is None:
        return _min(input)
    if not isinstance(dim, int):
        from whylab.dispatch.native.elementwise import minimum

        return minimum(input, dim)
    return MaxMin(*_min_dim(input, dim, keepdim))


def argmax(input, dim=None, keepdim=False):
    """Index of the first maximum (flattened when ``dim`` is None)."""
    return _argmax(input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the first minimum (flattened when ``dim`` is None)."""
    return _argmin(input, dim, keepdim)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with divisor ``N - correction`` (``unbiased=False`` means correction 0)."""
    return _var(input, dim, _correction("var", unbiased, correction), keepdim)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation with divisor ``N - correction``."""
    return _std(input, dim, _correction("std", unbiased, correction), keepdim)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed without overflow."""
    return _logsumexp(input, dim, keepdim)


def softmax(input, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``, computed stably."""
    return _softmax(input, dim, _dtype(dtype))


def log_softmax(input, dim, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    return _log_softmax(input, dim, _dtype(dtype))


# NumPy's names (axis=, keepdims=) are accepted too, as torch's argument parser does.
sum, prod, mean, amax, amin, max, min, argmax, argmin, var, std, logsumexp = (  # noqa: A001
    numpy_keywords(fn)
    for fn in (sum, prod, mean, amax, amin, max, min, argmax, argmin, var, std, logsumexp)
)

def all_(input, dim=None, keepdim=False):
    """Whether every element (along ``dim``) is non-zero; a bool tensor."""
    zero = input == 0
    return (zero.sum() if dim is None else zero.sum(dim, keepdim)) == 0


def any_(input, dim=None, keepdim=False):
    """Whether some element (along ``dim``) is non-zero; a bool tensor."""
    nonzero = input != 0
    return (nonzero.sum() if dim is None else nonzero.sum(dim, keepdim)) > 0


# Named all_/any_ here so that this module keeps Python's own all() and any().
all_, any_ = numpy_keywords(all_), numpy_keywords(any_)
all_.__name__, any_.__name__ = "all", "any"
tensor_method("all")(all_)
tensor_method("any")(any_)
tensor_method("sum")(sum)
tensor_method("prod")(prod)
tensor_method("mean")(mean)
tensor_method("amax")(amax)
tensor_method("amin")(amin)
tensor_method("max")(max)
tensor_method("min")(min)
tensor_method("argmax")(argmax)
tensor_method("argmin")(argmin)
tensor_method("var")(var)
tensor_method("std")(std)
tensor_method("logsumexp")(logsumexp)
tensor_method("softmax")(softmax)
tensor_method("log_softmax")(log_softmax)
