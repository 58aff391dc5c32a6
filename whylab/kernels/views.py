"""View kernels: new sizes, strides and offset over the same storage, never a copy.

These kernels only do arithmetic on the geometry (``whylab._tensor.geometry``),
so the same functions serve the CPU, CUDA and Meta keys. ``_base`` and the
shared version counter are set by the ADInplaceOrView kernel around them.
"""

from __future__ import annotations

from whylab._tensor.geometry import (
    VIEW_ERROR,
    expand_geometry,
    format_shape,
    infer_size,
    view_strides,
    wrap_dim,
    wrap_dims,
)


def _new_view(self, sizes, strides, offset=None):
    if offset is None:
        offset = self._offset
    return self._view_of_parts(tuple(sizes), tuple(strides), offset)


def transpose(self, dim0, dim1):
    ndim = len(self._sizes)
    d0, d1 = wrap_dim(dim0, ndim, "transpose"), wrap_dim(dim1, ndim, "transpose")
    if ndim == 0 or d0 == d1:
        return _new_view(self, self._sizes, self._strides)
    sizes, strides = list(self._sizes), list(self._strides)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return _new_view(self, sizes, strides)


def t(self):
    ndim = len(self._sizes)
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    if ndim < 2:
        return _new_view(self, self._sizes, self._strides)
    sizes, strides, array = self._sizes, self._strides, self._array
    return self._view_of_parts(
        (sizes[1], sizes[0]),
        (strides[1], strides[0]),
        self._offset,
        None if array is None else array.T,
    )


def permute(self, dims):
    ndim = len(self._sizes)
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    order = tuple(wrap_dim(d, ndim, "permute") for d in dims)
    if len(set(order)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _new_view(self, [self._sizes[d] for d in order], [self._strides[d] for d in order])


def view(self, size):
    sizes = infer_size(size, self.numel(), "view")
    strides = view_strides(self._sizes, self._strides, sizes)
    if strides is None:
        raise RuntimeError(
            f"view: {VIEW_ERROR} (input {format_shape(self._sizes)} with strides "
            f"{format_shape(self._strides)}, target {format_shape(sizes)})"
        )
    array = self._array
    # NumPy reshapes a C-contiguous array without copying, so its reshape is the view.
    reshaped = array.reshape(sizes) if array is not None and array.flags.c_contiguous else None
    return self._view_of_parts(sizes, strides, self._offset, reshaped)


def reshape_alias(self, size, stride):
    """``_reshape_alias``: the view ``reshape`` makes of a tensor that is viewable but not
    contiguous, with the strides it computed."""
    return _new_view(self, size, stride)


def expand(self, size):
    sizes, strides = expand_geometry(self._sizes, self._strides, tuple(size))
    return _new_view(self, sizes, strides)


def unsqueeze(self, dim):
    ndim = len(self._sizes)
    d = wrap_dim(dim, ndim + 1, "unsqueeze")
    new_stride = 1 if d >= ndim else self._sizes[d] * self._strides[d]
    sizes = self._sizes[:d] + (1,) + self._sizes[d:]
    strides = self._strides[:d] + (new_stride,) + self._strides[d:]
    return _new_view(self, sizes, strides)


def squeeze(self, dim=None):
    ndim = len(self._sizes)
    if dim is None:
        keep = [d for d in range(ndim) if self._sizes[d] != 1]
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        wrapped = set(wrap_dims(dims, ndim, "squeeze")) if ndim else set()
        keep = [d for d in range(ndim) if d not in wrapped or self._sizes[d] != 1]
    return _new_view(self, [self._sizes[d] for d in keep], [self._strides[d] for d in keep])


def squeeze_(self, dim=None):
    """``squeeze`` in place: this tensor itself takes the squeezed geometry.

    Deviation: a view is refused. torch replays the view with the new geometry; whylab's
    in-place history of a view (CopySlices) keeps the view's geometry, so the op has no
    public binding and only matmul calls it, on a fresh result.
    """
    if self._base is not None:
        raise RuntimeError("squeeze_: squeezing a view in place is not supported; use squeeze()")
    self._adopt_layout(squeeze(self, dim))
    return self


def select(self, dim, index):
    sizes = self._sizes
    ndim = len(sizes)
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = dim if 0 <= dim < ndim else wrap_dim(dim, ndim, "select")
    size = sizes[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{format_shape(self._sizes)} at dimension {d}"
        )
    if index < 0:
        index += size
    strides, array = self._strides, self._array
    offset = self._offset + index * strides[d]
    # Selecting along dim 0 (what t[i] does) is NumPy's own integer index.
    selected = array[index, ...] if d == 0 and array is not None else None
    return self._view_of_parts(
        sizes[:d] + sizes[d + 1 :], strides[:d] + strides[d + 1 :], offset, selected
    )


def slice(self, dim=0, start=None, end=None, step=1):
    ndim = len(self._sizes)
    if ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, ndim, "slice")
    if step <= 0:
        raise ValueError("slice: step must be greater than zero")
    size = self._sizes[d]
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    length = (end - start + step - 1) // step
    sizes = list(self._sizes)
    strides = list(self._strides)
    sizes[d] = length
    strides[d] = self._strides[d] * step
    return _new_view(self, sizes, strides, self._offset + start * self._strides[d])


