"""mm, bmm, mv, dot and matmul's rank rules against PyTorch."""

import itertools

import numpy as np
import pytest
import torch
from engine_testing import assert_same, pair, random_array

import whylab
from whylab.dispatch import trace

SHAPES = {
    1: [(3,)],
    2: [(2, 3), (3, 4), (4, 3)],
    3: [(5, 2, 3), (1, 3, 4), (5, 3, 4)],
    4: [(2, 1, 2, 3), (1, 5, 3, 4)],
}


def _compatible(shape_a, shape_b):
    inner_a = shape_a[-1]
    inner_b = shape_b[-2] if len(shape_b) > 1 else shape_b[0]
    if inner_a != inner_b:
        return False
    try:
        torch.broadcast_shapes(shape_a[:-2], shape_b[:-2])
    except RuntimeError:
        return False
    return True


CASES = [
    (a, b)
    for rank_a, rank_b in itertools.product(SHAPES, SHAPES)
    for a, b in itertools.product(SHAPES[rank_a], SHAPES[rank_b])
    if _compatible(a, b)
]


@pytest.mark.parametrize(("shape_a", "shape_b"), CASES)
def test_matmul_every_rank_combination(shape_a, shape_b):
    wa, ta = pair(random_array(shape_a, seed=20))
    wb, tb = pair(random_array(shape_b, seed=21))
    assert_same(wa @ wb, ta @ tb)
    assert_same(whylab.matmul(wa, wb), torch.matmul(ta, tb))
    assert (wa @ wb).stride() == (ta @ tb).stride()


def test_all_rank_pairs_are_covered():
    ranks = {(len(a), len(b)) for a, b in CASES}
    assert ranks == set(itertools.product(range(1, 5), range(1, 5)))


def test_matmul_on_non_contiguous_operands():
    wa, ta = pair(random_array((4, 2, 3), seed=22))
    wb, tb = pair(random_array((4, 5, 3), seed=23))
    assert_same(wa @ wb.transpose(-1, -2), ta @ tb.transpose(-1, -2))
    assert_same(wa[::2] @ wb[1::2].mT, ta[::2] @ tb[1::2].mT)
    assert_same(wa.transpose(0, 1) @ wb[0].t(), ta.transpose(0, 1) @ tb[0].t())


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [
        ((3,), (3,), ["matmul", "dot"]),
        ((2, 3), (3,), ["matmul", "mv"]),
        ((3,), (3, 4), ["matmul", "unsqueeze", "mm", "squeeze"]),
        ((2, 3), (3, 4), ["matmul", "mm"]),
    ],
)
def test_matmul_decomposes_like_torch(shape_a, shape_b, expected):
    a, b = whylab.ones(*shape_a), whylab.ones(*shape_b)
    with trace() as t:
        a @ b
    assert t.ops() == expected


def test_folding_uses_mm_for_batched_times_matrix():
    with trace() as t:
        whylab.ones(5, 2, 3) @ whylab.ones(3, 4)
    assert "mm" in t.ops() and "bmm" not in t.ops()


def test_mm_bmm_mv_dot_outer():
    wa, ta = pair(random_array((2, 3), seed=24))
    wb, tb = pair(random_array((3, 4), seed=25))
    wv, tv = pair(random_array((3,), seed=26))
    assert_same(whylab.mm(wa, wb), torch.mm(ta, tb))
    assert_same(wa.mv(wv), ta.mv(tv))
    assert_same(wv.dot(wv), tv.dot(tv))
    assert_same(whylab.outer(wv, wv), torch.outer(tv, tv))
    wc, tc = pair(random_array((4, 2, 3), seed=27))
    wd, td = pair(random_array((4, 3, 5), seed=28))
    assert_same(whylab.bmm(wc, wd), torch.bmm(tc, td))
    wi, ti = pair(random_array((2, 3), np.int64, seed=29))
    wj, tj = pair(random_array((3, 2), np.int64, seed=30))
    assert_same(wi @ wj, ti @ tj)


def test_matmul_errors_name_shapes():
    with pytest.raises(
        RuntimeError,
        match=r"mm: mat1 and mat2 shapes cannot be multiplied "
        r"\(2x3 and 4x5\)",
    ):
        whylab.ones(2, 3) @ whylab.ones(4, 5)
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        whylab.ones(()) @ whylab.ones(3)
    with pytest.raises(RuntimeError, match=r"dot: inconsistent tensor size"):
        whylab.ones(3) @ whylab.ones(4)
    with pytest.raises(RuntimeError, match=r"bmm: Expected size for first two dimensions"):
        whylab.bmm(whylab.ones(2, 3, 4), whylab.ones(3, 4, 5))
    with pytest.raises(RuntimeError, match="same dtype"):
        whylab.ones(2, 2) @ whylab.ones(2, 2, dtype=whylab.float64)
    with pytest.raises(RuntimeError, match="size mismatch"):
        whylab.mv(whylab.ones(2, 3), whylab.ones(4))
