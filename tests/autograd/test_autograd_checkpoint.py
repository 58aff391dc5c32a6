"""Activation checkpointing: same gradients, recomputation in backward, less memory held."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest
from autograd_helpers import assert_close

import whylab
from whylab.autograd import saved_tensors_bytes
from whylab.utils.checkpoint import CheckpointError, checkpoint


def _parameters(seed=0, width=64):
    rng = np.random.default_rng(seed)
    x = whylab.tensor(rng.standard_normal((32, width)), dtype=whylab.float64)
    w1 = whylab.tensor(
        rng.standard_normal((width, width)) / 8, dtype=whylab.float64, requires_grad=True
    )
    w2 = whylab.tensor(
        rng.standard_normal((width, width)) / 8, dtype=whylab.float64, requires_grad=True
    )
    return x, w1, w2


class CountingBlock:
    """Two layers with a dropout-like random mask in between; counts its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, x, w1, w2):
        self.calls += 1
        h = (x @ w1).tanh()
        mask = (whylab.rand(*h.shape) > 0.5).to(h.dtype) * 2.0
        h = (h * mask).exp()
        return (h @ w2).sigmoid()


def _gradients(use_checkpoint, block):
    x, w1, w2 = _parameters()
    whylab.manual_seed(7)
    out = checkpoint(block, x, w1, w2) if use_checkpoint else block(x, w1, w2)
    whylab.manual_seed(123)  # the RNG moves on before backward; the recomputation must not care
    out.sum().backward()
    return out.detach().numpy(), w1.grad.numpy(), w2.grad.numpy()


def test_checkpoint_gives_the_same_gradients_with_random_masks():
    plain = _gradients(False, CountingBlock())
    block = CountingBlock()
    checkpointed = _gradients(True, block)
    assert block.calls == 2  # forward, then one recomputation in backward
    for a, b in zip(plain, checkpointed, strict=True):
        assert_close(a, b)


def test_recomputation_happens_only_in_backward():
    x, w1, w2 = _parameters()
    block = CountingBlock()
    out = checkpoint(block, x, w1, w2)
    assert block.calls == 1
    (g1,) = whylab.autograd.grad(out.sum(), [w1], retain_graph=True)
    assert block.calls == 2
    (g2,) = whylab.autograd.grad(out.sum(), [w1])
    assert block.calls == 3  # each pass that needs the saved tensors recomputes them
    assert_close(g1.numpy(), g2.numpy())


def test_checkpoint_holds_only_its_inputs():
    x, w1, w2 = _parameters()
    plain = CountingBlock()(x, w1, w2)
    checkpointed = checkpoint(CountingBlock(), x, w1, w2)
    plain_bytes = saved_tensors_bytes(plain, include_parameters=False)
    checkpoint_bytes = saved_tensors_bytes(checkpointed, include_parameters=False)
    assert checkpoint_bytes == x.numel() * 8  # only the input batch
    assert plain_bytes >= 4 * 32 * 64 * 8  # several (32, 64) float64 activations
    assert saved_tensors_bytes(checkpointed) == (x.numel() + w1.numel() + w2.numel()) * 8


def test_checkpoint_holds_less_memory_measured_by_tracemalloc():
    def held_after_forward(use_checkpoint):
        x, w1, w2 = _parameters(width=128)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        block = CountingBlock()
        out = checkpoint(block, x, w1, w2) if use_checkpoint else block(x, w1, w2)
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        out.sum().backward()
        return held

    plain, checkpointed = held_after_forward(False), held_after_forward(True)
    activation = 32 * 128 * 8
    # plain keeps tanh's output, the mask and exp's output on top of the result
    # (sigmoid's output is the result itself); checkpointing keeps none of them
    assert plain - checkpointed >= 2.5 * activation


def test_nested_checkpoints_and_grad_through_them():
    x, w1, w2 = _parameters()

    def inner(h):
        return (h @ w1).tanh()

    def outer(h):
        return checkpoint(inner, h) @ w2

    expected = whylab.autograd.grad(((x @ w1).tanh() @ w2).pow(2).sum(), [w1, w2])
    actual = whylab.autograd.grad(checkpoint(outer, x).pow(2).sum(), [w1, w2])
    for a, b in zip(actual, expected, strict=True):
        assert_close(a.numpy(), b.numpy())


def test_checkpoint_detects_a_function_that_changes_between_runs():
    x, w1, _ = _parameters()
    calls = []

    def unstable(h):
        calls.append(1)
        out = h @ w1
        return out.exp() if len(calls) == 1 else out * 2

    out = checkpoint(unstable, x)
    with pytest.raises(CheckpointError, match="recomputation saved a different number of tensors"):
        out.sum().backward()


def test_use_reentrant_true_is_rejected():
    with pytest.raises(ValueError, match="use_reentrant=False"):
        checkpoint(lambda t: t, whylab.ones(1), use_reentrant=True)
