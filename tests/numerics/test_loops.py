"""The compiled loop orders, the blocked loops and the packed (Goto) form against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from whylab.numerics.loops import (
    LOOP_ORDERS,
    MR,
    NR,
    WorkCount,
    block_schedule,
    compile_all,
    matmul_blocked,
    matmul_loop,
    matmul_packed,
    pack_a,
    pack_b,
)

SHAPES = [(1, 1, 1), (1, 5, 1), (3, 1, 4), (7, 9, 5), (33, 17, 65), (64, 64, 64), (70, 130, 45)]


def operands(m, p, n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, p)), rng.standard_normal((p, n))


@pytest.mark.parametrize("order", LOOP_ORDERS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_order_equals_numpy(order, shape):
    A, B = operands(*shape)
    count = WorkCount()
    np.testing.assert_allclose(matmul_loop(A, B, order, count=count), A @ B, rtol=1e-12,
                               atol=1e-12)
    assert count.multiply_adds == shape[0] * shape[1] * shape[2]


def test_loop_accumulates_into_c_in_place():
    A, B = operands(4, 3, 5)
    C = np.ones((4, 5))
    out = matmul_loop(A, B, "kji", C)
    assert out is C
    np.testing.assert_allclose(C, 1 + A @ B, rtol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("block", [1, 4, 16, 100])
def test_blocked_equals_numpy_including_ragged_edges(shape, block):
    A, B = operands(*shape, seed=1)
    count = WorkCount()
    np.testing.assert_allclose(matmul_blocked(A, B, block, count=count), A @ B, rtol=1e-12,
                               atol=1e-12)
    assert count.multiply_adds == shape[0] * shape[1] * shape[2]


def test_block_schedule_visits_every_block_once_in_order():
    schedule = block_schedule(5, 3, 4, 2, order="ikj")
    # i blocks 0, 2, 4; k blocks 0, 2; j blocks 0, 2 -> 3 * 2 * 2 corners, j fastest
    assert schedule.shape == (12, 3)
    assert schedule[:3].tolist() == [[0, 0, 0], [0, 0, 2], [0, 2, 0]]
    assert len({tuple(row) for row in schedule}) == 12
    kji = block_schedule(4, 4, 4, 2, order="kji")
    assert kji[:2].tolist() == [[0, 0, 0], [2, 0, 0]]  # i (stored first) moves fastest


def test_a_schedule_that_skips_a_block_is_caught_by_the_count():
    A, B = operands(8, 8, 8)
    count = WorkCount()
    C = matmul_blocked(A, B, 4, schedule=block_schedule(8, 8, 8, 4)[1:], count=count)
    assert count.multiply_adds == 8**3 - 4**3
    assert not np.allclose(C, A @ B)


@pytest.mark.parametrize("shape", SHAPES + [(129, 300, 70)])
@pytest.mark.parametrize("sizes", [(64, 256, 2048), (5, 3, 9), (1, 1, 1)])
def test_packed_equals_numpy(shape, sizes):
    A, B = operands(*shape, seed=2)
    mc, kc, nc = sizes
    count = WorkCount()
    result = matmul_packed(A, B, mc=mc, kc=kc, nc=nc, count=count)
    np.testing.assert_allclose(result, A @ B, rtol=1e-11, atol=1e-11)
    assert count.multiply_adds == shape[0] * shape[1] * shape[2]


def test_packed_buffers_hold_slivers_with_zero_padding():
    A, B = operands(10, 9, 11, seed=3)
    block_a = A[1:8, 2:7]  # 7 x 5: two slivers of MR = 4 rows, the last padded
    padded = np.zeros((8, 5))
    padded[:7] = block_a
    expected_a = padded.reshape(2, MR, 5).transpose(0, 2, 1).ravel()
    np.testing.assert_array_equal(pack_a(A, 1, 2, 7, 5), expected_a)
    block_b = B[3:9, 1:11]  # 6 x 10: two slivers of NR = 8 columns
    padded = np.zeros((6, 16))
    padded[:, :10] = block_b
    expected_b = padded.reshape(6, 2, NR).transpose(1, 0, 2).ravel()
    np.testing.assert_array_equal(pack_b(B, 3, 1, 6, 10), expected_b)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: matmul_loop(np.ones((2, 2)), np.ones((2, 2)), "ijj"), "order must be one of"),
        (lambda: matmul_loop(np.ones((2, 3)), np.ones((2, 2))), "A's columns must equal"),
        (lambda: matmul_loop(np.ones(3), np.ones((3, 3))), "A must be a 2-D matrix"),
        (lambda: matmul_loop(np.ones((2, 2)), np.ones((2, 2)), C=np.ones((3, 2))),
         "C must have shape"),
        (lambda: matmul_blocked(np.ones((2, 2)), np.ones((2, 2)), 0), "block must be >= 1"),
        (lambda: matmul_blocked(np.ones((2, 2)), np.ones((2, 2)), 1,
                                schedule=np.array([[0, 0, 5]])), "outside the matrices"),
        (lambda: matmul_packed(np.ones((2, 2)), np.ones((2, 2)), kc=0), "kc must be >= 1"),
        (lambda: pack_a(np.ones((4, 4)), 2, 0, 3, 4), "lies outside"),
        (lambda: block_schedule(0, 2, 2, 1), "m must be >= 1"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_compile_all_leaves_every_kernel_compiled():
    from whylab.numerics.loops import cache_sim, orders, packing

    compile_all()
    kernels = [*orders._LOOPS.values(), orders._blocked_ikj, packing._packed_gemm,
               packing._pack_a_into, packing._pack_b_into, cache_sim._replay]
    assert all(kernel.signatures for kernel in kernels)
