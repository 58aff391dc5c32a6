"""Indexing operators and ``Tensor.__getitem__`` / ``__setitem__``.

Basic indexing (ints, slices with steps, None, Ellipsis) becomes a chain of
view operators (select, slice, unsqueeze), exactly as in PyTorch, so it never
copies. Integer or boolean tensors (or lists) trigger advanced indexing: the
``index`` operator, which copies; assignment uses ``copy_``/``fill_`` on the
view, or ``index_put_`` for advanced indices.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.tensor import Tensor, tensor_method
from whylab.dispatch.native._registry import native, view_kernel
from whylab.dispatch.native.elementwise import _copy_, _fill_
from whylab.dispatch.native.shape import _select, _slice, _unsqueeze
from whylab.kernels import views
from whylab.kernels.cpu import indexing as cpu
from whylab.kernels.cpu.inplace import check_no_internal_overlap
from whylab.kernels.meta import indexing as meta

_alias = view_kernel("alias(Tensor(a) self) -> Tensor(a)", views.alias)
_index = native("index(Tensor self, Tensor?[] indices) -> Tensor", cpu.index, meta.index)
_index_put_ = native(
    "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False)"
    " -> Tensor(a!)",
    cpu.index_put_,
    meta.index_put_,
)
_cat = native("cat(Tensor[] tensors, int dim=0) -> Tensor", cpu.cat, meta.cat)
_gather = native(
    "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
    cpu.gather,
    meta.gather,
)
_scatter_add = native(
    "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
    cpu.scatter_add,
    meta.scatter_add,
)
_scatter_add_ = native(
    "scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
    cpu.scatter_add_,
    meta.scatter_add_,
)
_scatter = native(
    "scatter(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", cpu.scatter, meta.scatter
)
_scatter_ = native(
    "scatter_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
    cpu.scatter_,
    meta.scatter_,
)
_index_select = native(
    "index_select(Tensor self, int dim, Tensor index) -> Tensor",
    cpu.index_select,
    meta.index_select,
)
_one_hot = native("one_hot(Tensor self, int num_classes=-1) -> Tensor", cpu.one_hot, meta.one_hot)
_tril = native("tril(Tensor self, int diagonal=0) -> Tensor", cpu.tril, meta.tril)
_triu = native("triu(Tensor self, int diagonal=0) -> Tensor", cpu.triu, meta.triu)
_nonzero = native("nonzero(Tensor self) -> Tensor", cpu.nonzero, meta.nonzero)
_masked_select = native(
    "masked_select(Tensor self, Tensor mask) -> Tensor", cpu.masked_select, meta.masked_select
)


def _stack_composite(tensors, dim=0):
    if len(tensors) == 0:
        raise ValueError("stack expects a non-empty TensorList")
    first = tensors[0]
    for entry, t in enumerate(tensors):
        if t._sizes != first._sizes:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first._sizes)} at "
                f"entry 0 and {list(t._sizes)} at entry {entry}"
            )
    return _cat([_unsqueeze(t, dim) for t in tensors], dim)


_stack = native("stack(Tensor[] tensors, int dim=0) -> Tensor", composite=_stack_composite)


# -------------------------------------------------------------------- __getitem__


def _as_index_tensor(value) -> Tensor:
    """Lists and NumPy arrays used as indices become int64 (or bool) tensors."""
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value)
    if array.dtype == np.bool_:
        return Tensor._from_numpy_result(np.array(array, copy=True), dtypes.bool_)
    if array.size == 0:
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
            "valid indices"
        )
    return Tensor._from_numpy_result(np.array(array, dtype=np.int64, copy=True), dtypes.int64)


def _index_span(item) -> int:
    """How many dimensions of the indexed tensor an index item consumes."""
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, Tensor) and item.dtype is dtypes.bool_:
        return max(item.ndim, 1) if item.ndim else 0
    return 1


def _normalize_items(index) -> tuple:
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    for item in index:
        if isinstance(item, (list, range, np.ndarray)):
            item = _as_index_tensor(item)
        elif isinstance(item, np.integer):
            item = int(item)
        items.append(item)
    return tuple(items)


def _apply_basic(self: Tensor, index):
    """Apply the view part of an index; returns the view and per-dimension index tensors."""
    items = _normalize_items(index)
    specified = sum(_index_span(item) for item in items)
    if specified > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {specified})")
    if sum(1 for item in items if item is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    result = self
    dim = 0
    tensor_indices: list = []
    for item in items:
        if item is None:
            result = _unsqueeze(result, dim)
            tensor_indices.append(None)
            dim += 1
        elif item is Ellipsis:
            skipped = self.ndim - specified
            tensor_indices.extend([None] * skipped)
            dim += skipped
        elif isinstance(item, bool):
            result = _unsqueeze(result, dim)
            mask = Tensor._from_numpy_result(np.array([item]), dtypes.bool_)
            tensor_indices.append(mask)
            dim += 1
        elif isinstance(item, int):
            result = _select(result, dim, item)
        elif isinstance(item, slice):
            result = _apply_slice(result, dim, item)
            tensor_indices.append(None)
            dim += 1
        elif isinstance(item, Tensor):
            if (
                item.dtype is not dtypes.bool_
                and item.ndim == 0
                and not item.dtype.is_floating_point
            ):
                # A 0-dim integer tensor indexes like an int, but PyTorch copies: keep it advanced.
                tensor_indices.append(item)
                dim += 1
            else:
                tensor_indices.append(item)
                dim += _index_span(item) if item.dtype is dtypes.bool_ else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(item).__name__})"
            )
    has_tensor = any(t is not None for t in tensor_indices)
    return result, (tensor_indices if has_tensor else None)


def _apply_slice(tensor: Tensor, dim: int, item: slice) -> Tensor:
    """``tensor[..., item]`` at ``dim``; a full ``:`` needs no operator (as in PyTorch)."""
    if item.start is None and item.stop is None and item.step is None:
        return tensor
    step = 1 if item.step is None else int(item.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    return _slice(tensor, dim, item.start, item.stop, step)


def _only_ints_and_slices(index: tuple) -> bool:
    for item in index:
        kind = type(item)
        if kind is not int and kind is not slice:
            return False
    return True


@tensor_method("__getitem__")
def _method_getitem(self, index):
    kind = type(index)
    if kind is int:
        return _select(self, 0, index)
    if kind is tuple and len(index) <= len(self._sizes) and _only_ints_and_slices(index):
        # The common case, without the general machinery below.
        result, dim = self, 0
        for item in index:
            if type(item) is int:
                result = _select(result, dim, item)
            else:
                result = _apply_slice(result, dim, item)
                dim += 1
        return _alias(self) if result is self else result
    if kind is slice:
        result = _apply_slice(self, 0, index)
        return _alias(self) if result is self else result
    result, tensor_indices = _apply_basic(self, index)
    if tensor_indices is None:
        return _alias(self) if result is self else result
    return _index(result, tensor_indices)


@tensor_method("__setitem__")
def _method_setitem(self, index, value):
    if isinstance(index, int) and not isinstance(index, bool):
        target, tensor_indices = _select(self, 0, index), None
    else:
        target, tensor_indices = _apply_basic(self, index)
    if tensor_indices is None:
        if isinstance(value, Tensor):
            _copy_(target, value, False)
        else:
            # PyTorch fills with the number as a 0-d tensor (fill_.Tensor), which
            # refuses an expanded target; fill_ with a plain number would accept it.
            check_no_internal_overlap("fill_", target)
            _fill_(target, value)
        return
    if not isinstance(value, Tensor):
        value = Tensor._from_numpy_result(np.array(value, dtype=self.dtype.numpy))
    _index_put_(target, tensor_indices, value, False)


# ------------------------------------------------------------------ public functions


def cat(tensors, dim=0):
    """Join tensors along an existing dimension (dtypes promote)."""
    return _cat(list(tensors), dim)


concat = concatenate = cat


def stack(tensors, dim=0):
    """Join equally-sized tensors along a new dimension."""
    return _stack(list(tensors), dim)


def gather(input, dim, index, *, sparse_grad=False):
    """Values of ``input`` picked along ``dim`` by ``index`` (same shape as index)."""
    return _gather(input, dim, index, sparse_grad)


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added at the positions ``index`` names along ``dim``."""
    return _scatter_add(input, dim, index, src)


