"""The hand-written parts of the view and shape family: the composites (reshape, narrow,
chunk, flatten, unflatten, movedim) and the methods that take sizes as
``*args`` (``t.view(2, 3)``), the in-place view methods and the ``T``/``mT`` properties.

Schemas, kernels and names: ``whylab/dispatch/native_functions.py``. The view
operators share one geometry-only kernel across backends (``kernels/views.py``); their
schemas say ``Tensor(a) self -> Tensor(a)``, which gives them the
ADInplaceOrView kernel that sets ``_base`` and shares the version counter.
``reshape``, ``flatten``, ``chunk`` and friends are composites: they call the
view operators (or ``clone`` + ``_unsafe_view`` when a view is impossible).
"""

from __future__ import annotations

from math import prod

from whylab._tensor.geometry import broadcast_all, infer_size, view_strides, wrap_dim
from whylab.dispatch.operator import ops
from whylab.kernels import views


def unsafe_view_kernel(self, size):
    """``_unsafe_view``: a view whose result records no base, used on fresh copies
    (reshape's copy path), for every backend."""
    return views.view(self, size)


def reshape_composite(self, shape):
    sizes = infer_size(shape, self.numel(), "reshape")
    if self.is_contiguous():
        return ops.view(self, sizes)
    strides = view_strides(self._sizes, self._strides, sizes)
    if strides is not None:  # as in torch: a view, but recorded as ReshapeAliasBackward0
        return ops._reshape_alias(self, sizes, strides)
    return ops._unsafe_view(ops.clone(self, "contiguous_format"), sizes)


def narrow_composite(self, dim, start, length):
    start, length = int(start), int(length)  # 0-d tensors are accepted, as in torch
    d = wrap_dim(dim, self.ndim, "narrow")
    size = self._sizes[d]
    if not -size <= start <= size:
        raise IndexError(
            f"narrow(): start ({start}) is out of bounds for dimension {d} of size {size}"
        )
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(
            f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return ops.slice(self, d, start, start + length, 1)


def chunk_composite(self, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, self.ndim, "chunk")
    size = self._sizes[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return tuple(ops.narrow(self, d, 0, 0) for _ in range(chunks))
    return ops.split(self, split_size, d)


def flatten_composite(self, start_dim=0, end_dim=-1):
    if self.ndim == 0:
        return ops.reshape(self, (1,))
    start = wrap_dim(start_dim, self.ndim, "flatten")
    end = wrap_dim(end_dim, self.ndim, "flatten")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    sizes = self._sizes[:start] + (prod(self._sizes[start : end + 1]),) + self._sizes[end + 1 :]
    return ops.reshape(self, sizes)


def unflatten_composite(self, dim, sizes):
    d = wrap_dim(dim, self.ndim, "unflatten")
    sizes = infer_size(sizes, self._sizes[d], "unflatten")
    return ops.view(self, self._sizes[:d] + tuple(sizes) + self._sizes[d + 1 :])


def movedim_composite(self, source, destination):
    ndim = self.ndim
    sources = [
        wrap_dim(d, ndim, "movedim")
        for d in (source if isinstance(source, (list, tuple)) else [source])
    ]
    targets = [
        wrap_dim(d, ndim, "movedim")
        for d in (destination if isinstance(destination, (list, tuple)) else [destination])
    ]
    if len(sources) != len(targets):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({sources} dims) should "
            f"contain the same number of dims as destination ({targets} dims)"
        )
    order = [None] * ndim
    for s, t in zip(sources, targets, strict=True):
        order[t] = s
    rest = iter(d for d in range(ndim) if d not in sources)
    order = [d if d is not None else next(rest) for d in order]
    return ops.permute(self, order)


def _matrix_transpose(self):
    if self.ndim < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. "
            f"Got {self.ndim}-D tensor."
        )
    return ops.transpose(self, -2, -1)


def _sizes_arg(size):
    """Accept ``view(2, 3)`` and ``view((2, 3))``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    return broadcast_all([tuple(s) for s in shapes], "broadcast_shapes")


def broadcast_tensors(*tensors):
    """Views of all tensors expanded to their common broadcast shape (a tensor that already
    has it is returned as it is, as torch's ``expand_outplace`` does)."""
    shape = broadcast_shapes(*(tensor.shape for tensor in tensors))
    return tuple(
        tensor if tensor._sizes == shape else ops.expand(tensor, shape) for tensor in tensors
    )


# -------------------------------------------------------------- hand-written methods


def permute_method(self, *dims):
    """``t.permute(1, 0)`` or ``t.permute((1, 0))``."""
    return ops.permute(self, _sizes_arg(dims))


def view_method(self, *shape):
    """``t.view(2, 3)`` or ``t.view((2, 3))``; ``view(dtype)`` is not supported."""
    if len(shape) == 1 and type(shape[0]) is not int:
        if not isinstance(shape[0], (tuple, list)):
            raise NotImplementedError("view(dtype) is not supported; use .to(dtype) (a copy)")
        shape = tuple(shape[0])
    return ops.view(self, shape)


def view_as(self, other):
    """A view with ``other``'s sizes."""
    return ops.view(self, other._sizes)


def reshape_method(self, *shape):
    """``t.reshape(2, 3)`` or ``t.reshape((2, 3))``."""
    return ops.reshape(self, _sizes_arg(shape))


def reshape_as(self, other):
    """``reshape`` to ``other``'s sizes."""
    return ops.reshape(self, other._sizes)


def expand_method(self, *sizes):
    """``t.expand(3, 4)`` or ``t.expand((3, 4))``; -1 keeps a size."""
    return ops.expand(self, _sizes_arg(sizes))


def expand_as(self, other):
    """``expand`` to ``other``'s sizes."""
    return ops.expand(self, other._sizes)


def detach_(self):
    """Detach in place: this tensor leaves the graph."""
    self.grad_fn = None
    self._requires_grad = False
    return self


def mT(self):
    """The last two dimensions swapped (a view)."""
    return _matrix_transpose(self)


def T(self):
    """All dimensions reversed (PyTorch deprecates ``.T`` for ndim other than 2)."""
    return ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))


def in_place_view(name: str):
    """``t.unsqueeze_(0)`` and friends: change this tensor's own sizes and strides.

    Deviation: PyTorch records these in the graph like other in-place ops; here a
    tensor that requires grad is refused (use the out-of-place form), since the
    engine has no rule for rewriting a node's output geometry in place.
    """
    out_of_place = name[:-1]

    def method(self, *args):
        if self.requires_grad:
            raise RuntimeError(
                f"{name}: changing the shape of a tensor that requires grad in place is not "
                f"supported; use {out_of_place}() instead"
            )
        self._adopt_layout(getattr(ops, out_of_place)(self, *args))
        return self

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    return method
