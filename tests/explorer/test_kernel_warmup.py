"""The numba kernels are compiled in the fork server, so a worker's first run compiles nothing."""

from __future__ import annotations

import re
from pathlib import Path

from loop_helpers import run_async

import whylab
from whylab.explorer.runs.workers import Job, WorkerPool
from whylab.numerics.kernel_warmup import KERNEL_MODULES, entry_kernels, warm

PACKAGE = Path(whylab.__file__).resolve().parent
PROBE = Path(__file__).resolve().parent / "fixture_kernels" / "kernel_probe"
# Builds a fresh dispatcher on every run to time the compile itself: never warmed.
MEASURES_THE_COMPILE = "whylab.topics.benchmarking.warmup_experiment"
# numba's CUDA target, run under its simulator in a process of its own: nothing to warm here.
CUDA_SIMULATOR_KERNELS = ("whylab.gpu.simulators.numba_kernels", "whylab.gpu.simulators.runner")
USES_NUMBA = re.compile(r"^\s*(import numba|from numba|from whylab\.numerics\._jit )", re.M)


def test_every_module_with_numba_kernels_is_warmed():
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(("whylab", *path.relative_to(PACKAGE).with_suffix("").parts))
        if module.endswith("._jit") or module in (MEASURES_THE_COMPILE, *CUDA_SIMULATOR_KERNELS):
            continue
        if USES_NUMBA.search(path.read_text(encoding="utf-8")):
            found.add(module)
    assert found == set(KERNEL_MODULES)


def test_warm_compiles_every_kernel_called_from_python():
    warm()
    assert all(kernel.signatures for kernel in entry_kernels().values())
    assert len(entry_kernels()) == 13  # 6 loop orders, blocked, 2 packers, packed, replay, 2 sym


def test_a_worker_runs_its_first_job_with_every_kernel_already_compiled():
    async def probe():
        pool = WorkerPool(size=1, memory_limit_mb=0, max_queue=1)
        await pool.start()
        try:
            return await pool.submit(Job(str(PROBE), "compiled", {}, 10.0))
        finally:
            await pool.close()

    outcome = run_async(probe)
    checks = outcome.payload["checks"]
    assert len(checks) == len(entry_kernels())
    not_compiled = [c["id"] for c in checks if not c["passed"]]
    assert not not_compiled, f"compiled on first use in the worker: {not_compiled}"
