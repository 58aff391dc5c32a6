"""Reductions, softmax and log_softmax against PyTorch (float64)."""

import numpy as np
import pytest
import torch
from engine_testing import assert_same, layouts, pair, random_array

import whylab

DIMS = [None, 0, 1, -1, (0, 2), (2, 0, 1), ()]


def _dim_args(dim):
    return () if dim is None else (dim,)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp"])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_match_torch(name, dim, keepdim):
    for _, w, t in layouts((2, 3, 4), seed=10, low=0.5, high=1.5):
        if name == "logsumexp" and dim in (None, ()):
            continue
        if dim is None:
            assert_same(getattr(w, name)(), getattr(t, name)())
            continue
        if name == "prod" and not isinstance(dim, int):
            with pytest.raises(TypeError, match="prod"):
                w.prod(dim)
            continue
        w_result = getattr(w, name)(*_dim_args(dim), keepdim=keepdim)
        t_result = getattr(t, name)(*_dim_args(dim), keepdim=keepdim)
        assert_same(w_result, t_result)
        assert w_result.stride() == t_result.stride()


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std_match_torch(dim, correction, keepdim):
    for _, w, t in layouts((4, 5), seed=11):
        for name in ("var", "std"):
            assert_same(
                getattr(w, name)(dim, correction=correction, keepdim=keepdim),
                getattr(t, name)(dim, correction=correction, keepdim=keepdim),
            )
    w, t = pair(random_array((4, 5), seed=12))
    assert_same(whylab.var(w, 1, unbiased=False), torch.var(t, 1, unbiased=False))
    assert_same(whylab.std(w), torch.std(t))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_argmax_with_dim(dim, keepdim):
    values = random_array((4, 5), seed=13)
    values[1, 2] = values[1, 3]  # ties: first index wins in both
    w, t = pair(values)
    for name in ("max", "min"):
        w_result, t_result = getattr(w, name)(dim, keepdim), getattr(t, name)(dim, keepdim)
        assert_same(w_result.values, t_result.values)
        assert_same(w_result.indices, t_result.indices)
        values_, indices_ = w_result
        assert values_ is w_result[0]
    assert_same(w.argmax(dim, keepdim), t.argmax(dim, keepdim))
    assert_same(w.argmin(dim, keepdim), t.argmin(dim, keepdim))


def test_full_reductions_and_integer_dtypes():
    w, t = pair(random_array((3, 4), np.int64, seed=14, low=-5, high=5))
    for name in ("sum", "prod", "max", "min", "argmax", "argmin", "amax"):
        assert_same(getattr(w, name)(), getattr(t, name)())
    wb, tb = pair(random_array((3, 4), np.bool_, seed=15))
    assert_same(wb.sum(), tb.sum())
    assert_same(wb.sum(0), tb.sum(0))
    assert_same(w.sum(dtype=whylab.float64), t.sum(dtype=torch.float64))
    assert_same(w.argmax(keepdim=True), t.argmax(keepdim=True))
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype"):
        w.mean()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax(dim):
    for _, w, t in layouts((3, 5), seed=16, low=-20, high=20):
        assert_same(w.softmax(dim), t.softmax(dim))
        assert_same(whylab.log_softmax(w, dim), torch.log_softmax(t, dim))
        assert w.softmax(dim).stride() == t.softmax(dim).stride()


def test_reduction_errors_name_op():
    with pytest.raises(
        IndexError,
        match=r"sum: Dimension out of range \(expected to be in "
        r"range of \[-2, 1\], but got 2\)",
    ):
        whylab.ones(2, 3).sum(2)
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim"):
        whylab.ones(0, 3).amax()
    with pytest.raises(RuntimeError, match="appears multiple times"):
        whylab.ones(2, 3).sum((0, 0))


def test_sum_of_empty_and_zero_dim():
    w, t = pair(np.zeros((0, 3)))
    assert_same(w.sum(0), t.sum(0))
    assert_same(w.sum(), t.sum())
    w, t = pair(np.array(2.5))
    assert_same(w.sum(), t.sum())
    assert_same(w.sum(0), t.sum(0))
