"""Loop order and blocking in matrix multiplication, as compiled loops and a cache model.

* :mod:`~whylab.numerics.loops.orders` -- the six loop orders of C += A·B and
  the blocked loops, compiled with numba so that loop order shows in wall time;
* :mod:`~whylab.numerics.loops.packing` -- Goto / van de Geijn packing of blocks
  into contiguous buffers, with a register-tile micro-kernel;
* :mod:`~whylab.numerics.loops.cache_sim` -- a set-associative LRU cache that
  replays the address trace of those loops and counts misses per array;
* :func:`~whylab.numerics.loops.warmup.compile_all` -- compile all of it now
  (numba otherwise compiles each kernel on its first call).
"""

from whylab.numerics.loops.cache_sim import CacheStats, access_trace, simulate_matmul
from whylab.numerics.loops.orders import (
    LOOP_ORDERS,
    WorkCount,
    block_schedule,
    matmul_blocked,
    matmul_interpreted,
    matmul_loop,
)
from whylab.numerics.loops.packing import MR, NR, matmul_packed, pack_a, pack_b
from whylab.numerics.loops.warmup import compile_all

__all__ = [
    "LOOP_ORDERS",
    "MR",
    "NR",
    "CacheStats",
    "WorkCount",
    "access_trace",
    "block_schedule",
    "compile_all",
    "matmul_blocked",
    "matmul_interpreted",
    "matmul_loop",
    "matmul_packed",
    "pack_a",
    "pack_b",
    "simulate_matmul",
]
