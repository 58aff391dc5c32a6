"""The SIMT kernels of :mod:`whylab.gpu.simt_kernels`, written for numba's CUDA target.

Plain functions (``cuda.jit`` is applied by :mod:`whylab.gpu.simulators.runner`,
after ``NUMBA_ENABLE_CUDASIM=1`` is set), with the same index arithmetic as their
NumPy twins and an ``if`` where those use masks. Each records its own stores:
``writes[i]`` counts them (an atomic add) and ``writer[i]`` keeps the global
thread number of the last one. Shared arrays are declared on separate lines, as
the simulator requires (it tells allocations apart by source line).
"""

from __future__ import annotations

from numba import cuda, float32


def vector_add(a, b, out, writes, writer, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i]
        cuda.atomic.add(writes, i, 1)
        writer[i] = i


def vector_add_clamped(a, b, out, writes, writer, n):
    i = min(cuda.grid(1), n - 1)
    out[i] = a[i] + b[i]
    cuda.atomic.add(writes, i, 1)
    writer[i] = cuda.grid(1)


def matmul_naive(a, b, c, writes, writer, n):
    col, row = cuda.grid(2)
    if row < n and col < n:
        total = 0.0
        for k in range(n):
            total += a[row * n + k] * b[k * n + col]
        c[row * n + col] = total
        cuda.atomic.add(writes, row * n + col, 1)
        writer[row * n + col] = row * n + col


TILE = 8  # shared arrays need a size known when the kernel is compiled


def matmul_tiled(a, b, c, writes, writer, n):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    a_tile = cuda.shared.array(TILE * TILE, float32)
    b_tile = cuda.shared.array(TILE * TILE, float32)
    total = 0.0
    for start in range(0, n, TILE):
        a_col = start + tx
        b_row = start + ty
        a_tile[ty * TILE + tx] = a[row * n + a_col] if row < n and a_col < n else 0.0
        b_tile[ty * TILE + tx] = b[b_row * n + col] if b_row < n and col < n else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            total += a_tile[ty * TILE + k] * b_tile[k * TILE + tx]
        cuda.syncthreads()
    if row < n and col < n:
        c[row * n + col] = total
        cuda.atomic.add(writes, row * n + col, 1)
        writer[row * n + col] = row * n + col
