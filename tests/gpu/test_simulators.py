"""The executors against numba's CUDA simulator and Triton's interpreter, on the same kernels.

Each simulator runs in a subprocess (see whylab.gpu.simulators); the results are cached per
process, so the simt-vs-tile topic's tests reuse the same runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from whylab.gpu.simulators import Case, SimulatorUnavailable, available, simulate
from whylab.topics.simt_vs_tile.simulators_experiment import (
    PAIRS,
    _inputs,
    executor_runs,
    simulator_cases,
)

needs_numba = pytest.mark.skipif(not available("numba"), reason="numba is not installed")
needs_triton = pytest.mark.skipif(
    not available("triton"),
    reason="triton (and torch) not installed: pip install 'triton>=3.9,<3.10' for the "
           "Triton-interpreter cross-check")


@pytest.fixture(scope="module")
def runs():
    x, y, a, b = _inputs()
    return executor_runs(x, y, a, b), simulate(simulator_cases(x, y, a, b))


@needs_numba
def test_numba_simulator_agrees_with_the_simt_executor(runs):
    ours, theirs = runs
    for (kernel, key), result in zip(PAIRS["numba"], theirs["numba"], strict=True):
        out, counts = ours[key]
        np.testing.assert_allclose(out, result["out"], rtol=1e-5, err_msg=kernel)
        assert np.array_equal(counts, result["writes"]), kernel
    clamped = theirs["numba"][1]
    assert clamped["writes"][-1] == 64 - 50 + 1  # 4 blocks of 16 threads, n = 50


@needs_triton
def test_triton_interpreter_agrees_with_the_tile_executor_on_the_same_source(runs):
    ours, theirs = runs
    assert theirs["triton"][0]["version"].startswith("3.9")
    for (kernel, key), result in zip(PAIRS["triton"], theirs["triton"], strict=True):
        out, counts = ours[key]
        np.testing.assert_allclose(out, result["out"], rtol=1e-5, err_msg=kernel)
        assert np.array_equal(counts, result["writes"]), kernel


@needs_numba
def test_a_failing_simulator_run_is_reported_not_hidden():
    bad = Case.of("no_such_kernel", [1.0], [1.0], n=1, block=1, out_size=1, grid=1)
    with pytest.raises(SimulatorUnavailable, match="numba failed"):
        simulate((("numba", (bad,)),))
