"""Compile the engine's numba kernels before a worker takes its first run.

numba compiles a kernel on its first call: the loop-order kernels take a second
or two with numba's disk cache filled and up to about 40 s with a cold cache on
a loaded machine (37.7 s measured here, 2 cores shared). A reader whose run
pays that waits, and a run with a few seconds' time limit fails. :func:`warm`
compiles every kernel once, on tiny inputs of the types the experiments use
(float64, C order).

The worker pool runs it in its fork server (the preload module
:mod:`whylab.numerics.warmed_kernels`), before the fork server forks any
worker: the machine code is in the fork server's memory, so every worker forked
from it -- the first ones and every replacement after a timeout or a crash,
in ``whylab serve`` and in each ``whylab worker`` -- starts with the kernels
compiled. How that fits the fork server's start allowance is said at
:data:`whylab.explorer.runs.workers.FORKSERVER_START_S`.

The kernels (``grep -rn numba whylab``): the loop orders, blocked and packed
products and the cache simulator of :mod:`whylab.numerics.loops` (its
:func:`~whylab.numerics.loops.compile_all`), and the packed symmetric
products of :mod:`whylab.numerics.symmetric` (one kernel per triangle; counting is a
flag). Not
warmed, on purpose: the benchmarking topic's JIT warm-up experiment, which
builds a fresh dispatcher on every run to measure the compile itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Modules holding numba kernels, each warmed below (a test checks the list is complete).
KERNEL_MODULES = (
    "whylab.numerics.loops.cache_sim",
    "whylab.numerics.loops.orders",
    "whylab.numerics.loops.packing",
    "whylab.numerics.symmetric",
)


def warm() -> None:
    """Compile every kernel of :data:`KERNEL_MODULES` (a few seconds with numba's disk cache)."""
    from whylab.numerics.loops import compile_all
    from whylab.numerics.symmetric import SymmetricWork, sym_gaxpy

    compile_all()
    packed, x = np.ones(3), np.ones(2)  # a 2 x 2 symmetric matrix, packed
    for uplo in ("L", "U"):
        sym_gaxpy(packed, x, uplo=uplo)
        sym_gaxpy(packed, x, uplo=uplo, count=SymmetricWork())


def entry_kernels() -> dict[str, Any]:
    """The kernels called from Python, by name: what a first run would otherwise compile.

    (Helpers called only from other kernels are compiled into their callers.)
    """
    from whylab.numerics import symmetric
    from whylab.numerics.loops import cache_sim, orders, packing

    kernels: dict[str, Any] = {f"orders.{name}": orders._LOOPS[name] for name in orders.LOOP_ORDERS}
    kernels["orders.blocked_ikj"] = orders._blocked_ikj
    kernels["packing.pack_a_into"] = packing._pack_a_into
    kernels["packing.pack_b_into"] = packing._pack_b_into
    kernels["packing.packed_gemm"] = packing._packed_gemm
    kernels["cache_sim.replay"] = cache_sim._replay
    for uplo, kernel in symmetric.KERNELS.items():
        kernels[f"symmetric.{uplo}"] = kernel
    return kernels
