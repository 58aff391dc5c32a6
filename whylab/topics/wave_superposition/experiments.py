"""Experiments for "wave superposition": adding two sinusoids, in time and in space.

The page claims that A sin(wt) + A sin(wt + phi) is again a sinusoid of frequency
w with amplitude 2A|cos(phi/2)| -- when the two frequencies are equal -- and more
generally that two waves of amplitudes A1 and A2 add up to amplitude
sqrt(A1^2 + A2^2 + 2 A1 A2 cos(phi)). Each experiment samples the actual sum and
measures it in ways that do not use those formulas (the largest sample, a
least-squares sinusoid fit and its residual, the RMS value), then compares. The
two-source experiment (:mod:`.two_sources`) puts the phase difference in space.
"""

from __future__ import annotations

import math

import numpy as np

from whylab.explorer.experiment import (
    Check,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    Table,
    experiment,
)
from whylab.topics.wave_superposition.checks import (
    amplitude_check,
    angle_check,
    peak_check,
    peak_resolution,
)
from whylab.topics.wave_superposition.two_sources import two_sources
from whylab.topics.wave_superposition.waves import (
    AMPLITUDE_TOO_HIGH,
    CROSS_TERM_HALVED,
    EQUAL_AMPLITUDE_PHASE,
    HALF_ANGLE_FORGOTTEN,
    PHASE_HALVED,
    SECOND_WAVE_DETUNED,
    TWO_PI,
    control,
    equal_amplitude_resultant,
    fit_sinusoid,
    largest_gap,
    product_form,
    resultant_amplitude,
    resultant_phase,
    rms_amplitude,
    superpose,
    uniform_period,
)

MAX_PLOTTED_POINTS = 800  # charts show at most this many samples (evenly thinned)
SAMPLES_PER_PERIOD = 64  # uniform grid used by the RMS measurements
FIRST_FREQUENCY = 1.0  # Hz
BEAT_DETUNING = 0.25  # Hz: the product form is also checked on f₂ + this (one beat per window)
WINDOW = 4.0  # seconds: four periods of the first wave, one beat period at |f2 - f1| = 0.25 Hz
# The peak check must be able to tell an amplitude 10% off: the largest sample is at
# least R·cos(ωg/2), so the check means something only where that exceeds R/1.1.
PEAK_RESOLUTION_AT_LEAST = 1.0 / 1.1


def _thin(values: np.ndarray) -> list[float]:
    """At most MAX_PLOTTED_POINTS values, evenly spaced, for a chart."""
    step = max(1, math.ceil(values.shape[0] / MAX_PLOTTED_POINTS))
    return [float(v) for v in values[::step]]


# Defaults away from 1: with A = 1, A·x and x/A (a slip a check must catch) agree.
AMPLITUDE = Param("amplitude", "float", 1.5, T("amplitude A", "振幅 A"),
                  minimum=0.01, maximum=100.0, step=0.01)
PHASE = Param("phase", "float", 2.0, T("phase difference φ", "相位差 φ"), unit="rad",
              minimum=0.0, maximum=TWO_PI, step=0.01,
              help=T("0 = in phase, π ≈ 3.14 = opposite phase",
                     "0 表示同相，π ≈ 3.14 表示反相"))


