"""View and shape operators: transpose, permute, view, reshape, expand, squeeze, select,
slice, narrow, diagonal, unfold, as_strided, split, chunk, flatten, unflatten, detach.

The view operators share one geometry-only kernel across backends; their
schemas say ``Tensor(a) self -> Tensor(a)``, which gives them the
ADInplaceOrView kernel that sets ``_base`` and shares the version counter.
``reshape``, ``flatten``, ``split`` and friends are composites: they call the
view operators (or ``clone`` + ``_unsafe_view`` when a view is impossible).
"""

from __future__ import annotations

from math import prod

from whylab._tensor.geometry import infer_size, view_strides, wrap_dim
from whylab._tensor.tensor import tensor_method, tensor_property
from whylab.dispatch.native._registry import native, view_kernel
from whylab.dispatch.native.factory import _clone
from whylab.kernels import views

_transpose = view_kernel(
    "transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", views.transpose
)
_t = view_kernel("t(Tensor(a) self) -> Tensor(a)", views.t)
_permute = view_kernel("permute(Tensor(a) self, int[] dims) -> Tensor(a)", views.permute)
_view = view_kernel("view(Tensor(a) self, int[] size) -> Tensor(a)", views.view)
_expand = view_kernel("expand(Tensor(a) self, int[] size) -> Tensor(a)", views.expand)
_unsqueeze = view_kernel("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", views.unsqueeze)
_squeeze = view_kernel("squeeze(Tensor(a) self, int[]? dim=None) -> Tensor(a)", views.squeeze)
_select = view_kernel("select(Tensor(a) self, int dim, int index) -> Tensor(a)", views.select)
_slice = view_kernel(
    "slice(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)",
    views.slice,
)
_diagonal = view_kernel(
    "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", views.diagonal
)
_unfold = view_kernel(
    "unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", views.unfold
)
_as_strided = view_kernel(
    "as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)",
    views.as_strided,
)
# Not a view in the autograd sense (no _base), but shares storage and version counter.
_detach = native("detach(Tensor self) -> Tensor", views.alias, views.alias)


def _unsafe_view_kernel(self, size):
    return views.view(self, size)


# A view whose result does not record a base: used on fresh copies (reshape's copy path).
_unsafe_view = native(
    "_unsafe_view(Tensor self, int[] size) -> Tensor", _unsafe_view_kernel, _unsafe_view_kernel
)


def _reshape_composite(self, shape):
    sizes = infer_size(shape, self.numel(), "reshape")
    if view_strides(self._sizes, self._strides, sizes) is not None:
        return _view(self, sizes)
    return _unsafe_view(_clone(self, "contiguous_format"), sizes)


_reshape = native("reshape(Tensor(a) self, int[] shape) -> Tensor(a)", composite=_reshape_composite)


def _narrow_composite(self, dim, start, length):
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
    return _slice(self, d, start, start + length, 1)


_narrow = native(
    "narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)",
    composite=_narrow_composite,
)


def _split_composite(self, split_size, dim=0):
    d = wrap_dim(dim, self.ndim, "split")
    size = self._sizes[d]
    if isinstance(split_size, int):
        if split_size < 0 or (split_size == 0 and size != 0):
            raise RuntimeError(
                f"split: split_size can only be 0 if dimension size is 0, "
                f"but got dimension size of {size}"
            )
        step = max(split_size, 1)
        starts = range(0, max(size, 1), step) if size else [0]
        return tuple(_narrow(self, d, s, min(step, size - s)) for s in starts)
    sections = list(split_size)
    if sum(sections) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
            f"at dimension {d}), but got split_sizes={sections}"
        )
    pieces, start = [], 0
    for length in sections:
        pieces.append(_narrow(self, d, start, length))
        start += length
    return tuple(pieces)


_split = native(
    "split(Tensor(a) self, int[] split_size, int dim=0) -> Tensor(a)[]", composite=_split_composite
)


