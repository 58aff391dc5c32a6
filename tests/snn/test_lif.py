"""whylab.snn.lif against the closed form, the integrators' orders, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from whylab.snn import lif

NEURON = lif.LIFParams(tau_mem=10.0, threshold=1.0, v_reset=-0.2, t_ref=2.0)


def test_closed_form_rate_is_the_inverse_of_the_analytic_isi():
    # Time to climb from V_reset to V_th with V_inf = 2: tau ln((2 + 0.2) / (2 - 1)).
    isi = 2.0 + 10.0 * np.log(2.2 / 1.0)
    assert lif.firing_rate(NEURON, [2.0])[0] == pytest.approx(1.0 / isi, rel=1e-15)
    assert lif.firing_rate(NEURON, [0.5, 1.0])[1] == 0.0  # at rheobase: never reaches V_th


@pytest.mark.parametrize("current", [1.1, 1.7, 3.5])
def test_exact_interpolated_simulation_matches_the_closed_form(current):
    sim = lif.simulate(NEURON, [current], 150.0, 0.01)
    assert sim.rates()[0] == pytest.approx(lif.firing_rate(NEURON, [current])[0], rel=2e-6)


def test_below_rheobase_no_neuron_fires():
    sim = lif.simulate(NEURON, np.linspace(0.0, 1.0, 5), 200.0, 0.1, method="euler")
    assert all(t.size == 0 for t in sim.spike_times)


def _order(method, interpolate):
    currents = np.linspace(1.2, 3.0, 8)
    expected = lif.firing_rate(NEURON, currents)
    steps = 0.4 / 2.0 ** np.arange(4)
    errors = [np.mean(np.abs(lif.simulate(NEURON, currents, round(100 / dt) * dt, dt,
                                          method=method, interpolate=interpolate).rates()
                             - expected) / expected) for dt in steps]
    return np.polyfit(np.log(steps), np.log(errors), 1)[0]


@pytest.mark.parametrize("method,interpolate,low,high", [
    ("euler", False, 0.7, 1.3), ("euler", True, 0.8, 1.2),
    ("exact", False, 0.7, 1.3), ("exact", True, 1.8, 2.6),
])
def test_measured_orders(method, interpolate, low, high):
    assert low <= _order(method, interpolate) <= high


def test_reset_by_subtraction_keeps_the_overshoot_on_the_grid():
    params = lif.LIFParams(tau_mem=10.0, reset="subtract")
    zero = lif.LIFParams(tau_mem=10.0, reset="zero")
    a = lif.simulate(params, [5.0], 20.0, 1.0, method="euler", interpolate=False, record=True)
    b = lif.simulate(zero, [5.0], 20.0, 1.0, method="euler", interpolate=False, record=True)
    first = int(round(a.spike_times[0][0] / 1.0))
    overshoot = b.voltage[first - 1, 0] + 0.1 * (5.0 - b.voltage[first - 1, 0]) - 1.0
    assert a.voltage[first, 0] == pytest.approx(overshoot)
    assert b.voltage[first, 0] == 0.0


def test_refractory_neuron_is_held_at_reset():
    params = lif.LIFParams(tau_mem=10.0, t_ref=5.0)
    sim = lif.simulate(params, [3.0], 40.0, 0.5, interpolate=False, record=True)
    k = int(round(sim.spike_times[0][0] / 0.5))
    assert np.all(sim.voltage[k:k + 11, 0] == 0.0)
    assert sim.voltage[k + 11, 0] > 0.0


def test_interpolated_spike_time_is_the_analytic_crossing():
    sim = lif.simulate(lif.LIFParams(tau_mem=10.0), [2.0], 20.0, 0.001)
    assert sim.spike_times[0][0] == pytest.approx(10.0 * np.log(2.0), abs=1e-6)


def test_mean_isi_rate_needs_two_spikes():
    assert np.isnan(lif.mean_isi_rate([3.0]))
    assert lif.mean_isi_rate([1.0, 3.0, 5.0]) == pytest.approx(0.5)


@pytest.mark.parametrize("kwargs,message", [
    ({"tau_mem": -5.0}, "tau_mem must be a finite number > 0"),
    ({"tau_syn": 0.0}, "tau_syn must be a finite number > 0"),
    ({"t_ref": -1.0}, "t_ref must be a finite number >= 0"),
    ({"threshold": 0.0, "v_reset": 0.0}, "threshold must be > v_reset"),
    ({"reset": "half"}, "reset must be one of"),
])
def test_bad_constants_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lif.LIFParams(**kwargs)


@pytest.mark.parametrize("dt,message", [(0.0, "dt must be a finite number > 0"),
                                         (-1.0, "dt must be a finite number > 0"),
                                         (3.0, r"dt must be <= 2 \(a fifth")])
def test_bad_time_steps_are_named(dt, message):
    with pytest.raises(ValueError, match=message):
        lif.simulate(lif.LIFParams(), [1.0], 30.0, dt)


def test_bad_current_shape_is_named():
    with pytest.raises(ValueError, match=r"current must have shape \(neurons,\) or \(10,"):
        lif.simulate(lif.LIFParams(), np.ones((3, 2)), 10.0, 1.0)
    with pytest.raises(ValueError, match="whole number of steps"):
        lif.simulate(lif.LIFParams(), [1.0], 10.5, 1.0)
    with pytest.raises(ValueError, match="method must be one of"):
        lif.simulate(lif.LIFParams(), [1.0], 10.0, 1.0, method="rk4")
