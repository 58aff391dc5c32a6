"""cumsum, flip, sort, topk, argsort, roll, repeat and the sampling functions against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import whylab

RNG = np.random.default_rng(0)


def _pair(array, requires_grad=True):
    return (
        whylab.tensor(array.copy(), requires_grad=requires_grad),
        torch.tensor(array.copy(), requires_grad=requires_grad),
    )


CASES = [
    ("cumsum", lambda t: t.cumsum(1)),
    ("cumsum-neg", lambda t: t.cumsum(-1)),
    ("flip", lambda t: t.flip((0, 2))),
    ("sort", lambda t: t.sort(dim=1).values),
    ("sort-desc", lambda t: t.sort(dim=-1, descending=True).values),
    ("topk", lambda t: t.topk(2, dim=1).values),
    ("topk-small", lambda t: t.topk(2, dim=2, largest=False).values),
    ("roll", lambda t: t.roll(1, dims=2)),
    ("roll-flat", lambda t: t.roll(5)),
    ("roll-two", lambda t: t.roll((1, -1), dims=(0, 1))),
    ("repeat", lambda t: t.repeat(2, 1, 3)),
    ("repeat-more", lambda t: t.repeat(2, 1, 1, 2)),
]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_values_and_gradients_match_torch(name, fn, layout):
    data = RNG.standard_normal((3, 4, 5))
    if layout == "transposed":
        data = np.ascontiguousarray(data.transpose(1, 0, 2)).transpose(1, 0, 2)
    w, t = _pair(data)
    out, t_out = fn(w), fn(t)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy())
    upstream = RNG.standard_normal(tuple(t_out.shape))
    out.backward(whylab.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy())
    meta = fn(whylab.empty(3, 4, 5, device="meta"))
    assert tuple(meta.shape) == tuple(t_out.shape)


def test_indices_ties_and_integer_accumulation_match_torch():
    data = np.array([[3, 1, 2, 1, 3], [0, 0, 0, 5, -1]])
    w, t = whylab.tensor(data), torch.tensor(data)
    assert (
        w.sort(dim=1, stable=True).indices.tolist() == t.sort(dim=1, stable=True).indices.tolist()
    )
    assert (
        w.sort(dim=1, descending=True, stable=True).indices.tolist()
        == t.sort(dim=1, descending=True, stable=True).indices.tolist()
    )
    assert w.argsort(dim=1).tolist() == t.argsort(dim=1, stable=True).tolist()
    assert w.cumsum(0).dtype is whylab.int64 and w.cumsum(0).tolist() == t.cumsum(0).tolist()
    assert whylab.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="topk: k"):
        w.topk(6)
    with pytest.raises(RuntimeError, match="flip: dims has duplicates"):
        w.flip((0, 0))


def test_second_order_through_cumsum_and_sort():
    w, t = _pair(RNG.standard_normal(6))
    for fn in (lambda x: (x.cumsum(0) ** 3).sum(), lambda x: (x.sort().values ** 3).sum()):
        (g,) = whylab.autograd.grad(fn(w), w, create_graph=True)
        (tg,) = torch.autograd.grad(fn(t), t, create_graph=True)
        (gg,) = whylab.autograd.grad(g.sum(), w)
        (tgg,) = torch.autograd.grad(tg.sum(), t)
        np.testing.assert_allclose(gg.numpy(), tgg.numpy())


def test_sampling_has_the_right_distribution_shape_and_dtype():
    whylab.manual_seed(0)
    flips = whylab.bernoulli(whylab.full((20000,), 0.3))
    assert flips.dtype is whylab.float32 and abs(flips.mean().item() - 0.3) < 0.02
    draws = whylab.normal(2.0, 3.0, size=(20000,))
    assert abs(draws.mean().item() - 2.0) < 0.1 and abs(draws.std().item() - 3.0) < 0.1
    assert whylab.normal(whylab.zeros(3), 1.0).shape == (3,)
    assert whylab.normal(whylab.zeros(2, 1), whylab.ones(1, 4)).shape == (2, 4)
    picks = whylab.multinomial(whylab.tensor([0.0, 1.0, 3.0]), 4000, replacement=True)
    counts = np.bincount(picks.numpy(), minlength=3)
    assert picks.dtype is whylab.int64 and counts[0] == 0 and 2.6 < counts[2] / counts[1] < 3.4
    unique = whylab.multinomial(whylab.ones(2, 5), 5)
    assert all(sorted(row) == list(range(5)) for row in unique.tolist())
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
        whylab.multinomial(whylab.tensor([1.0, 0.0]), 2)
    assert sorted(whylab.randperm(6).tolist()) == list(range(6))
    t = whylab.empty(1000).uniform_(-1, 2)
    assert t.min().item() >= -1 and t.max().item() < 2
    assert set(whylab.empty(50).bernoulli_(0.5).tolist()) <= {0.0, 1.0}
    assert abs(whylab.empty(20000).normal_(1.0, 0.5).mean().item() - 1.0) < 0.02
