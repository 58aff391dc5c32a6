"""Experiments of the wave-superposition topic: defaults, extremes, and checks that can fail."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whylab.explorer.experiment import ParamError, T
from whylab.topics.wave_superposition import experiments as waves

BY_NAME = {e.name: e for e in waves.EXPERIMENTS}
NAME = T("claim", "断言")


def failed(result):
    return [c.name.en for c in result.checks if not c.passed]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_defaults_pass_every_check(name):
    result = BY_NAME[name].run(**BY_NAME[name].defaults())
    assert result.checks and result.passed, failed(result)


@pytest.mark.parametrize("overrides", [
    {"amplitude": 0.01, "frequency": 0.1, "phase": 0.0, "samples": 16, "seed": 0},
    {"amplitude": 100, "frequency": 50, "phase": 2 * math.pi, "samples": 20000,
     "seed": 2**31 - 1},
    {"phase": math.pi},
    {"phase": math.pi, "samples": 16, "amplitude": 100},
])
def test_superposition_extremes(overrides):
    exp = BY_NAME["superposition"]
    result = exp.run(**exp.parse_params(overrides))
    assert result.passed, failed(result)
    assert len(result.figures[0].series[0].x) <= waves.MAX_PLOTTED_POINTS


@pytest.mark.parametrize("overrides", [{"amplitude": 0.01, "steps": 2},
                                       {"amplitude": 100, "steps": 360}])
def test_phase_sweep_extremes(overrides):
    exp = BY_NAME["phase-sweep"]
    result = exp.run(**exp.parse_params(overrides))
    assert result.passed, failed(result)
    assert len(result.figures[0].series[0].x) == 2 * overrides["steps"] + 1


@pytest.mark.parametrize("overrides", [
    {"a1": 1, "a2": 1, "phase": math.pi},  # full cancellation: no phase to compare
    {"a1": 0.01, "a2": 100, "phase": 0.0},
    {"a1": 100, "a2": 0.0, "phase": 2 * math.pi},
    {"a1": 3, "a2": 2, "phase": 3.0},
])
def test_unequal_amplitudes_extremes(overrides):
    exp = BY_NAME["unequal-amplitudes"]
    result = exp.run(**exp.parse_params(overrides))
    assert result.passed, failed(result)


def test_full_cancellation_reports_a_note_instead_of_a_phase_check():
    exp = BY_NAME["unequal-amplitudes"]
    result = exp.run(**exp.parse_params({"a1": 1, "a2": 1, "phase": math.pi}))
    assert result.notes and len(result.checks) == 3
    assert result.metrics["amplitude"] < 1e-12


@settings(max_examples=25, deadline=None)
@given(amplitude=st.floats(0.01, 100), frequency=st.floats(0.1, 50),
       phase=st.floats(0, 2 * math.pi), samples=st.integers(16, 3000),
       seed=st.integers(0, 2**31 - 1))
def test_superposition_random_parameters(amplitude, frequency, phase, samples, seed):
    result = waves.superposition.run(amplitude=amplitude, frequency=frequency, phase=phase,
                                     samples=samples, seed=seed)
    assert result.passed, failed(result)


@settings(max_examples=25, deadline=None)
@given(a1=st.floats(0.01, 100), a2=st.floats(0, 100), phase=st.floats(0, 2 * math.pi))
def test_unequal_random_parameters(a1, a2, phase):
    result = waves.unequal_amplitudes.run(a1=a1, a2=a2, phase=phase)
    assert result.passed, failed(result)


def test_out_of_range_parameters_are_rejected_with_the_bound():
    exp = BY_NAME["superposition"]
    with pytest.raises(ParamError, match=r"phase: must be <= 6\.283185307 "):
        exp.parse_params({"phase": 7})
    with pytest.raises(ParamError, match=r"samples: must be >= 16"):
        exp.parse_params({"samples": 3})
    with pytest.raises(ParamError, match=r"unknown parameter"):
        exp.parse_params({"noise": 1})
    assert any(p.seed for p in exp.params)


# ---------------------------------------------------------------- the checks can fail


def test_closed_forms():
    assert waves.equal_amplitude_resultant(1.0, 0.0) == 2.0
    assert waves.equal_amplitude_resultant(1.0, math.pi) < 1e-15
    assert waves.resultant_amplitude(3.0, 4.0, math.pi / 2) == pytest.approx(5.0)
    assert waves.resultant_amplitude(2.0, 2.0, 1.234) == pytest.approx(
        waves.equal_amplitude_resultant(2.0, 1.234))


def test_amplitude_check_rejects_a_wrong_closed_form():
    times = np.linspace(0, 1, 64, endpoint=False)
    _, _, total = waves.superpose(times, 2 * math.pi, 1.0, 1.0, 2.0)
    measured = waves.rms_amplitude(total)
    right = waves.equal_amplitude_resultant(1.0, 2.0)
    wrong = 2.0 * abs(math.cos(2.0))  # forgot the half angle
    assert waves.amplitude_check(NAME, measured, right, 1e-9).passed
    assert not waves.amplitude_check(NAME, measured, wrong, 1e-9).passed
    assert not waves.amplitude_check(NAME, measured, right * (1 + 1e-6), 1e-9).passed


def test_peak_check_rejects_peaks_outside_the_sampling_bound():
    omega, gap = 2 * math.pi, 0.01
    lower = math.cos(omega * gap / 2)
    assert waves.peak_check(NAME, 1.0, 1.0, omega, gap, 1e-12).passed
    assert waves.peak_check(NAME, lower + 1e-9, 1.0, omega, gap, 1e-12).passed
    assert not waves.peak_check(NAME, lower - 1e-6, 1.0, omega, gap, 1e-12).passed
    assert not waves.peak_check(NAME, 1.0 + 1e-9, 1.0, omega, gap, 1e-12).passed


def test_angle_check_wraps_and_rejects():
    assert waves.angle_check(NAME, math.pi - 1e-12, -math.pi + 1e-12, 1e-9).passed
    assert not waves.angle_check(NAME, 0.5, 0.6, 1e-9).passed


@pytest.mark.parametrize("wrong", [
    lambda a, phase: 2 * a * abs(math.cos(phase)),
    lambda a, phase: a * (1 + math.cos(phase)),
    lambda a, phase: 2 * a * abs(math.sin(phase / 2)),
])
def test_experiments_fail_with_a_wrong_closed_form(monkeypatch, wrong):
    monkeypatch.setattr(waves, "equal_amplitude_resultant", wrong)
    for name in ("superposition", "phase-sweep"):
        result = BY_NAME[name].run(**BY_NAME[name].defaults())
        assert not result.passed, name


def test_unequal_experiment_fails_with_a_wrong_formula(monkeypatch):
    monkeypatch.setattr(waves, "resultant_amplitude",
                        lambda a1, a2, phase: math.sqrt(a1**2 + a2**2 + a1 * a2 * math.cos(phase)))
    result = waves.unequal_amplitudes.run(**waves.unequal_amplitudes.defaults())
    assert failed(result) == ["Measured amplitude equals √(A1² + A2² + 2·A1·A2·cos φ)"]


def test_peak_bound_uses_edges_of_the_window():
    times = np.array([0.4, 0.5, 0.6])
    assert waves.largest_gap(times, 1.0) == pytest.approx(0.8)
