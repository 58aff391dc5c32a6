"""Experiments of the wave-superposition topic: defaults, extremes, and checks that can fail."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whylab.explorer.experiment import ParamError, T, switched_on
from whylab.topics.wave_superposition import checks as wave_checks
from whylab.topics.wave_superposition import experiments as waves
from whylab.topics.wave_superposition import waves as model

BY_NAME = {e.name: e for e in waves.EXPERIMENTS}
NAME = T("claim", "断言")


def failed(result):
    return [c.id for c in result.checks if c.state == "failed"]


def run(name, control_name=None, **overrides):
    exp = BY_NAME[name]
    with switched_on(control_name):
        return exp.run(**exp.parse_params(overrides))


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_defaults_pass_every_check(name):
    result = run(name)
    assert result.checks and result.passed, failed(result)
    assert all(c.applicable for c in result.checks)


@pytest.mark.parametrize("overrides", [
    {"amplitude": 0.01, "phase": 0.0, "samples": 16, "seed": 0},
    {"amplitude": 100, "phase": 2 * math.pi, "samples": 20000, "seed": 2**31 - 1},
    {"phase": math.pi},
    {"phase": math.pi, "samples": 16, "amplitude": 100},
])
def test_superposition_extremes(overrides):
    result = run("superposition", **overrides)
    assert result.passed, failed(result)
    assert len(result.figures[0].series[0].x) <= waves.MAX_PLOTTED_POINTS


def test_sixteen_samples_are_too_few_for_the_peak_check():
    """Before, a 10% too-high amplitude passed the peak check on 200 of 200 seeds at 16 samples."""
    for seed in range(200):
        honest = run("superposition", samples=16, seed=seed).check("peak-matches-closed-form")
        assert honest.state == "not_applicable" and "1/1.1" in honest.when_applicable.en
        sabotaged = run("superposition", "amplitude-10-percent-high", samples=16, seed=seed)
        assert sabotaged.check("peak-matches-closed-form").state != "passed"
        assert "fit-amplitude" in failed(sabotaged)


def test_a_ten_percent_too_high_amplitude_fails_the_peak_check_wherever_it_applies():
    for samples in (200, 600, 3000):
        for seed in range(30):
            check = run("superposition", "amplitude-10-percent-high", samples=samples,
                        seed=seed).check("peak-matches-closed-form")
            assert check.state in ("failed", "not_applicable")
    assert run("superposition", "amplitude-10-percent-high").check(
        "peak-matches-closed-form").state == "failed"


def test_different_frequencies_beat_and_the_pure_sinusoid_claim_is_not_applicable():
    # f₂ = 1.25 Hz is the value the parameter's help suggests; the claim's premise (equal
    # frequencies) is not met there, so it is not applicable, never a ✗ on a legal input.
    result = run("superposition", frequency_2=1.25)
    states = {c.id: c.state for c in result.checks}
    assert states == {"peak-matches-closed-form": "not_applicable",
                      "fit-amplitude": "not_applicable",
                      "pure-sinusoid": "not_applicable",
                      "product-form": "passed"}  # sum to product still holds: beats
    assert result.passed
    assert result.metrics["fit_residual"] > 0.1
    assert any("beats" in note.en for note in result.notes)


def test_the_second_frequency_changes_the_sum():
    same = run("superposition").metrics["fit_residual"]
    assert same < 1e-9
    assert run("superposition", frequency_2=2.0).metrics["fit_residual"] > 0.1


@pytest.mark.parametrize("overrides", [{"amplitude": 0.01, "steps": 2},
                                       {"amplitude": 100, "steps": 360}])
def test_phase_sweep_extremes(overrides):
    result = run("phase-sweep", **overrides)
    assert result.passed, failed(result)
    assert len(result.figures[0].series[0].x) == 2 * overrides["steps"] + 1


@pytest.mark.parametrize("overrides", [
    {"a1": 0.01, "a2": 100, "phase": 0.0},
    {"a1": 100, "a2": 0.0, "phase": 2 * math.pi},
    {"a1": 3, "a2": 2, "phase": 3.0},
])
def test_unequal_amplitudes_extremes(overrides):
    result = run("unequal-amplitudes", **overrides)
    assert result.passed, failed(result)


def test_full_cancellation_makes_the_phase_check_not_applicable():
    result = run("unequal-amplitudes", a1=1, a2=1, phase=math.pi)
    assert result.check("phase-formula").state == "not_applicable"
    assert result.passed and result.metrics["amplitude"] < 1e-12


def test_unequal_amplitudes_checks_the_fit_residual():
    assert run("unequal-amplitudes").check("pure-sinusoid").passed
    assert "pure-sinusoid" in failed(run("unequal-amplitudes", "second-wave-detuned"))


@settings(max_examples=25, deadline=None)
@given(amplitude=st.floats(0.01, 100), phase=st.floats(0, 2 * math.pi),
       samples=st.integers(16, 3000), seed=st.integers(0, 2**31 - 1))
def test_superposition_random_parameters(amplitude, phase, samples, seed):
    result = waves.superposition.run(amplitude=amplitude, frequency_2=1.0, phase=phase,
                                     samples=samples, seed=seed)
    assert result.passed, failed(result)


@settings(max_examples=25, deadline=None)
@given(a1=st.floats(0.01, 100), a2=st.floats(0, 100), phase=st.floats(0, 2 * math.pi))
def test_unequal_random_parameters(a1, a2, phase):
    result = waves.unequal_amplitudes.run(a1=a1, a2=a2, phase=phase)
    assert result.passed, failed(result)


@settings(max_examples=10, deadline=None)
@given(wavelength=st.floats(0.2, 4.0), separation=st.floats(0.5, 10.0),
       seed=st.integers(0, 2**31 - 1))
def test_two_sources_random_parameters(wavelength, separation, seed):
    result = waves.two_sources.run(wavelength=wavelength, separation=separation, seed=seed)
    assert result.passed, failed(result)


def test_out_of_range_parameters_are_rejected_with_the_bound():
    exp = BY_NAME["superposition"]
    with pytest.raises(ParamError, match=r"phase: must be <= 6\.283185307 "):
        exp.parse_params({"phase": 7})
    with pytest.raises(ParamError, match=r"samples: must be >= 16"):
        exp.parse_params({"samples": 3})
    with pytest.raises(ParamError, match=r"frequency_2: must be <= 3"):
        exp.parse_params({"frequency_2": 5})
    with pytest.raises(ParamError, match=r"unknown parameter"):
        exp.parse_params({"frequency": 1})
    assert any(p.seed for p in exp.params)


# ---------------------------------------------------------------- two sources


def test_coherent_sources_quadruple_and_incoherent_double():
    result = run("two-sources")
    assert result.metrics["bright_over_one_source"] == pytest.approx(4.0, abs=1e-9)
    incoherent = result.figures[0].series[2].y
    assert min(incoherent) > 1.8 and max(incoherent) < 2.2
    coherent = result.figures[0].series[0].y
    assert max(coherent) == pytest.approx(4.0) and min(coherent) < 0.05  # dark fringes
    swapped = run("two-sources", "incoherent-as-coherent")
    assert "bright-fringe-four-times" in failed(swapped)


def test_fringes_follow_the_path_difference_in_wavelengths():
    """Dark points sit where Δd is half a wavelength: shorter waves, closer fringes."""
    def dark_fringes(wavelength):
        coherent = run("two-sources", wavelength=wavelength).figures[0].series[0].y
        return sum(1 for a, b, c in zip(coherent, coherent[1:], coherent[2:], strict=False)
                   if b < a and b < c)

    assert dark_fringes(0.5) > dark_fringes(1.0) > dark_fringes(2.0)


def test_energy_average_is_checked_against_an_independent_bessel_function():
    from scipy.special import j0

    result = run("two-sources", separation=5.0, wavelength=0.5)
    kd = 2 * math.pi / 0.5 * 5.0
    assert result.metrics["ring_average_over_two_sources"] == pytest.approx(1 + j0(kd), abs=1e-9)
    antiphase = failed(run("two-sources", "sources-in-antiphase"))
    assert "energy-in-space" in antiphase  # the average becomes 1 − J₀(kd)
    assert "bright-fringe-four-times" in antiphase  # equal paths now cancel


# ---------------------------------------------------------------- the checks can fail


def test_closed_forms():
    assert model.equal_amplitude_resultant(1.0, 0.0) == 2.0
    assert model.equal_amplitude_resultant(1.0, math.pi) < 1e-15
    assert model.resultant_amplitude(3.0, 4.0, math.pi / 2) == pytest.approx(5.0)
    assert model.resultant_amplitude(2.0, 2.0, 1.234) == pytest.approx(
        model.equal_amplitude_resultant(2.0, 1.234))


def test_product_form_is_the_sum_for_any_two_frequencies():
    times = np.linspace(0, 4, 1000)
    _, _, total = model.superpose(times, 2 * math.pi, 1.5, 1.5, 0.7, 2 * math.pi * 1.3)
    np.testing.assert_allclose(model.product_form(times, 1.5, 2 * math.pi, 2 * math.pi * 1.3,
                                                  0.7), total, atol=1e-12)


def test_amplitude_check_rejects_a_wrong_closed_form():
    times = np.linspace(0, 1, 64, endpoint=False)
    _, _, total = model.superpose(times, 2 * math.pi, 1.0, 1.0, 2.0)
    measured = model.rms_amplitude(total)
    right = model.equal_amplitude_resultant(1.0, 2.0)
    wrong = 2.0 * abs(math.cos(2.0))  # forgot the half angle
    assert wave_checks.amplitude_check("c", NAME, measured, right, 1e-9).passed
    assert not wave_checks.amplitude_check("c", NAME, measured, wrong, 1e-9).passed
    assert not wave_checks.amplitude_check("c", NAME, measured, right * (1 + 1e-6), 1e-9).passed


def test_peak_check_rejects_peaks_outside_the_sampling_bound():
    omega, gap = 2 * math.pi, 0.01
    resolution = wave_checks.peak_resolution(omega, gap)
    assert wave_checks.peak_check("c", NAME, 1.0, 1.0, resolution, 1e-12).passed
    assert wave_checks.peak_check("c", NAME, resolution + 1e-9, 1.0, resolution, 1e-12).passed
    assert not wave_checks.peak_check("c", NAME, resolution - 1e-6, 1.0, resolution,
                                      1e-12).passed
    assert not wave_checks.peak_check("c", NAME, 1.0 + 1e-9, 1.0, resolution, 1e-12).passed


def test_angle_check_wraps_and_rejects():
    assert wave_checks.angle_check("c", NAME, math.pi - 1e-12, -math.pi + 1e-12, 1e-9).passed
    assert not wave_checks.angle_check("c", NAME, 0.5, 0.6, 1e-9).passed


def test_experiments_fail_with_a_forgotten_half_angle():
    for name in ("superposition", "phase-sweep"):
        assert not run(name, "half-angle-forgotten").passed, name


def test_unequal_experiment_fails_with_a_wrong_formula():
    assert failed(run("unequal-amplitudes", "cross-term-halved")) == ["amplitude-formula",
                                                                     "formula-across-phases"]
    assert failed(run("unequal-amplitudes", "equal-amplitude-phase-formula")) == ["phase-formula"]


def test_peak_bound_uses_edges_of_the_window():
    times = np.array([0.4, 0.5, 0.6])
    assert model.largest_gap(times, 1.0) == pytest.approx(0.8)
