"""Index maps between a tensor and a strided view of its storage.

Several backward formulas move gradient elements to where they came from:
``as_strided``, in-place writes through a view (CopySlices), and every op that
only *picks* elements (indexing, ``diagonal``, ``unfold``...). They all reduce
to one question: *for each element of the view, which element of the source
tensor is it?* This module answers it with NumPy integer arithmetic on sizes,
strides and offsets; the formulas then move the gradient with the
differentiable ops ``scatter_add`` and ``index_select``, so the result can be
differentiated again.

Element numbers are *logical* (row-major over the tensor's sizes), whatever
the tensor's strides are; so they index ``grad.reshape(-1)``.
"""

from __future__ import annotations

import numpy as np


def storage_positions(sizes, strides, offset) -> np.ndarray:
    """The storage index of every element, as an int64 array of shape ``sizes``."""
    positions = np.full(tuple(sizes), offset, dtype=np.int64)
    for dim, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        shape = [1] * len(sizes)
        shape[dim] = size
        positions = positions + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    return positions


def source_element_index(source_geometry, view_geometry) -> np.ndarray:
    """For each element of the view (row-major), the source element it shows, or -1.

    Both geometries are ``(sizes, strides, offset)`` over the same storage. An
    element of the view that is not an element of the source gets -1. When the
    source shows a storage position twice (an expanded source) the last element
    wins, which is what assigning through such a view does too.
    """
    source_positions = storage_positions(*source_geometry).reshape(-1)
    view_positions = storage_positions(*view_geometry).reshape(-1)
    if source_positions.size == 0 or view_positions.size == 0:
        return np.full(view_positions.size, -1, dtype=np.int64)
    low = min(source_positions.min(), view_positions.min())
    high = max(source_positions.max(), view_positions.max())
    inverse = np.full(high - low + 1, -1, dtype=np.int64)
    inverse[source_positions - low] = np.arange(source_positions.size, dtype=np.int64)
    return inverse[view_positions - low]
