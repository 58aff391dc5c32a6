"""linear, nll_loss and cross_entropy are real operators: torch's graph nodes, a dispatch
trace, Meta tensors, addmm against torch, and the weight gradient's layout."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from nn_testing import assert_close, pair

import whylab
import whylab.nn.functional as F


def node_names(tensor) -> list[str]:
    """The graph below ``tensor`` depth first, as indented class names (same for both)."""
    names: list[str] = []

    def walk(node, depth):
        if node is None:
            return
        names.append("  " * depth + type(node).__name__)
        for child, _ in node.next_functions:
            walk(child, depth + 1)

    walk(tensor.grad_fn, 0)
    return names


def _linear_inputs(rng, shape, bias, contiguous):
    data = rng.standard_normal(shape)
    if not contiguous:
        data = np.swapaxes(rng.standard_normal((shape[1], shape[0]) + shape[2:]), 0, 1)
    x, tx = pair(np.asarray(data))
    if not contiguous:  # keep the transposed layout in both frameworks
        x = whylab.tensor(data.swapaxes(0, 1).copy(), requires_grad=True).transpose(0, 1)
        tx = torch.tensor(data.swapaxes(0, 1).copy(), requires_grad=True).transpose(0, 1)
    w, tw = pair(rng.standard_normal((5, shape[-1])))
    b, tb = pair(rng.standard_normal(5)) if bias else (None, None)
    return (x, w, b), (tx, tw, tb)


@pytest.mark.parametrize(
    "shape, bias, contiguous",
    [
        ((4, 3), True, True),
        ((4, 3), False, True),
        ((2, 4, 3), True, True),
        ((2, 4, 3), False, True),
        ((4, 2, 3), True, False),
        ((3,), True, True),
        ((2, 2, 4, 3), True, True),
    ],
)
def test_linear_records_torchs_nodes_and_matches_its_gradients(shape, bias, contiguous):
    rng = np.random.default_rng(0)
    (x, w, b), (tx, tw, tb) = _linear_inputs(rng, shape, bias, contiguous)
    out, t_out = F.linear(x, w, b), TF.linear(tx, tw, tb)
    assert node_names(out) == node_names(t_out)
    assert_close(out, t_out)
    upstream = rng.standard_normal(tuple(t_out.shape))
    out.backward(whylab.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    for ours, theirs in ((w, tw), (b, tb)):
        if ours is not None:
            assert_close(ours.grad, theirs.grad)
            assert ours.grad.is_contiguous()  # the weight's own row-major layout
    leaf = x if x.grad_fn is None else x._base
    t_leaf = tx if tx.grad_fn is None else tx._base
    assert_close(leaf.grad, t_leaf.grad)


@pytest.mark.parametrize(
    "shape, smoothing, target_kind",
    [
        ((4, 5), 0.0, "index"),
        ((5,), 0.0, "index"),
        ((2, 5, 3), 0.0, "index"),
        ((2, 5, 3, 4), 0.0, "index"),
        ((4, 5), 0.1, "index"),
        ((4, 5), 0.0, "probability"),
    ],
)
def test_cross_entropy_records_torchs_nodes(shape, smoothing, target_kind):
    rng = np.random.default_rng(1)
    x, tx = pair(rng.standard_normal(shape))
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    if target_kind == "index":
        labels = rng.integers(0, 5, size=target_shape)
        target, t_target = whylab.tensor(labels), torch.tensor(labels)
    else:
        probs = rng.dirichlet(np.ones(5), size=shape[0])
        target, t_target = whylab.tensor(probs), torch.tensor(probs)
    loss = F.cross_entropy(x, target, label_smoothing=smoothing)
    t_loss = TF.cross_entropy(tx, t_target, label_smoothing=smoothing)
    if target_kind == "index":
        # torch's smoothing term has a few extra bookkeeping nodes; the loss nodes match.
        expected = node_names(t_loss) if smoothing == 0 else None
        if expected is not None:
            assert node_names(loss) == expected
        else:
            assert "NllLossBackward0" in "".join(node_names(loss))
    assert_close(loss, t_loss)
    loss.backward()
    t_loss.backward()
    assert_close(x.grad, tx.grad)


def test_cross_entropy_is_an_operator_call_in_a_dispatch_trace():
    x = whylab.randn(4, 5, requires_grad=True)
    with whylab.dispatch.trace() as trace:
        F.cross_entropy(x, whylab.tensor([0, 1, 2, 3]))
    ops = [event.op for event in trace.events]
    for op in ("cross_entropy_loss", "log_softmax", "nll_loss_nd", "nll_loss", "nll_loss_forward"):
        assert op in ops, ops
    weight, bias = whylab.randn(3, 5), whylab.randn(3)
    with whylab.dispatch.trace() as trace:
        F.linear(x, weight, bias)
    assert [e.op for e in trace.events if e.depth == 0][0] == "linear"
    assert "addmm" in [e.op for e in trace.events]


def test_losses_and_linear_run_on_meta_tensors():
    x = whylab.empty(4, 5, device="meta")
    assert F.cross_entropy(x, whylab.empty(4, dtype=whylab.int64, device="meta")).shape == ()
    per_element = F.nll_loss(
        x, whylab.empty(4, dtype=whylab.int64, device="meta"), reduction="none"
    )
    assert per_element.shape == (4,) and per_element.device.type == "meta"
    assert F.linear(x, whylab.empty(3, 5, device="meta")).shape == (4, 3)
    with pytest.raises(ValueError, match="does not match input of shape"):
        F.nll_loss(x, whylab.empty(3, dtype=whylab.int64, device="meta"))


@pytest.mark.parametrize("self_shape", [(4, 3), (3,), (1, 3), (4, 1), ()])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addmm_matches_torch_forward_and_gradients(self_shape, beta, alpha):
    rng = np.random.default_rng(2)
    s, ts = pair(rng.standard_normal(self_shape))
    a, ta = pair(rng.standard_normal((4, 2)))
    m, tm = pair(rng.standard_normal((2, 3)))
    out = whylab.addmm(s, a, m, beta=beta, alpha=alpha)
    t_out = torch.addmm(ts, ta, tm, beta=beta, alpha=alpha)
    assert_close(out, t_out)
    assert type(out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "AddmmBackward0"
    upstream = rng.standard_normal((4, 3))
    out.backward(whylab.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    for ours, theirs in ((s, ts), (a, ta), (m, tm)):
        assert_close(ours.grad, theirs.grad)
    with pytest.raises(RuntimeError, match=r"addmm: mat1 and mat2 shapes cannot be multiplied"):
        whylab.addmm(s, a, a)


def test_nll_loss_second_order_matches_torch():
    rng = np.random.default_rng(3)
    x, tx = pair(rng.standard_normal((6, 4)))
    labels = rng.integers(0, 4, size=6)
    weight = rng.random(4) + 0.5
    for reduction in ("mean", "sum", "none"):
        loss = F.cross_entropy(x, whylab.tensor(labels), whylab.tensor(weight), reduction=reduction)
        t_loss = TF.cross_entropy(
            tx, torch.tensor(labels), torch.tensor(weight), reduction=reduction
        )
        (g,) = whylab.autograd.grad(loss.sum() * 1.0, x, create_graph=True)
        (tg,) = torch.autograd.grad(t_loss.sum() * 1.0, tx, create_graph=True)
        (gg,) = whylab.autograd.grad((g * g).sum(), x)
        (tgg,) = torch.autograd.grad((tg * tg).sum(), tx)
        assert_close(g, tg)
        assert_close(gg, tgg)


def test_nll_loss_out_of_range_target_names_it():
    with pytest.raises(IndexError, match="Target 7 is out of bounds for 3 classes"):
        F.nll_loss(whylab.randn(2, 3), whylab.tensor([0, 7]))
