"""SIMT kernels for :mod:`whylab.gpu.simt`: one thread's code, run for all threads at once.

Each has a twin written for numba's CUDA target in
:mod:`whylab.gpu.simulators.numba_kernels` (the same index arithmetic, with ``if``
where these use masks), which runs under numba's CUDA simulator.
"""

from __future__ import annotations

from whylab.gpu.access import GlobalArray
from whylab.gpu.simt import Threads


def global_index(t: Threads):
    """``blockIdx.x * blockDim.x + threadIdx.x`` (numba: ``cuda.grid(1)``)."""
    return t.blockIdx.x * t.blockDim.x + t.threadIdx.x


def vector_add(t: Threads, a: GlobalArray, b: GlobalArray, out: GlobalArray, n: int) -> None:
    """``out[i] = a[i] + b[i]`` for ``i < n``: the bounds check is the store's mask."""
    i = global_index(t)
    inside = i < n
    t.store(out, i, t.load(a, i, inside) + t.load(b, i, inside), inside)


def vector_add_unguarded(t: Threads, a: GlobalArray, b: GlobalArray, out: GlobalArray,
                         n: int) -> None:
    """The same without a bounds check: threads past ``n`` access past the arrays' end."""
    i = global_index(t)
    t.store(out, i, t.load(a, i) + t.load(b, i))


def vector_add_clamped(t: Threads, a: GlobalArray, b: GlobalArray, out: GlobalArray,
                       n: int) -> None:
    """Threads past ``n`` clamped to the last element instead of masked: it is written again."""
    i = global_index(t)
    i = i.clip(max=n - 1)
    t.store(out, i, t.load(a, i) + t.load(b, i))


def strided_copy(t: Threads, a: GlobalArray, out: GlobalArray, n: int, stride: int,
                 offset: int) -> None:
    """``out[i] = a[offset + i * stride]``: thread i of a warp reads ``stride`` elements on."""
    i = global_index(t)
    inside = i < n
    t.store(out, i, t.load(a, offset + i * stride, inside), inside)


def matmul_naive(t: Threads, a: GlobalArray, b: GlobalArray, c: GlobalArray, n: int) -> None:
    """One thread per element of C = A B (n × n, row-major); every operand from global memory."""
    row = t.blockIdx.y * t.blockDim.y + t.threadIdx.y
    col = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
    inside = (row < n) & (col < n)
    total = 0.0
    for k in range(n):
        total = total + t.load(a, row * n + k, inside) * t.load(b, k * n + col, inside)
    t.store(c, row * n + col, total, inside)


def matmul_tiled(t: Threads, a: GlobalArray, b: GlobalArray, c: GlobalArray, n: int,
                 tile: int, barriers: bool = True) -> None:
    """C = A B with ``tile × tile`` blocks staged in shared memory (blockDim = (tile, tile)).

    Each block walks the ⌈n / tile⌉ tiles of its rows of A and columns of B; each thread
    copies one element of each tile to shared memory (zero outside the matrix), the block
    meets at a barrier, then every thread reads a row and a column of the shared tiles.
    ``barriers=False`` leaves out both ``__syncthreads()`` (a topic's control).
    """
    tx, ty = t.threadIdx.x, t.threadIdx.y
    row = t.blockIdx.y * tile + ty
    col = t.blockIdx.x * tile + tx
    a_tile = t.shared("a_tile", tile * tile, a.data.dtype)
    b_tile = t.shared("b_tile", tile * tile, b.data.dtype)
    total = 0.0
    for start in range(0, n, tile):
        a_col, b_row = start + tx, start + ty
        a_tile[ty * tile + tx] = t.load(a, row * n + a_col, (row < n) & (a_col < n))
        b_tile[ty * tile + tx] = t.load(b, b_row * n + col, (b_row < n) & (col < n))
        if barriers:
            t.syncthreads()
        for k in range(tile):
            total = total + a_tile[ty * tile + k] * b_tile[k * tile + tx]
        if barriers:
            t.syncthreads()
    t.store(c, row * n + col, total, (row < n) & (col < n))
