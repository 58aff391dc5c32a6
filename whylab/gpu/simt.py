"""A SIMT executor: CUDA's grid of blocks of threads, run on NumPy, every access recorded.

A kernel is a Python function of a :class:`Threads` context and its arguments.
It is written as the code of *one* thread (``i = t.blockIdx.x * t.blockDim.x +
t.threadIdx.x``), but the executor runs all threads of the grid at once: every
thread-dependent value is a NumPy array with one entry per thread, so one line
of the kernel runs as one vectorised NumPy operation. Because of that, control
flow that depends on the thread is written as a mask: ``t.load(a, i, mask)`` and
``t.store(out, i, value, mask)`` act only on the lanes where ``mask`` holds, as
the predicated instructions a GPU compiles an ``if (i < n)`` into.

Threads are numbered as CUDA does (x fastest, then y, then z); warps are runs of
32 consecutive thread numbers within a block. Each load or store is reported to
an :class:`~whylab.gpu.access.AccessLog` warp by warp: which elements, how many
32-byte sectors, which thread wrote what.

Shared memory (``t.shared``) holds one copy per block. ``t.syncthreads()`` marks
a barrier. Since every thread runs each line together with all the others
(lockstep), a missing barrier never changes a result here, while on a GPU
warps drift apart and it does; instead, the executor checks every barrier
interval for two different threads of a block touching the same shared element
with at least one write, and records each such pair as a shared-memory race.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from whylab.gpu.access import WARP_SIZE, AccessLog, GlobalArray

MAX_THREADS_PER_BLOCK = 1024  # CUDA's limit on every current GPU


@dataclass(frozen=True)
class Dim3:
    """``threadIdx``, ``blockIdx``, ``blockDim`` or ``gridDim``: ints or per-thread arrays."""

    x: object
    y: object = 0
    z: object = 0


def as_dim3(value: int | tuple[int, ...], what: str) -> tuple[int, int, int]:
    sizes = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(sizes) <= 3 or any(not isinstance(s, int) or s < 1 for s in sizes):
        raise ValueError(f"launch: {what} must be 1 to 3 positive ints, got {value!r}")
    sizes = (*sizes, 1, 1)[:3]
    if what == "block" and sizes[0] * sizes[1] * sizes[2] > MAX_THREADS_PER_BLOCK:
        raise ValueError(f"launch: a block has at most {MAX_THREADS_PER_BLOCK} threads, "
                         f"got {value!r}")
    return sizes


@dataclass
class SharedRace:
    """Two threads of one block touching one shared element in one barrier interval."""

    array: str
    block: int
    element: int
    threads: tuple[int, int]
    interval: int


class SharedArray:
    """A ``__shared__`` array: one copy per block, indexed by per-thread index arrays."""

    def __init__(self, threads: Threads, name: str, size: int, dtype):
        self.threads = threads
        self.name = name
        self.size = size
        self.data = np.zeros((threads.blocks, size), dtype=dtype)
        self._interval: list[tuple[np.ndarray, np.ndarray, bool]] = []

    def __getitem__(self, index) -> np.ndarray:
        index = self.threads.lanes(index)
        self._interval.append((self.threads.block_of_thread, index, False))
        return self.data[self.threads.block_of_thread, index]

    def __setitem__(self, index, value) -> None:
        index = self.threads.lanes(index)
        self._interval.append((self.threads.block_of_thread, index, True))
        self.data[self.threads.block_of_thread, index] = value

    def close_interval(self, interval: int) -> list[SharedRace]:
        """The races among the accesses since the last barrier; then forget them.

        An element is racy when two different threads of its block touched it in this
        interval and at least one of the touches was a write.
        """
        accesses, self._interval = self._interval, []
        if not any(is_write for _, _, is_write in accesses):
            return []
        thread = self.threads.thread_in_block
        keys = np.concatenate([block * self.size + index for block, index, _ in accesses])
        who = np.concatenate([thread for _ in accesses])
        written = np.concatenate([np.full(index.size, is_write) for _, index, is_write
                                  in accesses])
        distinct = np.unique(keys * MAX_THREADS_PER_BLOCK + who)
        element_keys, toucher_counts = np.unique(distinct // MAX_THREADS_PER_BLOCK,
                                                 return_counts=True)
        racy = element_keys[(toucher_counts > 1) & np.isin(element_keys, keys[written])]
        races = []
        for key in racy:
            pair = np.unique(who[keys == key])[:2]
            races.append(SharedRace(self.name, int(key // self.size), int(key % self.size),
                                    (int(pair[0]), int(pair[1])), interval))
        return races


@dataclass
class Threads:
    """What a kernel sees: its indices, global memory access, shared memory, barriers."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    log: AccessLog
    shared_races: list[SharedRace] = field(default_factory=list)
    barriers: int = 0

    def __post_init__(self) -> None:
        per_block = self.block[0] * self.block[1] * self.block[2]
        self.blocks = self.grid[0] * self.grid[1] * self.grid[2]
        self.count = per_block * self.blocks
        thread = np.arange(self.count)
        self.thread_in_block = thread % per_block
        self.block_of_thread = thread // per_block
        bx, by, _ = self.block
        gx, gy, _ = self.grid
        self.threadIdx = Dim3(self.thread_in_block % bx, self.thread_in_block // bx % by,
                              self.thread_in_block // (bx * by))
        self.blockIdx = Dim3(self.block_of_thread % gx, self.block_of_thread // gx % gy,
                             self.block_of_thread // (gx * gy))
        self.blockDim = Dim3(*self.block)
        self.gridDim = Dim3(*self.grid)
        warps_per_block = -(-per_block // WARP_SIZE)
        self.warp = self.block_of_thread * warps_per_block + self.thread_in_block // WARP_SIZE
        self.global_thread = thread
        self._shared: list[SharedArray] = []

    def lanes(self, value) -> np.ndarray:
        """``value`` as one entry per thread (a scalar is the same for every thread)."""
        return np.broadcast_to(np.asarray(value), (self.count,))

    def load(self, array: GlobalArray, index, mask=True, other=0) -> np.ndarray:
        """Each active thread reads ``array[index]``; inactive ones get ``other``."""
        index = self.lanes(index).astype(np.int64)
        live = self.log.log("load", array, index, self.lanes(mask).astype(bool), self.warp)
        values = np.full(self.count, other, dtype=array.data.dtype)
        values[live] = array.data[index[live]]
        return values

    def store(self, array: GlobalArray, index, value, mask=True) -> None:
        """Each active thread writes ``value`` to ``array[index]`` (out of bounds: recorded,
        not written)."""
        index = self.lanes(index).astype(np.int64)
        live = self.log.log("store", array, index, self.lanes(mask).astype(bool), self.warp,
                            writer=self.global_thread)
        array.data[index[live]] = self.lanes(value)[live]

    def shared(self, name: str, size: int, dtype=np.float64) -> SharedArray:
        """``__shared__ dtype name[size]`` (one per block)."""
        array = SharedArray(self, name, size, dtype)
        self._shared.append(array)
        return array

    def syncthreads(self) -> None:
        """``__syncthreads()``: ends a barrier interval (checked for shared-memory races)."""
        for array in self._shared:
            self.shared_races += array.close_interval(self.barriers)
        self.barriers += 1


def launch(kernel: Callable[..., None], grid, block, *args, log: AccessLog | None = None
           ) -> Threads:
    """Run ``kernel[grid, block](*args)``; return the context (its log, barriers, races)."""
    threads = Threads(as_dim3(grid, "grid"), as_dim3(block, "block"), log or AccessLog())
    kernel(threads, *args)
    threads.syncthreads()  # the kernel's end closes the last barrier interval
    return threads
