"""Storage: the flat, one-dimensional buffer that tensors view.

A tensor never owns memory directly; it owns a reference to a :class:`Storage`
plus the sizes, strides and offset that say which elements of the storage it
shows. Views share the storage object, so ``t.untyped_storage()`` is the same
object for a tensor and all its views. A storage never reallocates, which is
why a tensor may cache the NumPy view it builds over it.

Meta storages have a size but no data.
"""

from __future__ import annotations

_new_object = object.__new__


class Storage:
    """``data`` is a 1-D NumPy array (None on the meta device) of ``size`` elements."""

    __slots__ = ("data", "dtype", "device", "size", "__weakref__")

    def __init__(self, data, dtype, device, size: int | None = None):
        self.data = data
        self.dtype = dtype
        self.device = device
        self.size = int(data.shape[0]) if size is None else size

    @staticmethod
    def of(data, dtype, device, size: int) -> Storage:
        """Fast constructor for the hot path (no argument processing)."""
        storage = _new_object(Storage)
        storage.data = data
        storage.dtype = dtype
        storage.device = device
        storage.size = size
        return storage

    def nbytes(self) -> int:
        """Bytes held by the storage."""
        return self.size * self.dtype.itemsize

    def data_ptr(self) -> int:
        """Address of the first element (0 for meta storages, like PyTorch)."""
        if self.data is None or self.size == 0:
            return 0
        return self.data.__array_interface__["data"][0]

    def __len__(self) -> int:
        return self.nbytes()

    def __repr__(self) -> str:
        return f"Storage(size={self.size}, dtype={self.dtype}, device={self.device})"