def _chunk_composite(self, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, self.ndim, "chunk")
    size = self._sizes[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return tuple(_narrow(self, d, 0, 0) for _ in range(chunks))
    return _split(self, split_size, d)


_chunk = native(
    "chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]", composite=_chunk_composite
)


def _unbind_composite(self, dim=0):
    d = wrap_dim(dim, self.ndim, "unbind")
    return tuple(_select(self, d, i) for i in range(self._sizes[d]))


_unbind = native("unbind(Tensor(a) self, int dim=0) -> Tensor(a)[]", composite=_unbind_composite)


def _flatten_composite(self, start_dim=0, end_dim=-1):
    if self.ndim == 0:
        return _reshape(self, (1,))
    start = wrap_dim(start_dim, self.ndim, "flatten")
    end = wrap_dim(end_dim, self.ndim, "flatten")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    sizes = self._sizes[:start] + (prod(self._sizes[start : end + 1]),) + self._sizes[end + 1 :]
    return _reshape(self, sizes)


_flatten = native(
    "flatten(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    composite=_flatten_composite,
)


def _unflatten_composite(self, dim, sizes):
    d = wrap_dim(dim, self.ndim, "unflatten")
    sizes = infer_size(sizes, self._sizes[d], "unflatten")
    return _view(self, self._sizes[:d] + tuple(sizes) + self._sizes[d + 1 :])


_unflatten = native(
    "unflatten(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)", composite=_unflatten_composite
)


def _movedim_composite(self, source, destination):
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
    return _permute(self, order)


_movedim = native(
    "movedim(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
    composite=_movedim_composite,
)


def _mT_composite(self):
    if self.ndim < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. "
            f"Got {self.ndim}-D tensor."
        )
    return _transpose(self, -2, -1)


