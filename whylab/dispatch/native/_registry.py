"""What the bindings share: NumPy's keyword names and torch's ``out=`` argument."""

from __future__ import annotations

import functools


class _Required:
    """The default of a required ``dim`` in a binding that also takes ``axis=``."""

    def __repr__(self) -> str:
        return "<required>"


#: ``cumsum(t, axis=0)`` must work although ``dim`` has no default: the binding gives
#: ``dim`` this default and refuses a call that names neither.
DIM_REQUIRED = _Required()


def check_dim_given(op: str, dim) -> None:
    if dim is DIM_REQUIRED:
        raise TypeError(f"{op}() missing 1 required positional argument: 'dim'")


def numpy_names(op: str, given: dict, dim, dim_default, keepdim=None):
    """``dim`` (and ``keepdim``) after NumPy's ``axis=`` / ``keepdims=`` in ``given``.

    torch's argument parser accepts the NumPy names for every function; the generated
    bindings of the ops that take a ``dim``, and the hand-written ones (``max``, ``var``,
    ``all``... in ``reduction.py``), collect them in ``**numpy_keywords`` and call this.
    ``dim_default`` is the schema's default (a ``dim`` that differs from it
    was given too); ``keepdim`` is None for an op without one, and then only ``dim``
    comes back.
    """
    allowed = ("axis",) if keepdim is None else ("axis", "keepdims")
    for numpy_name in given:
        if numpy_name not in allowed:
            raise TypeError(f"{op}() got an unexpected keyword argument {numpy_name!r}")
    if "axis" in given:
        if dim != dim_default:
            raise TypeError(f"{op}() got both dim= and axis=")
        dim = given["axis"]
    if keepdim is None:
        return dim
    if "keepdims" in given:
        if keepdim:
            raise TypeError(f"{op}() got both keepdim= and keepdims=")
        keepdim = given["keepdims"]
    return dim, keepdim


def with_out(fn):
    """Give a hand-written public function torch's ``out=`` argument (see :func:`write_out`).

    The generated bindings take ``out=`` themselves (``out=True`` in the op table).
    """

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        return write_out(fn.__name__, result, out)

    return wrapper


def write_out(op: str, result, out):
    """Write ``result`` into ``out`` and return ``out``.

    ``out`` must already have the result's shape (deviation: torch resizes an ``out``
    of another shape, with a warning when it was not empty) and a dtype the result
    can be cast to. As in torch, ``out=`` does not record autograd history, so it is
    refused when the result would need a gradient.
    """
    from whylab._tensor.dtypes import can_cast
    from whylab.autograd.grad_mode import is_grad_enabled, no_grad

    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(
            f"{op}: out= has shape {tuple(out.shape)} but the result has shape "
            f"{tuple(result.shape)} (whylab does not resize out= tensors)"
        )
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(
            f"{op}: result type {result.dtype} can't be cast to the desired output type {out.dtype}"
        )
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    with no_grad():
        out.copy_(result)
    return out
