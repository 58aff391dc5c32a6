"""ADInplaceOrView kernels, generated from each schema's alias annotations.

For a *view* operator (``-> Tensor(a)``) the kernel lets the backend build the
view, then records the tensor it views (``_base``) and makes the view share its
base's version counter and key set (so a view of an ordinary tensor made inside
``inference_mode`` is still an ordinary tensor, as in PyTorch; only tensors that
carry this key reach it). For an *in-place* operator (``Tensor(a!) self``) it lets
the backend write, then bumps the version counter, so autograd can notice that
a tensor it saved has changed. Every other operator falls through this key.
"""

from __future__ import annotations

from whylab._core.keys import DispatchKey
from whylab._tensor.tensor import Tensor
from whylab.dispatch.tls import local_keys


def _mark_view(out, source: Tensor):
    base = source if source._base is None else source._base
    if isinstance(out, Tensor):
        out._base = base
        out._version_counter = source._version_counter
        out._keys = source._keys
        return out
    for view in out:  # split, chunk, unbind return several views
        view._base = base
        view._version_counter = source._version_counter
        view._keys = source._keys
    return out


def _view_kernel(op):
    hops = op._hops  # the backend kernel below, per key set (Operator.hop)

    def view_kernel(keyset, self, *args, **kwargs):
        hop = hops.get(keyset) if local_keys.recorder is None else None
        out = (hop or op.hop(keyset))(self, *args, **kwargs)
        if type(out) is Tensor:  # the common case, inlined: one view
            out._base = self if self._base is None else self._base
            out._version_counter = self._version_counter
            out._keys = self._keys
            return out
        return _mark_view(out, self)

    view_kernel.__qualname__ = f"ADInplaceOrView.view[{op.name}]"
    return view_kernel


def _inplace_kernel(op):
    hops = op._hops

    def inplace_kernel(keyset, self, *args, **kwargs):
        hop = hops.get(keyset) if local_keys.recorder is None else None
        out = (hop or op.hop(keyset))(self, *args, **kwargs)
        self._version_counter.value += 1  # VersionCounter.bump(), without the call
        return out

    inplace_kernel.__qualname__ = f"ADInplaceOrView.inplace[{op.name}]"
    return inplace_kernel


def register_for(op) -> None:
    """Give ``op`` its ADInplaceOrView kernel when its schema says it views or writes."""
    if op.schema.is_inplace:
        op.register(DispatchKey.ADInplaceOrView, _inplace_kernel(op))
    elif op.schema.is_view:
        op.register(DispatchKey.ADInplaceOrView, _view_kernel(op))