def _sizes_arg(size):
    """Accept ``view(2, 3)`` and ``view((2, 3))``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


# ------------------------------------------------------------------ public functions


def transpose(input, dim0, dim1):
    """Swap two dimensions (a view)."""
    return _transpose(input, dim0, dim1)


swapaxes = swapdims = transpose


def t(input):
    """Transpose a tensor of at most 2 dimensions."""
    return _t(input)


def permute(input, dims):
    """A view with the dimensions reordered as ``dims``."""
    return _permute(input, tuple(dims))


def reshape(input, shape):
    """A view when the strides allow it, otherwise a copy (PyTorch's rule)."""
    return _reshape(input, tuple(shape))


def squeeze(input, dim=None):
    """A view without size-1 dimensions (all, or those in ``dim``)."""
    return _squeeze(input, dim)


def unsqueeze(input, dim):
    """A view with a new size-1 dimension at ``dim``."""
    return _unsqueeze(input, dim)


def select(input, dim, index):
    """The view at ``index`` along ``dim`` (that dimension disappears)."""
    return _select(input, dim, int(index))


def narrow(input, dim, start, length):
    """The view of ``length`` elements from ``start`` along ``dim``."""
    return _narrow(input, dim, int(start), int(length))


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of ``dim1`` and ``dim2`` (moved to the end)."""
    return _diagonal(input, offset, dim1, dim2)


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit sizes, strides and storage offset."""
    return _as_strided(input, tuple(size), tuple(stride), storage_offset)


def split(tensor, split_size_or_sections, dim=0):
    """Views of ``split_size`` elements (or the given section sizes) along ``dim``."""
    return _split(tensor, split_size_or_sections, dim)


def chunk(input, chunks, dim=0):
    """``chunks`` views of (nearly) equal size along ``dim``."""
    return _chunk(input, chunks, dim)


def unbind(input, dim=0):
    """Views of every slice along ``dim``, that dimension removed."""
    return _unbind(input, dim)


def flatten(input, start_dim=0, end_dim=-1):
    """``start_dim``..``end_dim`` merged into one (a view when possible)."""
    return _flatten(input, start_dim, end_dim)


def unflatten(input, dim, sizes):
    """A view with ``dim`` split into ``sizes``."""
    return _unflatten(input, dim, tuple(sizes))


def movedim(input, source, destination):
    """A view with ``source`` dimensions moved to ``destination``."""
    return _movedim(input, source, destination)


moveaxis = movedim


def broadcast_to(input, size):
    """A stride-0 view expanded to ``size`` (like ``expand``)."""
    return _expand(input, tuple(size))


def detach(input):
    """A tensor sharing storage and version counter, outside autograd."""
    return _detach(input)


# -------------------------------------------------------------------- Tensor methods


@tensor_method("transpose", "swapaxes", "swapdims")
def _method_transpose(self, dim0, dim1):
    return _transpose(self, dim0, dim1)


@tensor_method("t")
def _method_t(self):
    return _t(self)


@tensor_method("permute")
def _method_permute(self, *dims):
    return _permute(self, _sizes_arg(dims))


@tensor_method("view")
def _method_view(self, *shape):
    if len(shape) == 1 and type(shape[0]) is not int:
        if not isinstance(shape[0], (tuple, list)):
            raise NotImplementedError("view(dtype) is not supported; use .to(dtype) (a copy)")
        shape = tuple(shape[0])
    return _view(self, shape)


@tensor_method("view_as")
def _method_view_as(self, other):
    return _view(self, other._sizes)


@tensor_method("reshape")
def _method_reshape(self, *shape):
    return _reshape(self, _sizes_arg(shape))


@tensor_method("reshape_as")
def _method_reshape_as(self, other):
    return _reshape(self, other._sizes)


@tensor_method("expand")
def _method_expand(self, *sizes):
    return _expand(self, _sizes_arg(sizes))


@tensor_method("expand_as")
def _method_expand_as(self, other):
    return _expand(self, other._sizes)


@tensor_method("broadcast_to")
def _method_broadcast_to(self, size):
    return _expand(self, tuple(size))


@tensor_method("unsqueeze")
def _method_unsqueeze(self, dim):
    return _unsqueeze(self, dim)


@tensor_method("squeeze")
def _method_squeeze(self, dim=None):
    return _squeeze(self, dim)


@tensor_method("select")
def _method_select(self, dim, index):
    return _select(self, dim, int(index))


@tensor_method("narrow")
def _method_narrow(self, dim, start, length):
    return _narrow(self, dim, int(start), int(length))


@tensor_method("diagonal")
def _method_diagonal(self, offset=0, dim1=0, dim2=1):
    return _diagonal(self, offset, dim1, dim2)


@tensor_method("unfold")
def _method_unfold(self, dimension, size, step):
    return _unfold(self, dimension, size, step)


@tensor_method("as_strided")
def _method_as_strided(self, size, stride, storage_offset=None):
    return _as_strided(self, tuple(size), tuple(stride), storage_offset)


@tensor_method("split")
def _method_split(self, split_size, dim=0):
    return _split(self, split_size, dim)


@tensor_method("chunk")
def _method_chunk(self, chunks, dim=0):
    return _chunk(self, chunks, dim)


@tensor_method("unbind")
def _method_unbind(self, dim=0):
    return _unbind(self, dim)


@tensor_method("flatten")
def _method_flatten(self, start_dim=0, end_dim=-1):
    return _flatten(self, start_dim, end_dim)


@tensor_method("unflatten")
def _method_unflatten(self, dim, sizes):
    return _unflatten(self, dim, tuple(sizes))


@tensor_method("movedim", "moveaxis")
def _method_movedim(self, source, destination):
    return _movedim(self, source, destination)


@tensor_method("detach")
def _method_detach(self):
    """A tensor sharing storage and version counter with ``self``, outside autograd."""
    return _detach(self)


@tensor_method("detach_")
def _method_detach_(self):
    self.grad_fn = None
    self._requires_grad = False
    return self


@tensor_property("mT")
def _property_mT(self):
    return _mT_composite(self)


@tensor_property("T")
def _property_T(self):
    """All dimensions reversed (PyTorch deprecates ``.T`` for ndim other than 2)."""
    return _permute(self, tuple(range(self.ndim - 1, -1, -1)))


@tensor_property("mH")
def _property_mH(self):
    return _mT_composite(self)


def _in_place_view_method(view, name):
    """``t.unsqueeze_(0)`` and friends: change this tensor's own sizes and strides.

    Deviation: PyTorch records these in the graph like other in-place ops; here a
    tensor that requires grad is refused (use the out-of-place form), since the
    engine has no rule for rewriting a node's output geometry in place.
    """

    def method(self, *args):
        if self.requires_grad:
            raise RuntimeError(
                f"{name}: changing the shape of a tensor that requires grad in place is not "
                f"supported; use {name[:-1]}() instead"
            )
        self._adopt_layout(view(self, *args))
        return self

    method.__name__ = method.__qualname__ = name
    tensor_method(name)(method)


for _out_of_place, _in_place_name in (
    (unsqueeze, "unsqueeze_"), (squeeze, "squeeze_"), (t, "t_"), (transpose, "transpose_"),
):
    _in_place_view_method(_out_of_place, _in_place_name)