def scatter(input, dim, index, src):
    """A copy of ``input`` with ``src`` written at the positions ``index`` names along ``dim``."""
    return _scatter(input, dim, index, src)


def index_select(input, dim, index):
    """The slices of ``input`` along ``dim`` listed in the 1-D ``index`` (a copy)."""
    return _index_select(input, dim, index)


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` put at ``indices`` (added when accumulate)."""
    return _index_put_(input.clone(), list(indices), values, accumulate)


def one_hot(tensor, num_classes=-1):
    """``torch.nn.functional.one_hot``: int64 tensor with a trailing class dimension."""
    return _one_hot(tensor, num_classes)


def tril(input, diagonal=0):
    """The lower triangle of the last two dimensions (below ``diagonal``), zeros elsewhere."""
    return _tril(input, diagonal)


def triu(input, diagonal=0):
    """The upper triangle of the last two dimensions (above ``diagonal``), zeros elsewhere."""
    return _triu(input, diagonal)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements, one row per element (or a tuple per dim)."""
    result = _nonzero(input)
    if as_tuple:
        return tuple(result.t()) if result.ndim == 2 else (result,)
    return result


def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` is true, as a 1-D copy."""
    return _masked_select(input, mask)


tensor_method("gather")(gather)
tensor_method("scatter_add")(scatter_add)
tensor_method("scatter")(scatter)
tensor_method("index_select")(index_select)
tensor_method("tril")(tril)
tensor_method("triu")(triu)
tensor_method("nonzero")(nonzero)
tensor_method("masked_select")(masked_select)


@tensor_method("scatter_add_")
def _method_scatter_add_(self, dim, index, src):
    return _scatter_add_(self, dim, index, src)


@tensor_method("scatter_")
def _method_scatter_(self, dim, index, src):
    return _scatter_(self, dim, index, src)


@tensor_method("index_put_")
def _method_index_put_(self, indices, values, accumulate=False):
    return _index_put_(self, list(indices), values, accumulate)


@tensor_method("index_put")
def _method_index_put(self, indices, values, accumulate=False):
    return index_put(self, indices, values, accumulate)
