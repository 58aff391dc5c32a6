"""whylab.snn.eventprop: the event-driven simulation against closed forms, and the adjoint
gradient against central finite differences of the same simulation."""

from __future__ import annotations

import numpy as np
import pytest

from whylab.snn.eventprop import EventLIF, EventNetwork, layer_forward

LIF = EventLIF(tau_mem=2.0, tau_syn=1.0, threshold=1.0, t_max=6.0)


def test_single_input_spike_time_solves_the_closed_form():
    # One input of weight w at t = 0: V(t) = w·(e^(−t/2) − e^(−t)) for τm = 2, τs = 1.
    # V = 1 is a quadratic in z = e^(−t/2): w(z − z²) = 1.
    w = 6.0
    run = layer_forward(LIF, np.array([[w]]), np.array([[0.0]]), np.array([[0]]))
    z = (1 + np.sqrt(1 - 4 / w)) / 2  # the larger root: the earlier crossing
    assert run.time.size >= 1
    assert run.time[0] == pytest.approx(-2 * np.log(z), abs=1e-12)


def test_below_threshold_input_never_spikes():
    # The peak of w(z − z²) is w/4 at z = 1/2: w = 3.99 stays below threshold.
    run = layer_forward(LIF, np.array([[3.99]]), np.array([[0.0]]), np.array([[0]]))
    assert run.time.size == 0


def _finite_differences(net, x, y, layer, h=1e-6):
    fd = np.zeros_like(net.weights[layer])
    for index in np.ndindex(*fd.shape):
        original = net.weights[layer][index]
        net.weights[layer][index] = original + h
        plus = net.loss_value(x, y)
        net.weights[layer][index] = original - h
        minus = net.loss_value(x, y)
        net.weights[layer][index] = original
        fd[index] = (plus - minus) / (2 * h)
    return fd


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_adjoint_gradient_equals_finite_differences(seed):
    rng = np.random.default_rng(seed)
    net = EventNetwork(LIF, [rng.normal(1.5, 1.0, (5, 4)), rng.normal(1.2, 0.8, (3, 5))])
    x = rng.uniform(0.0, 1.5, (3, 4))
    y = rng.integers(0, 3, 3)
    _, grads = net.loss_and_grad(x, y)
    for layer in (0, 1):
        fd = _finite_differences(net, x, y, layer)
        assert np.abs(fd).max() > 1e-4
        assert np.max(np.abs(grads[layer] - fd)) <= 1e-6 * np.abs(fd).max()
    _, wrong = net.loss_and_grad(x, y, jump=False)
    assert np.abs(wrong[1] - grads[1]).max() > 0.1 * np.abs(grads[1]).max()


def test_three_layers_chain_the_adjoint():
    rng = np.random.default_rng(5)
    net = EventNetwork(LIF, [rng.normal(3.0, 1.0, (4, 3)), rng.normal(2.5, 1.0, (4, 4)),
                             rng.normal(2.0, 1.0, (2, 4))])
    x = rng.uniform(0.0, 1.0, (2, 3))
    y = np.array([0, 1])
    _, grads = net.loss_and_grad(x, y)
    fd = _finite_differences(net, x, y, 0)
    assert np.abs(fd).max() > 1e-5
    assert np.max(np.abs(grads[0] - fd)) <= 1e-6 * np.abs(fd).max()


def test_bad_input():
    with pytest.raises(ValueError, match="tau_syn must differ from tau_mem"):
        EventLIF(tau_mem=1.0, tau_syn=1.0)
    with pytest.raises(ValueError, match="t_max must be a finite number > 0"):
        EventLIF(t_max=0.0)
    with pytest.raises(ValueError, match="do not chain"):
        EventNetwork(LIF, [np.ones((3, 2)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="in_times must have 2 columns"):
        EventNetwork(LIF, [np.ones((3, 2))]).forward(np.zeros((1, 3)))
