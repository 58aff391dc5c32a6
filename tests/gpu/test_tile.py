"""The tile executor: Triton's semantics for program ids, masks, pointers and dot, on NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from whylab.gpu import tile, tile_kernels
from whylab.gpu.access import place


def vector_add(n, block, grid=None):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    memory = place({"x": x, "y": y, "out": np.zeros(n), "writes": np.zeros(n, np.int64)})
    grid = grid if grid is not None else -(-n // block)
    log = tile.launch(tile_kernels.vector_add, grid, memory["x"], memory["y"], memory["out"],
                      memory["writes"], n, BLOCK=block)
    return x + y, memory, log


@pytest.mark.parametrize(("n", "block"), [(1, 16), (100, 32), (128, 128), (1000, 64)])
def test_masked_vector_add_writes_each_element_once(n, block):
    expected, memory, log = vector_add(n, block)
    assert np.array_equal(memory["out"].result(), expected)
    assert np.all(log.arrays["out"].write_count == 1)
    assert np.all(memory["writes"].result() == 1)  # the kernel's own count agrees
    assert np.array_equal(log.arrays["out"].last_writer, np.arange(n) // block)  # program ids


def test_clamped_offsets_pile_the_spare_lanes_on_the_last_element():
    n, block = 50, 16
    memory = place({"x": np.ones(n), "y": np.ones(n), "out": np.zeros(n),
                    "writes": np.zeros(n, np.int64)})
    log = tile.launch(tile_kernels.vector_add_clamped, 4, memory["x"], memory["y"],
                      memory["out"], memory["writes"], n, BLOCK=block)
    counts = log.arrays["out"].write_count
    assert counts[-1] == 4 * block - n + 1 and np.all(counts[:-1] == 1)
    assert memory["writes"].result()[-1] == counts[-1]  # atomic_add adds repeated addresses


@pytest.mark.parametrize(("n", "block"), [(16, 16), (20, 16), (45, 32), (7, 16)])
def test_tile_matmul_equals_numpy_and_loads_the_closed_form(n, block):
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    memory = place({"a": a, "b": b, "c": np.zeros((n, n)), "writes": np.zeros(n * n, np.int64)})
    grid = (-(-n // block),) * 2
    log = tile.launch(tile_kernels.matmul, grid, memory["a"], memory["b"], memory["c"],
                      memory["writes"], n, n, BLOCK_M=block, BLOCK_N=block, BLOCK_K=block)
    # the kernel accumulates in tl.float32, as Triton matmuls do
    np.testing.assert_allclose(memory["c"].result(), a @ b, rtol=1e-5, atol=1e-5 * np.sqrt(n))
    assert memory["c"].data.dtype == np.float64  # stored back in the output's own dtype
    assert log.loads("a", "b") == 2 * -(-n // block) * n * n
    assert np.all(memory["writes"].result() == 1)


def test_program_ids_run_x_fastest_like_triton_grids():
    seen = []

    def kernel(out):
        seen.append((tl.program_id(0), tl.program_id(1), tl.num_programs(0)))  # noqa: F821

    tile.launch(kernel, (3, 2), None)
    assert seen == [(x, y, 3) for y in range(2) for x in range(3)]


def test_pointer_arithmetic_and_errors():
    memory = place({"x": np.arange(10.0)})
    pointer = tile.Pointer(memory["x"], 0)
    block = 2 + pointer + np.arange(3) - 1
    assert block.offsets.tolist() == [1, 2, 3]
    with pytest.raises(TypeError, match="two pointers"):
        pointer + pointer
    with pytest.raises(ValueError, match="tl.dot"):
        tile.TileLanguage.dot(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="grid must be"):
        tile.launch(tile_kernels.vector_add, (0,))


def test_masked_off_lanes_read_other_and_out_of_bounds_is_recorded():
    memory = place({"x": np.arange(4.0), "out": np.zeros(8)})

    def kernel(x_ptr, out_ptr):
        offsets = tl.arange(0, 8)  # noqa: F821
        values = tl.load(x_ptr + offsets, mask=offsets < 2, other=-1.0)  # noqa: F821
        tl.store(out_ptr + offsets, values)  # noqa: F821
        tl.load(x_ptr + offsets)  # noqa: F821

    log = tile.launch(kernel, 1, memory["x"], memory["out"])
    assert memory["out"].result().tolist() == [0, 1] + [-1] * 6
    assert log.arrays["x"].out_of_bounds == 4