@experiment(
    name="superposition",
    title=T("Two equal waves and their sum", "两列等幅波及其叠加"),
    description=T(
        "Samples A sin(ω₁t) and A sin(ω₂t + φ) at random times over four seconds, adds them, "
        "and measures the amplitude of the sum without using the formula. With f₂ = f₁ the sum "
        "is a pure sinusoid; with f₂ ≠ f₁ it beats, and the checks that need equal frequencies "
        "say so.",
        "在 4 秒内的随机时刻对 A sin(ω₁t) 与 A sin(ω₂t + φ) 采样并相加，不借助公式直接测量"
        "合成波的振幅。f₂ = f₁ 时合成波是纯正弦波；f₂ ≠ f₁ 时出现拍，"
        "需要频率相同的检查会注明不适用。",
    ),
    params=[
        AMPLITUDE,
        Param("frequency_2", "float", 1.0, T("second wave's frequency f₂ (f₁ = 1 Hz)",
                                             "第二列波的频率 f₂（f₁ = 1 Hz）"), unit="Hz",
              minimum=0.5, maximum=3.0, step=0.05,
              help=T("1 = the same frequency as the first wave; 1.25 beats once in the window",
                     "1 表示与第一列波同频；取 1.25 时窗口内恰好出现一次拍")),
        PHASE,
        Param("samples", "int", 600, T("random sample times", "随机采样点数"),
              minimum=16, maximum=20000, step=1),
        Param("seed", "int", 1, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        control(AMPLITUDE_TOO_HIGH, ("peak-matches-closed-form", "fit-amplitude",
                                     "product-form")),
        control(HALF_ANGLE_FORGOTTEN, ("peak-matches-closed-form", "fit-amplitude")),
        control(PHASE_HALVED, ("peak-matches-closed-form", "fit-amplitude", "product-form")),
        control(SECOND_WAVE_DETUNED, ("pure-sinusoid",)),
    ],
    metrics=[
        Metric(
            "closed_form_amplitude",
            T("amplitude from the formula 2A|cos(φ/2)|", "公式 2A|cos(φ/2)| 给出的振幅"),
        ),
        Metric("largest_sample", T("largest |sample| of the sum", "合成波采样值的最大绝对值")),
        Metric("fitted_amplitude", T("amplitude of the fitted sinusoid", "拟合正弦波的振幅")),
        Metric("fit_residual", T("fit residual (RMS)", "拟合残差（均方根）")),
        Metric("ratio_to_one_wave", T("amplitude of the sum / A", "合成振幅 / A"), "×"),
    ],
)
def superposition(amplitude: float, frequency_2: float, phase: float, samples: int,
                  seed: int) -> Result:
    omega1, omega2 = TWO_PI * FIRST_FREQUENCY, TWO_PI * frequency_2
    times = np.sort(np.random.default_rng(seed).uniform(0.0, WINDOW, samples))
    first, second, total = superpose(times, omega1, amplitude, amplitude, phase, omega2)

    closed_form = equal_amplitude_resultant(amplitude, phase)
    identity_error = float(np.max(np.abs(total - product_form(times, amplitude, omega1, omega2,
                                                              phase))))
    # The identity is about beats: with ω₂ = ω₁ its slow factor is the constant cos(φ/2),
    # blind to a wrong Δω or a wrong sign of φ in it. So it is checked on a beating pair too.
    beating = omega2 + TWO_PI * BEAT_DETUNING
    _, _, beat_total = superpose(times, omega1, amplitude, amplitude, phase, beating)
    identity_error = max(identity_error, float(np.max(np.abs(
        beat_total - product_form(times, amplitude, omega1, beating, phase)))))
    fitted, _, residual = fit_sinusoid(times, total, omega1)
    peak = float(np.max(np.abs(total)))
    gap = largest_gap(times, WINDOW)
    resolution = peak_resolution(omega1, gap)
    rounding = 1e-9 * amplitude
    same_frequency = frequency_2 == FIRST_FREQUENCY

    peak_name = T("The largest sample of the sum matches 2A|cos(φ/2)|",
                  "合成波的最大采样值与 2A|cos(φ/2)| 一致")
    fit_name = T("A least-squares sinusoid fit of the sum has amplitude 2A|cos(φ/2)|",
                 "对合成波做最小二乘正弦拟合，振幅为 2A|cos(φ/2)|")
    needs_same = T("needs f₂ = f₁: with different frequencies the sum beats and has no single "
                   "amplitude", "需要 f₂ = f₁：频率不同时合成波出现拍，没有单一的振幅")
    if not same_frequency:
        peak = Check.not_applicable(id="peak-matches-closed-form", name=peak_name,
                                    expected="2A|cos(φ/2)|", why=needs_same)
    elif resolution < PEAK_RESOLUTION_AT_LEAST:
        peak = Check.not_applicable(
            id="peak-matches-closed-form", name=peak_name, expected="2A|cos(φ/2)|",
            measured=f"cos(ωg/2) = {resolution:.3f}",
            why=T(f"needs samples dense enough to tell a 10% error, cos(ωg/2) ≥ 1/1.1; here "
                  f"g = {gap:.3g} s gives {resolution:.3f} (try a few hundred samples or more)",
                  f"需要采样足够密、能分辨 10% 的误差，即 cos(ωg/2) ≥ 1/1.1；"
                  f"这里 g = {gap:.3g} 秒，"
                  f"只有 {resolution:.3f}（可以试试几百个以上的采样点）"))
    else:
        peak = peak_check("peak-matches-closed-form", peak_name, peak, closed_form, resolution,
                          rounding)
    fit = (amplitude_check("fit-amplitude", fit_name, fitted, closed_form, rounding)
           if same_frequency else
           Check.not_applicable(id="fit-amplitude", name=fit_name, expected="2A|cos(φ/2)|",
                                why=needs_same))
    pure_name = T("The sum is a pure sinusoid of the first wave's frequency (fit residual, RMS)",
                  "合成波仍是与第一列波同频率的纯正弦波（拟合残差的均方根）")
    # Two frequencies beat: the sum is then no sinusoid of f₁, by the product form below.
    pure = (amplitude_check("pure-sinusoid", pure_name, residual, 0.0, rounding)
            if same_frequency else
            Check.not_applicable(id="pure-sinusoid", name=pure_name, expected="0",
                                 measured=f"{residual:.3g}", why=needs_same))
    checks = [
        peak,
        fit,
        pure,
        amplitude_check(
            "product-form",
            T("The sum equals 2A cos((Δω·t + φ)/2) sin(ω̄t + φ/2) at every sample, for this "
              f"f₂ and for a beating f₂ + {BEAT_DETUNING:g} Hz (largest difference)",
              "每个采样点上合成波都等于 2A cos((Δω·t + φ)/2) sin(ω̄t + φ/2)：对当前的 f₂ "
              f"和会出现拍的 f₂ + {BEAT_DETUNING:g} Hz 都成立（最大差值）"),
            identity_error, 0.0, 1e-11 * amplitude * (frequency_2 + BEAT_DETUNING),
        ),
    ]
    figure = LineChart(
        title=T("The two waves and their sum", "两列波与合成波"),
        x_label=T("time t (s)", "时间 t（秒）"),
        y_label=T("displacement", "位移"),
        series=[
            Series(T("A sin(ω₁t)", "A sin(ω₁t)"), _thin(times), _thin(first)),
            Series(T("A sin(ω₂t + φ)", "A sin(ω₂t + φ)"), _thin(times), _thin(second)),
            Series(T("sum", "合成波"), _thin(times), _thin(total)),
        ],
    )
    notes = [T(f"{samples} random sample times over {WINDOW:g} s; the chart shows at most "
               f"{MAX_PLOTTED_POINTS} of them.",
               f"{WINDOW:g} 秒内共 {samples} 个随机采样时刻；"
               f"图中最多显示 {MAX_PLOTTED_POINTS} 个。"),
             T("The largest sample can miss the true peak R = 2A|cos(φ/2)| only because "
               "no sample falls exactly on it, so it must lie in [R·cos(ωg/2), R], where g "
               "is twice the largest distance from a time in the window to its nearest sample "
               f"(here g = {gap:.3g} s, cos(ωg/2) = {resolution:.3f}).",
               "采样点不一定正好落在波峰上，所以最大采样值可能略小于真实峰值 "
               "R = 2A|cos(φ/2)|，但必定落在 [R·cos(ωg/2), R] 之内；其中 g 是"
               f"窗口内任一时刻到最近采样点的最大距离的两倍（这里 g = {gap:.3g} 秒，"
               f"cos(ωg/2) = {resolution:.3f}）。")]
    if not same_frequency:
        notes.append(T(f"f₂ ≠ f₁: the sum beats, its envelope 2A|cos((Δω·t + φ)/2)| repeating "
                       f"every {1 / abs(frequency_2 - FIRST_FREQUENCY):.3g} s, so it is not a "
                       "pure sinusoid and the residual check fails: that is the premise "
                       "\"same frequency\" at work.",
                       f"f₂ ≠ f₁：合成波出现拍，包络 2A|cos((Δω·t + φ)/2)| 每 "
                       f"{1 / abs(frequency_2 - FIRST_FREQUENCY):.3g} 秒重复一次，"
                       "它不再是纯正弦波，残差检查因此失败——这正说明“频率相同”这个前提必不可少。"))
    return Result(
        checks=checks,
        figures=[figure],
        metrics={
            "closed_form_amplitude": closed_form,
            "largest_sample": float(np.max(np.abs(total))),
            "fitted_amplitude": fitted,
            "fit_residual": residual,
            "ratio_to_one_wave": closed_form / amplitude,
        },
        notes=notes,
    )


LANDMARKS = (
    # (check id, phase, expected amplitude in units of A, English name, Chinese name)
    ("in-phase-doubles", 0.0, 2.0, "φ = 0: in phase, the amplitude doubles to 2A",
     "φ = 0：同相，振幅加倍为 2A"),
    ("quarter-period-root-two", math.pi / 2.0, math.sqrt(2.0),
     "φ = π/2: a quarter period apart, √2·A", "φ = π/2：相差四分之一周期，振幅为 √2·A"),
    ("two-thirds-pi-one-wave", TWO_PI / 3.0, 1.0,
     "φ = 2π/3: the sum is no larger than one wave, A",
     "φ = 2π/3：合成波与单列波一样大，振幅为 A"),
    ("opposite-phase-cancels", math.pi, 0.0, "φ = π: opposite phase, the waves cancel, 0",
     "φ = π：反相，两列波完全抵消，振幅为 0"),
)


@experiment(
    name="phase-sweep",
    title=T("Amplitude of the sum across all phase differences",
            "合成振幅随相位差的变化"),
    description=T(
        "For phase differences from 0 to 2π, samples the sum over one period and measures its "
        "amplitude from its RMS value, then compares with 2A|cos(φ/2)|.",
        "相位差从 0 扫到 2π，每个相位差下在一个周期内对合成波采样，"
        "由均方根值测出振幅，再与 2A|cos(φ/2)| 比较。",
    ),
    params=[
        AMPLITUDE,
        Param("steps", "int", 90, T("phase steps per π", "每 π 的相位步数"),
              minimum=2, maximum=360, step=1),
    ],
    controls=[
        control(AMPLITUDE_TOO_HIGH, ("sweep-matches-closed-form", "in-phase-doubles",
                                     "quarter-period-root-two", "two-thirds-pi-one-wave")),
        control(PHASE_HALVED, ("sweep-matches-closed-form", "quarter-period-root-two",
                               "two-thirds-pi-one-wave", "opposite-phase-cancels")),
        control(HALF_ANGLE_FORGOTTEN, ("sweep-matches-closed-form",)),
    ],
    metrics=[
        Metric(
            "max_error",
            T("largest |measured − 2A|cos(φ/2)||", "最大偏差 |测量值 − 2A|cos(φ/2)||"),
        ),
    ],
)
def phase_sweep(amplitude: float, steps: int) -> Result:
    phases = np.arange(2 * steps + 1) * (math.pi / steps)  # 0, ..., pi, ..., 2 pi
    times = uniform_period(SAMPLES_PER_PERIOD)
    omega = TWO_PI
    _, _, waves = superpose(times[None, :], omega, amplitude, amplitude, phases[:, None])
    measured = rms_amplitude(waves)
    closed_form = np.array([equal_amplitude_resultant(amplitude, p) for p in phases])
    max_error = float(np.max(np.abs(measured - closed_form)))
    rounding = 1e-9 * amplitude

    checks = [
        amplitude_check(
            "sweep-matches-closed-form",
            T(f"2A|cos(φ/2)| matches the measured amplitude at all {phases.size} phases "
              "(largest error)",
              f"在全部 {phases.size} 个相位差上 2A|cos(φ/2)| 与测量振幅一致（最大误差）"),
            max_error, 0.0, rounding,
        )
    ]
    rows = []
    for check_id, phase, units_of_a, name_en, name_zh in LANDMARKS:
        _, _, total = superpose(times, omega, amplitude, amplitude, phase)
        value = rms_amplitude(total)
        checks.append(amplitude_check(check_id, T(name_en, name_zh), value,
                                      units_of_a * amplitude, rounding))
        rows.append([f"{phase:.6f}", f"{units_of_a:.6f}·A", f"{value:.10g}"])

    figure = LineChart(
        title=T("Amplitude of the sum versus phase difference", "合成振幅与相位差"),
        x_label=T("phase difference φ (rad)", "相位差 φ（弧度）"),
        y_label=T("amplitude of the sum", "合成振幅"),
        series=[
            Series(T("measured (RMS of the sampled sum)", "测量值（采样合成波的均方根）"),
                   phases.tolist(), measured.tolist()),
            Series(T("closed form 2A|cos(φ/2)|", "公式 2A|cos(φ/2)|"),
                   phases.tolist(), closed_form.tolist()),
        ],
    )
    table = Table(
        title=T("Landmark phases", "几个特殊相位差"),
        columns=[T("φ (rad)", "φ（弧度）"), T("expected", "预期"), T("measured", "测量值")],
        rows=rows,
    )
    return Result(checks=checks, figures=[figure], tables=[table],
                  metrics={"max_error": max_error})


@experiment(
    name="unequal-amplitudes",
    title=T("Two waves of different amplitudes", "振幅不同的两列波"),
    description=T(
        "Adds A1 sin(ωt) and A2 sin(ωt + φ), measures the amplitude and phase of the sum and "
        "how far it is from a pure sinusoid, and sweeps φ to find the largest and smallest "
        "possible amplitude.",
        "把 A1 sin(ωt) 与 A2 sin(ωt + φ) 相加，测量合成波的振幅、相位以及它与纯正弦波的偏差，"
        "并扫描 φ 找出合成振幅的最大值和最小值。",
    ),
    params=[
        # 1.25, not 1.5: with A2 = 0.5, (A1 − A2)² would be exactly 1, where a slip
        # max(1, ...) for max(0, ...) under the square root is invisible at every φ.
        Param("a1", "float", 1.25, T("amplitude A1", "振幅 A1"), minimum=0.01, maximum=100.0,
              step=0.01),
        Param("a2", "float", 0.5, T("amplitude A2", "振幅 A2"), minimum=0.0, maximum=100.0,
              step=0.01),
        PHASE,
    ],
    controls=[
        control(CROSS_TERM_HALVED, ("amplitude-formula", "formula-across-phases")),
        control(AMPLITUDE_TOO_HIGH, ("amplitude-formula", "formula-across-phases", "largest-is-sum",
                                     "smallest-is-difference")),
        control(EQUAL_AMPLITUDE_PHASE, ("phase-formula",)),
        control(SECOND_WAVE_DETUNED, ("pure-sinusoid",)),
    ],
    metrics=[
        Metric("amplitude", T("amplitude of the sum (RMS)", "合成振幅（由均方根测得）")),
        Metric("fitted_amplitude", T("amplitude of the fitted sinusoid", "拟合正弦波的振幅")),
        Metric("phase_of_sum", T("phase of the sum", "合成波的相位"), "rad"),
        Metric("fit_residual", T("fit residual (RMS)", "拟合残差（均方根）")),
        Metric("smallest", T("smallest amplitude over all φ", "所有 φ 中最小的合成振幅")),
        Metric("largest", T("largest amplitude over all φ", "所有 φ 中最大的合成振幅")),
    ],
)
def unequal_amplitudes(a1: float, a2: float, phase: float) -> Result:
    times = uniform_period(256)
    omega = TWO_PI
    _, _, total = superpose(times, omega, a1, a2, phase)
    measured = rms_amplitude(total)
    fitted_amplitude, fitted_phase, residual = fit_sinusoid(times, total, omega)
    expected = resultant_amplitude(a1, a2, phase)
    scale = max(a1, a2)
    rounding = 1e-9 * scale

    phase_name = T("Measured phase of the sum equals atan2(A2 sin φ, A1 + A2 cos φ)",
                   "测得的合成相位等于 atan2(A2 sin φ, A1 + A2 cos φ)")
    checks = [
        amplitude_check(
            "amplitude-formula",
            T("Measured amplitude equals √(A1² + A2² + 2·A1·A2·cos φ)",
              "测得的振幅等于 √(A1² + A2² + 2·A1·A2·cos φ)"),
            measured, expected, rounding,
        ),
        angle_check("phase-formula", phase_name, fitted_phase,
                    resultant_phase(a1, a2, phase), 1e-7)
        if fitted_amplitude > 1e-6 * scale else
        Check.not_applicable(id="phase-formula", name=phase_name,
                             expected="atan2(A2 sin φ, A1 + A2 cos φ)",
                             why=T("needs a sum that is not zero: here the waves cancel, so "
                                   "there is no phase to compare (A1 ≠ A2 or φ ≠ π)",
                                   "需要合成波不为零：这里两列波完全抵消，没有相位可比"
                                   "（需 A1 ≠ A2 或 φ ≠ π）")),
        amplitude_check(
            "pure-sinusoid",
            T("The sum is still a pure sinusoid (fit residual, RMS)",
              "合成波仍是纯正弦波（拟合残差的均方根）"),
            residual, 0.0, rounding,
        ),
    ]

    sweep = np.linspace(0.0, TWO_PI, 361)
    _, _, waves = superpose(times[None, :], omega, a1, a2, sweep[:, None])
    swept = rms_amplitude(waves)
    formula = np.array([resultant_amplitude(a1, a2, p) for p in sweep])
    smallest, largest = float(swept.min()), float(swept.max())
    checks += [
        amplitude_check(
            "formula-across-phases",
            T(f"√(A1² + A2² + 2·A1·A2·cos φ) matches the measured amplitude at all {sweep.size} "
              "swept φ (largest error)",
              f"在扫描的全部 {sweep.size} 个 φ 上，√(A1² + A2² + 2·A1·A2·cos φ) 都与测得的振幅一致"
              "（最大误差）"),
            float(np.max(np.abs(swept - formula))), 0.0, rounding,
        ),
        amplitude_check(
            "largest-is-sum",
            T("Largest amplitude over all φ is A1 + A2 (at φ = 0)",
              "所有 φ 中最大的合成振幅为 A1 + A2（在 φ = 0 处）"),
            largest, a1 + a2, rounding,
        ),
        amplitude_check(
            "smallest-is-difference",
            T("Smallest amplitude over all φ is |A1 − A2| (at φ = π): no full cancellation "
              "unless A1 = A2",
              "所有 φ 中最小的合成振幅为 |A1 − A2|（在 φ = π 处）：只有 A1 = A2 时才会完全抵消"),
            smallest, abs(a1 - a2), rounding,
        ),
    ]
    figure = LineChart(
        title=T("Amplitude of A1 sin(ωt) + A2 sin(ωt + φ)", "A1 sin(ωt) + A2 sin(ωt + φ) 的振幅"),
        x_label=T("phase difference φ (rad)", "相位差 φ（弧度）"),
        y_label=T("amplitude of the sum", "合成振幅"),
        series=[
            Series(T("measured (RMS)", "测量值（均方根）"), sweep.tolist(), swept.tolist()),
            Series(T("√(A1² + A2² + 2·A1·A2·cos φ)", "√(A1² + A2² + 2·A1·A2·cos φ)"),
                   sweep.tolist(), formula.tolist()),
        ],
    )
    return Result(
        checks=checks,
        figures=[figure],
        metrics={"amplitude": measured, "fitted_amplitude": fitted_amplitude,
                 "phase_of_sum": fitted_phase, "fit_residual": residual,
                 "smallest": smallest, "largest": largest},
    )


EXPERIMENTS = [superposition, phase_sweep, unequal_amplitudes, two_sources]
