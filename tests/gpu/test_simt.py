"""The SIMT executor against CUDA's rules and NumPy: numbering, warps, sectors, shared memory."""

from __future__ import annotations

import numpy as np
import pytest

from whylab.gpu import simt, simt_kernels
from whylab.gpu.access import AccessLog, GlobalArray, place


def brute_force_sectors(addresses_by_warp: dict[int, list[int]]) -> list[int]:
    """Distinct 32-byte sectors per warp, by Python sets (independent of the executor)."""
    return [len({address // 32 for address in addresses}) for _, addresses in
            sorted(addresses_by_warp.items())]


def test_threads_are_numbered_x_fastest_and_warps_are_32_consecutive_threads():
    seen = {}

    def kernel(t):
        seen["x"], seen["y"] = t.threadIdx.x.copy(), t.threadIdx.y.copy()
        seen["bx"], seen["warp"] = t.blockIdx.x.copy(), t.warp.copy()

    simt.launch(kernel, (2, 1), (16, 4))
    assert seen["x"][:17].tolist() == list(range(16)) + [0]
    assert seen["y"][:17].tolist() == [0] * 16 + [1]
    # 64 threads per block: warps 0-1 in block 0, 2-3 in block 1
    assert seen["warp"].tolist() == [w for w in range(4) for _ in range(32)]
    assert seen["bx"].tolist() == [0] * 64 + [1] * 64


@pytest.mark.parametrize("seed", range(6))
def test_vector_add_equals_numpy_for_random_sizes(seed):
    rng = np.random.default_rng(seed)
    n, block = int(rng.integers(1, 700)), int(rng.choice([1, 7, 32, 96, 256]))
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    memory = place({"a": a, "b": b, "out": np.zeros(n)})
    run = simt.launch(simt_kernels.vector_add, -(-n // block), block, memory["a"], memory["b"],
                      memory["out"], n)
    assert np.array_equal(memory["out"].result(), a + b)
    record = run.log.arrays["out"]
    assert np.all(record.write_count == 1) and record.out_of_bounds == 0
    assert np.array_equal(record.last_writer, np.arange(n))  # thread i wrote element i


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("stride", [0, 1, 2, 3, 5, 8, 13, 32])
@pytest.mark.parametrize("offset", [0, 1, 7])
def test_sectors_per_warp_request_match_a_brute_force_count(dtype, stride, offset):
    threads = 96  # three warps
    itemsize = np.dtype(dtype).itemsize
    memory = place({"pad": np.zeros(3, np.float64),
                    "a": np.zeros(offset + threads * max(stride, 1) + 1, dtype),
                    "out": np.zeros(threads, dtype)})
    run = simt.launch(simt_kernels.strided_copy, 1, threads, memory["a"], memory["out"],
                      threads, stride, offset)
    base = memory["a"].base_address
    by_warp = {w: [base + (offset + lane * stride) * itemsize
                   for lane in range(w * 32, w * 32 + 32)] for w in range(3)}
    measured = [r.sectors for r in run.log.requests if r.kind == "load"]
    assert measured == brute_force_sectors(by_warp)


def test_a_partial_last_warp_counts_only_its_active_lanes():
    memory = place({"a": np.zeros(40, np.float32), "out": np.zeros(40, np.float32)})
    run = simt.launch(simt_kernels.strided_copy, 1, 64, memory["a"], memory["out"], 40, 1, 0)
    loads = [(r.elements, r.sectors) for r in run.log.requests if r.kind == "load"]
    assert loads == [(32, 4), (8, 1)]


@pytest.mark.parametrize(("n", "tile"), [(5, 2), (16, 4), (19, 8), (33, 16)])
def test_matmuls_equal_numpy_and_count_the_closed_form_loads(n, tile):
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    grid = (-(-n // tile),) * 2
    for kernel, extra, loads in [(simt_kernels.matmul_naive, (), 2 * n),
                                 (simt_kernels.matmul_tiled, (tile,), 2 * -(-n // tile))]:
        memory = place({"a": a, "b": b, "c": np.zeros((n, n))})
        run = simt.launch(kernel, grid, (tile, tile), memory["a"], memory["b"], memory["c"], n,
                          *extra)
        np.testing.assert_allclose(memory["c"].result(), a @ b, rtol=1e-12, atol=1e-12)
        assert run.log.loads("a", "b") == loads * n * n
        assert run.shared_races == []


def test_missing_barriers_are_reported_as_shared_memory_races():
    n, tile = 8, 4
    memory = place({"a": np.ones((n, n)), "b": np.ones((n, n)), "c": np.zeros((n, n))})
    run = simt.launch(simt_kernels.matmul_tiled, (2, 2), (tile, tile), memory["a"], memory["b"],
                      memory["c"], n, tile, False)
    assert np.all(memory["c"].result() == n)  # lockstep hides the bug from the result ...
    assert run.shared_races  # ... the interval check does not
    race = run.shared_races[0]
    assert race.array in ("a_tile", "b_tile") and race.threads[0] != race.threads[1]


def test_two_threads_writing_one_shared_element_race_and_own_elements_do_not():
    def kernel(t, same):
        cells = t.shared("cells", 64)
        cells[0 if same else t.threadIdx.x] = 1.0
        t.syncthreads()
        _ = cells[t.threadIdx.x]

    assert simt.launch(kernel, 1, 64, True).shared_races
    assert not simt.launch(kernel, 1, 64, False).shared_races


def test_out_of_bounds_stores_are_recorded_and_not_written():
    memory = place({"a": np.ones(10), "b": np.ones(10), "out": np.zeros(10)})
    run = simt.launch(simt_kernels.vector_add_unguarded, 1, 16, memory["a"], memory["b"],
                      memory["out"], 10)
    assert run.log.arrays["out"].out_of_bounds == 6
    assert run.log.arrays["a"].out_of_bounds == 6
    assert np.all(memory["out"].result() == 2.0)


def test_bad_launches_are_refused_with_the_bound():
    with pytest.raises(ValueError, match="grid must be 1 to 3 positive ints"):
        simt.launch(lambda t: None, 0, 32)
    with pytest.raises(ValueError, match="at most 1024 threads"):
        simt.launch(lambda t: None, 1, (64, 32))
    with pytest.raises(ValueError, match="multiple of 256"):
        GlobalArray("x", np.zeros(3), base_address=4)


def test_access_log_means_and_filters():
    log = AccessLog()
    assert log.sectors_per_request("load", "nothing") == 0.0 and log.loads() == 0
