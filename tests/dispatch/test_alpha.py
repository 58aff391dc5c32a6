"""``alpha`` in add/sub and add_/sub_: one rule, the same as torch's, in every form."""

import itertools

import numpy as np
import pytest
import torch

import whylab

DTYPES = ["int32", "int64", "float16", "float32", "float64"]
ALPHAS = [2, -1, 0.5, 1 / 3]


def _pair(dtype, values):
    return whylab.tensor(values, dtype=getattr(whylab, dtype)), torch.tensor(
        values, dtype=getattr(torch, dtype)
    )


def _refusal(message: str) -> str:
    for phrase in ("alpha must not be a floating point number", "can't be cast"):
        if phrase in message:
            return phrase
    return message


@pytest.mark.parametrize("self_dtype, other_dtype", list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
def test_alpha_matches_torch(op, alpha, self_dtype, other_dtype):
    ours, theirs = _pair(self_dtype, [1, 2, 3])
    ours_other, theirs_other = _pair(other_dtype, [1, 1, 5])
    try:
        expected = getattr(theirs, op)(theirs_other, alpha=alpha)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as caught:
            getattr(ours, op)(ours_other, alpha=alpha)
        # The same refusal, not merely some error (torch names dtypes Half, Int...).
        assert _refusal(str(error)) == _refusal(str(caught.value)), (error, caught.value)
        return
    result = getattr(ours, op)(ours_other, alpha=alpha)
    assert result.dtype.name == str(expected.dtype)[6:]
    tolerance = 1e-3 if "float16" in (self_dtype, other_dtype) else 1e-6
    np.testing.assert_allclose(
        result.to(whylab.float64).numpy(), expected.to(torch.float64).numpy(), rtol=tolerance
    )
    if op.endswith("_"):
        assert result is ours


def test_in_place_add_with_a_float_alpha_on_integers_raises_like_add():
    """The reported bug: add_ scaled ``other`` itself and silently kept the integers."""
    t = whylab.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        t.add_(whylab.tensor([1, 1, 1]), alpha=0.5)
    assert t.tolist() == [1, 2, 3]
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        whylab.add(whylab.tensor([1, 2, 3]), whylab.tensor([1, 1, 1]), alpha=0.5)


@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
def test_meta_kernels_apply_the_same_alpha_rule(op):
    t = whylab.empty(3, dtype=whylab.int64, device="meta")
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        getattr(t, op)(whylab.empty(3, dtype=whylab.int64, device="meta"), alpha=0.5)
    assert getattr(t, op)(t, alpha=2).shape == (3,)
