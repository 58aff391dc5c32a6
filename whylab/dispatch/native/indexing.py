"""The hand-written parts of the indexing family: ``Tensor.__getitem__`` /
``__setitem__``, ``index_put`` and ``nonzero(as_tuple=)``.

Schemas, kernels and names: ``whylab/dispatch/native_functions.py``.

Basic indexing (ints, slices with steps, None, Ellipsis) becomes a chain of
view operators (select, slice, unsqueeze), exactly as in PyTorch, so it never
copies. Integer or boolean tensors (or lists) trigger advanced indexing: the
``index`` operator, which copies; assignment uses ``copy_``/``fill_`` on the
view, or ``index_put_`` for advanced indices.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.tensor import Tensor
from whylab.dispatch.operator import ops
from whylab.kernels.cpu.inplace import check_no_internal_overlap

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
            result = ops.unsqueeze(result, dim)
            tensor_indices.append(None)
            dim += 1
        elif item is Ellipsis:
            skipped = self.ndim - specified
            tensor_indices.extend([None] * skipped)
            dim += skipped
        elif isinstance(item, bool):
            result = ops.unsqueeze(result, dim)
            mask = Tensor._from_numpy_result(np.array([item]), dtypes.bool_)
            tensor_indices.append(mask)
            dim += 1
        elif isinstance(item, int):
            result = ops.select(result, dim, item)
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
    return ops.slice(tensor, dim, item.start, item.stop, step)


def _only_ints_and_slices(index: tuple) -> bool:
    for item in index:
        kind = type(item)
        if kind is not int and kind is not slice:
            return False
    return True


def getitem(self, index):
    kind = type(index)
    if kind is int:
        return ops.select(self, 0, index)
    if kind is tuple and len(index) <= len(self._sizes) and _only_ints_and_slices(index):
        # The common case, without the general machinery below.
        result, dim = self, 0
        for item in index:
            if type(item) is int:
                result = ops.select(result, dim, item)
            else:
                result = _apply_slice(result, dim, item)
                dim += 1
        return ops.alias(self) if result is self else result
    if kind is slice:
        result = _apply_slice(self, 0, index)
        return ops.alias(self) if result is self else result
    result, tensor_indices = _apply_basic(self, index)
    if tensor_indices is None:
        return ops.alias(self) if result is self else result
    return ops.index(result, tensor_indices)


def setitem(self, index, value):
    if isinstance(index, int) and not isinstance(index, bool):
        target, tensor_indices = ops.select(self, 0, index), None
    else:
        target, tensor_indices = _apply_basic(self, index)
    if tensor_indices is None:
        if isinstance(value, Tensor):
            ops.copy_(target, value, False)
        else:
            # PyTorch fills with the number as a 0-d tensor (fill_.Tensor), which
            # refuses an expanded target; fill_ with a plain number would accept it.
            check_no_internal_overlap("fill_", target)
            ops.fill_(target, value)
        return
    if not isinstance(value, Tensor):
        value = Tensor._from_numpy_result(np.array(value, dtype=self.dtype.numpy))
    ops.index_put_(target, tensor_indices, value, False)


# ------------------------------------------------------------------ public functions


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` put at ``indices`` (added when accumulate)."""
    return ops.index_put_(ops.clone(input, None), list(indices), values, accumulate)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements, one row per element (or a tuple per dim)."""
    result = ops.nonzero(input)
    if as_tuple:
        return tuple(result.t()) if result.ndim == 2 else (result,)
    return result
