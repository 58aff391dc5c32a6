"""Compile every kernel of the package ahead of use, e.g. when a server worker starts.

numba compiles on the first call, which for this package's kernels takes from
a few seconds (disk cache cold, machine idle) to most of a minute (cold cache,
machine loaded); with a warm disk cache it is a load of the stored machine
code. Calling :func:`compile_all` once per process moves that cost to a moment
when nobody is waiting for a page.
"""

from __future__ import annotations

import numpy as np

from whylab.numerics.loops.cache_sim import access_trace, simulate_matmul
from whylab.numerics.loops.orders import LOOP_ORDERS, matmul_blocked, matmul_loop
from whylab.numerics.loops.packing import matmul_packed, pack_a, pack_b


def compile_all() -> None:
    """Run each compiled kernel once on tiny inputs (float64, C order: the types used later)."""
    A = np.ones((2, 2))
    for order in LOOP_ORDERS:
        matmul_loop(A, A, order)
    matmul_blocked(A, A, 1)
    matmul_packed(A, A)
    pack_a(A, 0, 0, 2, 2)
    pack_b(A, 0, 0, 2, 2)
    simulate_matmul(2, "ijk", 8, 8, 1)
    simulate_matmul(2, "ijk", 8, 8, 1, block=1)
    access_trace(2, "ijk", 1)
