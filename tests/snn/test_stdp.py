"""whylab.snn.stdp: online traces against the analytic window."""

from __future__ import annotations

import numpy as np
import pytest

from whylab.snn.stdp import SONG_2000, STDP


def test_defaults_are_song_miller_abbott_2000():
    rule = STDP()
    assert (rule.tau_plus, rule.tau_minus, rule.a_plus) == (20.0, 20.0, 0.005)
    assert rule.a_minus == pytest.approx(1.05 * rule.a_plus)
    assert SONG_2000["a_minus"] == rule.a_minus


@pytest.mark.parametrize("tau_plus,tau_minus", [(20.0, 20.0), (16.8, 33.7), (5.0, 50.0)])
def test_single_pairs_reproduce_the_window(tau_plus, tau_minus):
    rule = STDP(0.01, 0.012, tau_plus, tau_minus)
    rng = np.random.default_rng(0)
    for delta in rng.uniform(-150, 150, 50):
        measured = rule.weight_change(np.array([300.0]), np.array([300.0 + delta]))
        expected = (0.01 * np.exp(-delta / tau_plus) if delta > 0
                    else -0.012 * np.exp(delta / tau_minus))
        assert measured == pytest.approx(expected, rel=1e-13, abs=1e-18)


def test_all_to_all_sum_over_pairs():
    rule = STDP()
    pre = np.array([0.0, 13.0, 40.0])
    post = np.array([5.0, 30.0, 31.0])
    expected = sum(float(rule.window(b - a)) for a in pre for b in post)
    assert rule.weight_change(pre, post) == pytest.approx(expected, rel=1e-13)


def test_coincident_spikes_change_nothing():
    assert STDP().weight_change(np.array([10.0]), np.array([10.0])) == 0.0


def test_pairing_protocol_signs():
    rule = STDP()
    dw = rule.pairing_protocol(np.array([-20.0, -5.0, 5.0, 20.0]))
    assert dw[1] < dw[0] < 0 < dw[3] < dw[2]  # strongest at short intervals


def test_bad_input():
    with pytest.raises(ValueError, match="tau_plus must be a finite number > 0"):
        STDP(tau_plus=0.0)
    with pytest.raises(ValueError, match="a_minus must be a finite number >= 0"):
        STDP(a_minus=-1.0)
    with pytest.raises(ValueError, match="pre_times must have 1 dimension"):
        STDP().weight_change(np.zeros((2, 2)), np.zeros(2))
    with pytest.raises(ValueError, match=r"\|delta_t\| must be < period / 2"):
        STDP().pairing_protocol(np.array([600.0]))
