"""Real kernel source on a CPU: numba's CUDA simulator and Triton's interpreter.

:func:`simulate` runs kernels of :mod:`~whylab.gpu.simulators.numba_kernels` under
numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) and kernels of
:mod:`whylab.gpu.tile_kernels` under Triton's interpreter (``TRITON_INTERPRET=1``),
each simulator in a fresh Python process of its own (both read their switch when
they are imported; the two processes run at the same time), and returns the
outputs and the write counts each kernel recorded itself.

Numba's documentation deprecates its built-in CUDA target in favour of NVIDIA's
``numba-cuda`` package; numba 0.68 still ships it, simulator included, and that is
what runs here (``numba-cuda`` is not needed for the simulator). Should a later
numba drop ``numba.cuda``, :func:`available` says so and the cross-check is not
applicable until ``numba-cuda`` is installed.

What they can and cannot show. Numba's simulator runs each block's threads as
Python threads, one block at a time, with real barriers: its outputs and write
maps follow CUDA's semantics, but launches are synchronous, event timings are
not real, it has no memory system (no sectors, no coalescing) and no timing.
Triton's interpreter runs each program with NumPy over whole blocks: outputs and
write maps, no timing, no thread mapping, no memory system either.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

TIMEOUT_S = 240
SIMULATORS = ("numba", "triton")


class SimulatorUnavailable(RuntimeError):
    """The simulator's package is not installed, or its run failed."""


def available(simulator: str) -> bool:
    """Whether ``simulator`` ("numba" or "triton") can run here (its packages import)."""
    needs = {"numba": ("numba", "numba.cuda"), "triton": ("triton", "torch")}[simulator]
    return all(importlib.util.find_spec(module) is not None for module in needs)


@dataclass(frozen=True)
class Case:
    """One kernel run: its inputs (float32), sizes and launch shape."""

    kernel: str
    a: tuple[float, ...]
    b: tuple[float, ...]
    n: int
    block: int
    out_size: int
    grid: int = 0

    @classmethod
    def of(cls, kernel: str, a, b, *, n: int, block: int, out_size: int, grid: int = 0) -> Case:
        return cls(kernel, tuple(np.asarray(a, np.float32).ravel().tolist()),
                   tuple(np.asarray(b, np.float32).ravel().tolist()), n, block, out_size, grid)

    def request(self, simulator: str) -> dict:
        return {"simulator": simulator, "kernel": self.kernel, "a": list(self.a),
                "b": list(self.b), "n": self.n, "block": self.block,
                "out_size": self.out_size, "grid": self.grid}


@functools.lru_cache(maxsize=16)
def simulate(cases: tuple[tuple[str, tuple[Case, ...]], ...]) -> dict[str, list[dict]]:
    """Run each simulator's cases, the simulators side by side in their own processes.

    ``cases`` pairs a simulator name with its cases; returns, per simulator, one result
    per case: ``out`` and ``writes`` arrays (numba also ``writer``). Cached within the
    process, since the topics' controls rerun an experiment with this side unchanged.
    Raises :class:`SimulatorUnavailable` if a simulator is missing or its run fails.
    """
    for simulator, _ in cases:
        if not available(simulator):
            raise SimulatorUnavailable(f"{simulator} is not installed")
    with ThreadPoolExecutor(max_workers=len(cases) or 1) as pool:
        futures = {simulator: pool.submit(_run, simulator, own) for simulator, own in cases}
        return {simulator: future.result() for simulator, future in futures.items()}


def _run(simulator: str, cases: tuple[Case, ...]) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    payload = json.dumps([case.request(simulator) for case in cases])
    try:
        done = subprocess.run([sys.executable, "-m", "whylab.gpu.simulators.runner"],
                              input=payload, capture_output=True, text=True, env=env,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as error:
        raise SimulatorUnavailable(f"{simulator}: timed out after {TIMEOUT_S} s") from error
    if done.returncode != 0:
        raise SimulatorUnavailable(f"{simulator} failed: {done.stderr[-2000:]}")
    return [{key: np.asarray(value) if isinstance(value, list) else value
             for key, value in result.items()} for result in json.loads(done.stdout)]
