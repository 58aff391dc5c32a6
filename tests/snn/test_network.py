"""whylab.snn's Leaky layer and surrogate spikes against snnTorch 1.0 (under torch).

Traces step by step, and BPTT gradients of a small two-layer network, in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import whylab
from whylab.snn import network, surrogate

torch = pytest.importorskip("torch")
snntorch = pytest.importorskip("snntorch")
from snntorch import surrogate as snn_surrogate  # noqa: E402

SNN_SURROGATES = {"fast_sigmoid": snn_surrogate.fast_sigmoid,
                  "sigmoid": snn_surrogate.sigmoid, "atan": snn_surrogate.atan}


@pytest.mark.parametrize("name,slope", [("fast_sigmoid", 25.0), ("sigmoid", 5.0),
                                        ("atan", 2.0)])
def test_surrogate_forward_and_backward_match_snntorch(name, slope):
    x = np.random.default_rng(0).normal(0.0, 0.5, (7, 5))
    x[0, 0] = 0.0  # H(0) = 0 in both
    ours = whylab.tensor(x, dtype=whylab.float64, requires_grad=True)
    out = surrogate.spike_function(name, slope)(ours)
    out.backward(whylab.ones_like(out))
    theirs = torch.tensor(x, requires_grad=True)
    reference = SNN_SURROGATES[name](slope)(theirs)
    reference.backward(torch.ones_like(reference))
    assert np.array_equal(out.detach().numpy(), reference.detach().double().numpy())
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.double().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), surrogate.surrogate_derivative(name, slope, x),
                               rtol=1e-12)


@pytest.mark.parametrize("reset", ["subtract", "zero"])
def test_leaky_traces_match_snntorch(reset):
    rng = np.random.default_rng(1)
    currents = rng.normal(0.4, 0.6, (40, 3, 6))
    beta, threshold = 0.9, 1.0
    layer = network.Leaky(beta, threshold, reset, surrogate.spike_function("atan", 2.0))
    # A float64 beta: given a float, snnTorch keeps it as float32 (0.9 -> 0.899999976).
    reference = snntorch.Leaky(beta=torch.tensor(beta, dtype=torch.float64),
                               threshold=threshold, reset_mechanism=reset)
    mem = whylab.zeros(3, 6, dtype=whylab.float64)
    ref_mem = torch.zeros(3, 6, dtype=torch.float64)
    fired = 0
    for current in currents:
        spk, mem = layer(whylab.tensor(current, dtype=whylab.float64), mem)
        ref_spk, ref_mem = reference(torch.tensor(current), ref_mem)
        np.testing.assert_allclose(mem.detach().numpy(), ref_mem.detach().numpy(),
                                   rtol=0, atol=1e-12)
        assert np.array_equal(spk.detach().numpy(), ref_spk.detach().double().numpy())
        fired += int(spk.detach().numpy().sum())
    assert fired > 20  # the comparison covered many resets


def test_bptt_gradients_match_snntorch():
    rng = np.random.default_rng(2)
    steps, batch = 25, 4
    inputs = (rng.random((steps, batch, 5)) < 0.2).astype(np.float64)
    w1, w2 = rng.normal(0, 0.9, (8, 5)), rng.normal(0, 0.9, (3, 8))
    beta = 0.85

    def ours():
        weights = [whylab.tensor(w, dtype=whylab.float64, requires_grad=True) for w in (w1, w2)]
        spike = surrogate.spike_function("fast_sigmoid", 25.0)
        hidden = network.Leaky(beta, 1.0, "subtract", spike)
        out = network.Leaky(beta, 1.0, "subtract", spike)
        m1 = whylab.zeros(batch, 8, dtype=whylab.float64)
        m2 = whylab.zeros(batch, 3, dtype=whylab.float64)
        loss = whylab.zeros((), dtype=whylab.float64)
        for t in range(steps):
            s1, m1 = hidden(whylab.tensor(inputs[t]) @ weights[0].t(), m1)
            s2, m2 = out(s1 @ weights[1].t(), m2)
            loss = loss + (s2 * whylab.tensor([1.0, 2.0, -1.0])).sum() + 0.1 * (m2 ** 2).sum()
        loss.backward()
        return float(loss.item()), [w.grad.numpy() for w in weights]

    def theirs():
        weights = [torch.tensor(w, requires_grad=True) for w in (w1, w2)]
        grad = snn_surrogate.fast_sigmoid(25)
        hidden = snntorch.Leaky(beta=torch.tensor(beta, dtype=torch.float64), spike_grad=grad)
        out = snntorch.Leaky(beta=torch.tensor(beta, dtype=torch.float64), spike_grad=grad)
        m1 = torch.zeros(batch, 8, dtype=torch.float64)
        m2 = torch.zeros(batch, 3, dtype=torch.float64)
        loss = torch.zeros((), dtype=torch.float64)
        for t in range(steps):
            s1, m1 = hidden(torch.tensor(inputs[t]) @ weights[0].t(), m1)
            s2, m2 = out(s1.double() @ weights[1].t(), m2)
            loss = loss + (s2 * torch.tensor([1.0, 2.0, -1.0])).sum() + 0.1 * (m2 ** 2).sum()
        loss.backward()
        return float(loss.detach()), [w.grad.numpy() for w in weights]

    loss, grads = ours()
    ref_loss, ref_grads = theirs()
    assert loss == pytest.approx(ref_loss, rel=1e-12)
    for grad, ref in zip(grads, ref_grads, strict=True):
        assert np.abs(ref).max() > 0
        np.testing.assert_allclose(grad, ref, rtol=1e-6, atol=1e-9)


def test_decay_kernel_runs_the_leaky_recurrence():
    drive = np.random.default_rng(3).normal(size=(9, 4))
    kernel = network.decay_kernel(9, 0.7, whylab.float64).numpy()
    expected, state = [], np.zeros(4)
    for row in drive:
        state = 0.7 * state + row
        expected.append(state)
    np.testing.assert_allclose(kernel @ drive, np.array(expected), rtol=1e-14)


def test_classifier_shapes_and_errors():
    model = network.SpikingClassifier(5, 7, 3, beta_hidden=0.9, beta_out=0.95)
    scores, hidden = model(whylab.zeros(12, 2, 5))
    assert tuple(scores.shape) == (2, 3) and tuple(hidden.shape) == (12, 2, 7)
    with pytest.raises(ValueError, match=r"raster must have shape \(steps, batch, 5\)"):
        model(whylab.zeros(12, 2, 4))
    with pytest.raises(ValueError, match=r"beta must lie in \(0, 1\)"):
        network.Leaky(1.1)
    with pytest.raises(ValueError, match="threshold must be a finite number > 0"):
        network.Leaky(0.9, threshold=0.0)
    with pytest.raises(ValueError, match="hidden must be an int >= 1"):
        network.SpikingClassifier(5, 0, 3, beta_hidden=0.9, beta_out=0.9)
    with pytest.raises(ValueError, match=r"dt must be <= 2"):
        network.decay_factor(3.0, 10.0)
    with pytest.raises(ValueError, match="name must be one of"):
        surrogate.spike_function("relu")
