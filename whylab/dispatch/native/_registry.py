"""Small helpers the native modules share to define operators and register kernels."""

from __future__ import annotations

import functools

from whylab._core.keys import DispatchKey
from whylab.dispatch.operator import CompositeImplicitAutograd, define


def native(schema: str, cpu=None, meta=None, *, cuda=None, composite=None):
    """Define ``schema`` and register its kernels; returns the Operator.

    ``composite`` registers one kernel written in terms of other operators for
    Autograd and every backend (PyTorch's CompositeImplicitAutograd).
    """
    op = define(schema)
    if cpu is not None:
        op.register(DispatchKey.CPU, cpu)
    if meta is not None:
        op.register(DispatchKey.Meta, meta)
    if cuda is not None:
        op.register(DispatchKey.CUDA, cuda)
    if composite is not None:
        op.register(CompositeImplicitAutograd, composite)
    return op


def view_kernel(schema: str, kernel):
    """A view op: the same geometry-only kernel serves every backend."""
    return native(schema, cpu=kernel, meta=kernel)


_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}


def numpy_keywords(fn):
    """Accept NumPy's ``axis=`` and ``keepdims=`` for ``dim`` and ``keepdim``, as torch does.

    (torch's argument parser maps these names for every function; here the reductions
    and the functions that take a dim are wrapped.)
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for numpy_name, name in _NUMPY_NAMES.items():
                if numpy_name in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {name}= and {numpy_name}=")
                    kwargs[name] = kwargs.pop(numpy_name)
        return fn(*args, **kwargs)

    return wrapper


def with_out(fn):
    """Give a public function torch's ``out=`` argument: the result is written into ``out``.

    ``out`` must already have the result's shape (deviation: torch resizes an ``out``
    of another shape, with a warning when it was not empty) and a dtype the result
    can be cast to. As in torch, ``out=`` does not record autograd history, so it is
    refused when the result would need a gradient.
    """

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        return write_out(fn.__name__, result, out)

    return wrapper


def write_out(op: str, result, out):
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