def split(self, split_size, dim=0):
    """Views of consecutive pieces along ``dim``: each ``split_size`` long (the last may
    be shorter), or of the lengths in the list ``split_size``."""
    d = wrap_dim(dim, len(self._sizes), "split")
    size = self._sizes[d]
    if isinstance(split_size, int):
        if split_size < 0 or (split_size == 0 and size != 0):
            raise RuntimeError(
                f"split: split_size can only be 0 if dimension size is 0, "
                f"but got dimension size of {size}"
            )
        step = max(split_size, 1)
        starts = range(0, size, step) if size else [0]
        return tuple(slice(self, d, s, min(s + step, size)) for s in starts)
    sections = list(split_size)
    if sum(sections) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
            f"at dimension {d}), but got split_sizes={sections}"
        )
    pieces, start = [], 0
    for length in sections:
        pieces.append(slice(self, d, start, start + length))
        start += length
    return tuple(pieces)


def unbind(self, dim=0):
    """Views of every index along ``dim``, that dimension removed."""
    d = wrap_dim(dim, len(self._sizes), "unbind")
    return tuple(select(self, d, i) for i in range(self._sizes[d]))


def diagonal(self, offset=0, dim1=0, dim2=1):
    ndim = len(self._sizes)
    d1, d2 = wrap_dim(dim1, ndim, "diagonal"), wrap_dim(dim2, ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size1, size2 = self._sizes[d1], self._sizes[d2]
    if offset >= 0:
        length = max(min(size1, size2 - offset), 0)
    else:
        length = max(min(size1 + offset, size2), 0)
    storage_offset = self._offset
    if length > 0:
        if offset >= 0:
            storage_offset += offset * self._strides[d2]
        else:
            storage_offset -= offset * self._strides[d1]
    keep = [d for d in range(ndim) if d not in (d1, d2)]
    sizes = [self._sizes[d] for d in keep] + [length]
    strides = [self._strides[d] for d in keep] + [self._strides[d1] + self._strides[d2]]
    return _new_view(self, sizes, strides, storage_offset)


def unfold(self, dimension, size, step):
    ndim = len(self._sizes)
    d = wrap_dim(dimension, ndim, "unfold")
    dim_size = self._sizes[d] if ndim else 1
    if size > dim_size:
        raise RuntimeError(
            f"unfold: maximum size for tensor at dimension {d} is {dim_size} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if ndim == 0:
        return _new_view(self, (size,), (1,))
    sizes, strides = list(self._sizes), list(self._strides)
    sizes[d] = (dim_size - size) // step + 1
    strides[d] = self._strides[d] * step
    return _new_view(self, sizes + [size], strides + [self._strides[d]])


def as_strided(self, size, stride, storage_offset=None):
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"as_strided: mismatch in length of strides and shape ({len(stride)} vs {len(size)})"
        )
    offset = self._offset if storage_offset is None else storage_offset
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment")
    needed = (
        0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    )
    if needed > self._storage.size:
        raise RuntimeError(
            f"as_strided: sizes {format_shape(size)}, strides {format_shape(stride)}, storage "
            f"offset {offset}, and itemsize {self.dtype.itemsize} requiring a storage size of "
            f"{needed * self.dtype.itemsize} are out of bounds for storage of size "
            f"{self._storage.nbytes()}"
        )
    return _new_view(self, size, stride, offset)


def alias(self):
    """A view of all of ``self`` (what ``detach`` returns, minus the base)."""
    return _new_view(self, self._sizes, self._strides)
