"""whylab.snn.ultralif: the soft max-plus step against max, its gradients against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import whylab
from whylab.snn import ultralif

torch = pytest.importorskip("torch")


def test_gap_to_max_is_between_zero_and_eps_ln2():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 1000))
    for eps in (1.0, 0.1, 0.01):
        value = ultralif.soft_max_plus(whylab.tensor(a), whylab.tensor(b), eps).numpy()
        gap = value - np.maximum(a, b)
        assert gap.min() >= -1e-6 and gap.max() <= eps * math.log(2) + 1e-6
    tie = ultralif.soft_max_plus(whylab.tensor([0.3], dtype=whylab.float64),
                                 whylab.tensor([0.3], dtype=whylab.float64), 0.1).numpy()
    assert tie[0] == pytest.approx(0.3 + 0.1 * math.log(2), rel=1e-14)


def test_gradients_match_torch_logsumexp():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 50))
    eps = 0.2
    ta = whylab.tensor(a, dtype=whylab.float64, requires_grad=True)
    tb = whylab.tensor(b, dtype=whylab.float64, requires_grad=True)
    (ultralif.soft_max_plus(ta, tb, eps) * whylab.tensor(np.arange(50.0))).sum().backward()
    ra = torch.tensor(a, requires_grad=True)
    rb = torch.tensor(b, requires_grad=True)
    (eps * torch.logaddexp(ra / eps, rb / eps) * torch.arange(50.0)).sum().backward()
    np.testing.assert_allclose(ta.grad.numpy(), ra.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tb.grad.numpy(), rb.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_neuron_step_and_learnable_eps():
    neuron = ultralif.UltraLIF(tau=0.9, eps=0.1, dtype=whylab.float64)
    v = whylab.tensor([-1.0, 0.5], dtype=whylab.float64)
    current = whylab.tensor([0.2, -2.0], dtype=whylab.float64)
    s, v_next = neuron(current, v)
    expected = 0.1 * np.logaddexp((np.array([-1.0, 0.5]) + math.log(0.9)) / 0.1,
                                  np.array([0.2, -2.0]) / 0.1)
    np.testing.assert_allclose(v_next.detach().numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(s.detach().numpy(), 1 / (1 + np.exp(-expected / 0.1)), rtol=1e-14)
    s.sum().backward()
    assert neuron.log_eps.grad is not None and abs(float(neuron.log_eps.grad.item())) > 0


def test_classifier_shapes_and_errors():
    model = ultralif.UltraLIFClassifier(4, 6, 3, tau=0.9)
    scores, hidden = model(whylab.zeros(3, 2, 4))
    assert tuple(scores.shape) == (2, 3) and tuple(hidden.shape) == (3, 2, 6)
    with pytest.raises(ValueError, match=r"inputs must have shape \(steps, batch, 4\)"):
        model(whylab.zeros(3, 2, 5))
    with pytest.raises(ValueError, match=r"tau must lie in \(0, 1\)"):
        ultralif.UltraLIF(tau=1.5)
    with pytest.raises(ValueError, match="eps must be a finite number > 0"):
        ultralif.UltraLIF(tau=0.5, eps=0.0)
