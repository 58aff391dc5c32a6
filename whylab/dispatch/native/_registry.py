"""Small helpers the native modules share to define operators and register kernels."""

from __future__ import annotations

from whylab.dispatch.keys import DispatchKey
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
