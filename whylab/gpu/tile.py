"""A tile executor in Triton's style: programs over blocks of data, every access recorded.

A tile kernel is written against a module called ``tl`` with Triton's names
(``tl.program_id``, ``tl.arange``, ``tl.load``/``tl.store`` with masks,
``tl.dot``, ``tl.zeros``, ``tl.atomic_add``, ...). :func:`launch` runs such a
kernel with ``tl`` bound to a :class:`TileLanguage`, one program after another,
so the *same function* runs under Triton when its ``tl`` is ``triton.language``
(see :mod:`whylab.gpu.tile_kernels`). A pointer argument is a
:class:`Pointer`; adding an integer array to it makes a block of pointers,
which is what ``tl.load`` and ``tl.store`` take.

Each program's load or store is one request in the
:class:`~whylab.gpu.access.AccessLog` (its unit is the program's number, its
sectors those the whole block touches): how Triton spreads a block over the
program's warps is the compiler's choice, which this executor does not model.

What it leaves out: no compilation, no ``num_warps`` or pipelining, dtypes as
NumPy has them (``tl.dot`` multiplies in the inputs' dtype), only the subset of
``tl`` listed on :class:`TileLanguage`.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from itertools import product

import numpy as np

from whylab.gpu.access import AccessLog, GlobalArray


class Pointer:
    """A pointer, or a block of pointers, into one :class:`GlobalArray` (element offsets)."""

    def __init__(self, array: GlobalArray, offsets):
        self.array = array
        self.offsets = np.asarray(offsets, dtype=np.int64)

    def __add__(self, other) -> Pointer:
        if isinstance(other, Pointer):
            raise TypeError("tile: cannot add two pointers")
        return Pointer(self.array, self.offsets + np.asarray(other, dtype=np.int64))

    __radd__ = __add__

    def __sub__(self, other) -> Pointer:
        return self + (-np.asarray(other, dtype=np.int64))


class TileLanguage:
    """The part of ``triton.language`` the tile kernels use, over NumPy, with a log."""

    float32 = np.float32
    float64 = np.float64
    int32 = np.int32
    int64 = np.int64

    class constexpr:  # noqa: N801 (triton.language.constexpr)
        """Marks a compile-time argument in a kernel's annotations; here only a marker."""

    def __init__(self, grid: tuple[int, int, int], log: AccessLog):
        self.grid = grid
        self.log = log
        self.pid = (0, 0, 0)
        self.program = 0

    # -------------------------------------------------------------- indices

    def program_id(self, axis: int) -> int:
        return self.pid[axis]

    def num_programs(self, axis: int) -> int:
        return self.grid[axis]

    @staticmethod
    def arange(start: int, end: int) -> np.ndarray:
        return np.arange(start, end, dtype=np.int64)

    @staticmethod
    def cdiv(a: int, b: int) -> int:
        return -(-a // b)

    # -------------------------------------------------------------- values

    @staticmethod
    def zeros(shape, dtype) -> np.ndarray:
        return np.zeros(shape, dtype=dtype)

    @staticmethod
    def full(shape, value, dtype) -> np.ndarray:
        return np.full(shape, value, dtype=dtype)

    @staticmethod
    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
            raise ValueError(f"tl.dot: needs (M, K) @ (K, N), got {a.shape} @ {b.shape}")
        return a @ b

    where = staticmethod(np.where)
    minimum = staticmethod(np.minimum)
    maximum = staticmethod(np.maximum)
    exp = staticmethod(np.exp)

    @staticmethod
    def sum(x: np.ndarray, axis=None) -> np.ndarray:
        return np.sum(x, axis=axis)

    # -------------------------------------------------------------- memory

    def _lanes(self, pointer: Pointer, mask):
        offsets = pointer.offsets
        active = np.ones(offsets.shape, bool) if mask is None else np.broadcast_to(
            np.asarray(mask, bool), offsets.shape)
        units = np.full(offsets.size, self.program)
        return offsets.reshape(-1), active.reshape(-1), units

    def load(self, pointer: Pointer, mask=None, other=0.0) -> np.ndarray:
        """Read the block; masked-off (and out-of-bounds, recorded) lanes read ``other``."""
        offsets, active, units = self._lanes(pointer, mask)
        live = self.log.log("load", pointer.array, offsets, active, units)
        values = np.full(offsets.size, other, dtype=pointer.array.data.dtype)
        values[live] = pointer.array.data[offsets[live]]
        return values.reshape(pointer.offsets.shape)

    def store(self, pointer: Pointer, value, mask=None) -> None:
        """Write the block where ``mask`` holds (out of bounds: recorded, not written)."""
        offsets, active, units = self._lanes(pointer, mask)
        live = self.log.log("store", pointer.array, offsets, active, units, writer=units)
        values = np.broadcast_to(np.asarray(value), pointer.offsets.shape).reshape(-1)
        pointer.array.data[offsets[live]] = values[live]

    def atomic_add(self, pointer: Pointer, value, mask=None) -> None:
        """Add ``value`` at each address where ``mask`` holds (repeated addresses add up)."""
        offsets, active, units = self._lanes(pointer, mask)
        live = self.log.log("atomic", pointer.array, offsets, active, units)
        values = np.broadcast_to(np.asarray(value), pointer.offsets.shape).reshape(-1)
        np.add.at(pointer.array.data, offsets[live], values[live])


def launch(kernel: Callable[..., None], grid, *args, log: AccessLog | None = None,
           **constexprs) -> AccessLog:
    """Run ``kernel[grid](*args, **constexprs)`` program by program; return the access log.

    Arguments that are :class:`GlobalArray` s arrive in the kernel as :class:`Pointer` s.
    """
    sizes = (grid,) if isinstance(grid, int) else tuple(grid)
    if not 1 <= len(sizes) <= 3 or any(not isinstance(s, int) or s < 1 for s in sizes):
        raise ValueError(f"tile launch: grid must be 1 to 3 positive ints, got {grid!r}")
    sizes = (*sizes, 1, 1)[:3]
    log = log if log is not None else AccessLog()
    language = TileLanguage(sizes, log)
    bound = types.FunctionType(kernel.__code__, {**kernel.__globals__, "tl": language},
                               kernel.__name__, kernel.__defaults__, kernel.__closure__)
    pointers = [Pointer(a, 0) if isinstance(a, GlobalArray) else a for a in args]
    for program, (z, y, x) in enumerate(product(*(range(s) for s in reversed(sizes)))):
        language.pid, language.program = (x, y, z), program
        bound(*pointers, **constexprs)
    return log
