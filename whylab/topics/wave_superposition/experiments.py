"""Experiments for "wave superposition": adding two sinusoids of the same frequency.

The page claims that A sin(wt) + A sin(wt + phi) is again a sinusoid of frequency
w with amplitude 2A|cos(phi/2)|, and more generally that two waves of amplitudes
A1 and A2 add up to amplitude sqrt(A1^2 + A2^2 + 2 A1 A2 cos(phi)). Each
experiment samples the actual sum and measures its amplitude in ways that do not
use those formulas -- the largest sample, a least-squares sinusoid fit, and the
RMS value -- then compares.

The comparisons are small functions (:func:`amplitude_check`, :func:`peak_check`,
...) so that tests can feed them wrong closed forms and watch them fail.
"""

from __future__ import annotations

import math

import numpy as np

from whylab.explorer.experiment import (
    Check,
    LineChart,
    Param,
    Result,
    Series,
    T,
    Table,
    experiment,
)

TWO_PI = 2.0 * math.pi
MAX_PLOTTED_POINTS = 800  # charts show at most this many samples (evenly thinned)
SAMPLES_PER_PERIOD = 64  # uniform grid used by the RMS measurements

# ---------------------------------------------------------------- closed forms


def equal_amplitude_resultant(amplitude: float, phase: float) -> float:
    """Amplitude of A sin(wt) + A sin(wt + phase): 2A|cos(phase/2)|."""
    return 2.0 * amplitude * abs(math.cos(phase / 2.0))


def resultant_amplitude(a1: float, a2: float, phase: float) -> float:
    """Amplitude of A1 sin(wt) + A2 sin(wt + phase): sqrt(A1^2 + A2^2 + 2 A1 A2 cos(phase))."""
    # max(0, ...): at a1 == a2, phase == pi rounding could make the sum slightly negative.
    return math.sqrt(max(0.0, a1 * a1 + a2 * a2 + 2.0 * a1 * a2 * math.cos(phase)))


def resultant_phase(a1: float, a2: float, phase: float) -> float:
    """Phase theta of the sum R sin(wt + theta), in (-pi, pi]."""
    return math.atan2(a2 * math.sin(phase), a1 + a2 * math.cos(phase))


# ---------------------------------------------------------------- measurements


def superpose(times: np.ndarray, omega: float, a1: float, a2: float, phase: float):
    """The two waves and their sum, sampled at ``times``."""
    first = a1 * np.sin(omega * times)
    second = a2 * np.sin(omega * times + phase)
    return first, second, first + second


def fit_sinusoid(times: np.ndarray, values: np.ndarray, omega: float):
    """Least-squares fit ``values ~ R sin(omega t + theta)``; returns (R, theta, rms residual).

    Writes R sin(wt + theta) = p sin(wt) + q cos(wt) with p = R cos(theta),
    q = R sin(theta), which is linear in p and q.
    """
    basis = np.column_stack([np.sin(omega * times), np.cos(omega * times)])
    (p, q), *_ = np.linalg.lstsq(basis, values, rcond=None)
    residual = values - basis @ np.array([p, q])
    return math.hypot(p, q), math.atan2(q, p), float(np.sqrt(np.mean(residual**2)))


def rms_amplitude(values: np.ndarray) -> float:
    """sqrt(2 * mean(y^2)): the amplitude of a sinusoid sampled uniformly over whole periods.

    Exact (up to rounding) for three or more samples per period, because the
    sampled cos(2wt) terms then sum to zero.
    """
    return math.sqrt(2.0 * float(np.mean(np.square(values), axis=-1)))


def largest_gap(times: np.ndarray, window: float) -> float:
    """Largest distance from any point of [0, window] to its nearest sample, doubled."""
    edges = [2.0 * times[0], 2.0 * (window - times[-1])]
    return float(max(np.max(np.diff(times), initial=0.0), *edges))


# ---------------------------------------------------------------- checks


def amplitude_check(name, measured: float, expected: float, tolerance: float) -> Check:
    """Pass when ``measured`` is within ``tolerance`` of ``expected``."""
    error = abs(measured - expected)
    return Check(
        name=name,
        passed=bool(error <= tolerance),
        measured=f"{measured:.10g} (|Δ| = {error:.2e})",
        expected=f"{expected:.10g} ± {tolerance:.1e}",
    )


def peak_check(name, peak: float, amplitude: float, omega: float, gap: float,
               tolerance: float) -> Check:
    """The largest |sample| of R sin(wt + theta) lies in [R cos(w gap / 2), R].

    ``measured`` and ``expected`` hold numbers and symbols only (they show on both
    language pages); the experiment's notes say what R and g are.

    Within two periods |y| reaches R four times; every such peak is at most
    gap/2 from a sample, where |y| >= R cos(w gap / 2). So the largest sample
    can fall short of R only by that much, and can never exceed it.
    """
    lower = amplitude * math.cos(min(math.pi / 2.0, omega * gap / 2.0))
    passed = lower - tolerance <= peak <= amplitude + tolerance
    return Check(
        name=name,
        passed=bool(passed),
        measured=f"{peak:.10g}",
        expected=f"∈ [R·cos(ωg/2), R] = [{lower:.10g}, {amplitude:.10g}]",
    )


def angle_check(name, measured: float, expected: float, tolerance: float) -> Check:
    """Pass when two angles agree modulo 2 pi."""
    error = abs((measured - expected + math.pi) % TWO_PI - math.pi)
    return Check(
        name=name,
        passed=bool(error <= tolerance),
        measured=f"{measured:.10g} rad (|Δ| = {error:.2e})",
        expected=f"{expected:.10g} rad ± {tolerance:.1e}",
    )


def _thin(values: np.ndarray) -> list[float]:
    """At most MAX_PLOTTED_POINTS values, evenly spaced, for a chart."""
    step = max(1, math.ceil(values.shape[0] / MAX_PLOTTED_POINTS))
    return [float(v) for v in values[::step]]


def _uniform_period(samples: int = SAMPLES_PER_PERIOD) -> np.ndarray:
    """``samples`` uniform times covering one period of a 1 Hz wave, end excluded."""
    return np.arange(samples) / samples


# ---------------------------------------------------------------- parameters

AMPLITUDE = Param("amplitude", "float", 1.0, T("amplitude A", "振幅 A"),
                  minimum=0.01, maximum=100.0, step=0.01)
PHASE = Param("phase", "float", 2.0, T("phase difference φ", "相位差 φ"), unit="rad",
              minimum=0.0, maximum=TWO_PI, step=0.01,
              help=T("0 = in phase, π ≈ 3.14 = opposite phase",
                     "0 表示同相，π ≈ 3.14 表示反相"))


# ---------------------------------------------------------------- experiments


@experiment(
    name="superposition",
    title=T("Two equal waves and their sum", "两列等幅波及其叠加"),
    description=T(
        "Samples A sin(ωt) and A sin(ωt + φ) at random times over two periods, adds them, "
        "and measures the amplitude of the sum without using the formula.",
        "在两个周期内的随机时刻对 A sin(ωt) 与 A sin(ωt + φ) 采样并相加，"
        "不借助公式直接测量合成波的振幅。",
    ),
    params=[
        AMPLITUDE,
        Param("frequency", "float", 1.0, T("frequency f", "频率 f"), unit="Hz",
              minimum=0.1, maximum=50.0, step=0.1),
        PHASE,
        Param("samples", "int", 600, T("random sample times", "随机采样点数"),
              minimum=16, maximum=20000, step=1),
        Param("seed", "int", 1, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
)
def superposition(amplitude: float, frequency: float, phase: float, samples: int,
                  seed: int) -> Result:
    omega = TWO_PI * frequency
    window = 2.0 / frequency  # two periods
    times = np.sort(np.random.default_rng(seed).uniform(0.0, window, samples))
    first, second, total = superpose(times, omega, amplitude, amplitude, phase)

    closed_form = equal_amplitude_resultant(amplitude, phase)
    product_form = 2.0 * amplitude * math.cos(phase / 2.0) * np.sin(omega * times + phase / 2.0)
    identity_error = float(np.max(np.abs(total - product_form)))
    fitted, _, residual = fit_sinusoid(times, total, omega)
    peak = float(np.max(np.abs(total)))
    gap = largest_gap(times, window)
    rounding = 1e-9 * amplitude

    checks = [
        peak_check(
            T("The largest sample of the sum matches 2A|cos(φ/2)|",
              "合成波的最大采样值与 2A|cos(φ/2)| 一致"),
            peak, closed_form, omega, gap, rounding,
        ),
        amplitude_check(
            T("A least-squares sinusoid fit of the sum has amplitude 2A|cos(φ/2)|",
              "对合成波做最小二乘正弦拟合，振幅为 2A|cos(φ/2)|"),
            fitted, closed_form, rounding,
        ),
        amplitude_check(
            T("The sum is a pure sinusoid of the same frequency (fit residual, RMS)",
              "合成波仍是同频率的纯正弦波（拟合残差的均方根）"),
            residual, 0.0, rounding,
        ),
        amplitude_check(
            T("The sum equals 2A cos(φ/2) sin(ωt + φ/2) at every sample (largest difference)",
              "每个采样点上合成波都等于 2A cos(φ/2) sin(ωt + φ/2)（最大差值）"),
            identity_error, 0.0, 1e-11 * amplitude,
        ),
    ]
    figure = LineChart(
        title=T("The two waves and their sum", "两列波与合成波"),
        x_label=T("time t (s)", "时间 t（秒）"),
        y_label=T("displacement", "位移"),
        series=[
            Series(T("A sin(ωt)", "A sin(ωt)"), _thin(times), _thin(first)),
            Series(T("A sin(ωt + φ)", "A sin(ωt + φ)"), _thin(times), _thin(second)),
            Series(T("sum", "合成波"), _thin(times), _thin(total)),
        ],
    )
    return Result(
        checks=checks,
        figures=[figure],
        metrics={
            "closed_form_amplitude": closed_form,
            "largest_sample": peak,
            "fitted_amplitude": fitted,
            "ratio_to_one_wave": closed_form / amplitude,
        },
        notes=[T(f"{samples} random sample times; the chart shows at most "
                 f"{MAX_PLOTTED_POINTS} of them.",
                 f"共 {samples} 个随机采样时刻；图中最多显示 {MAX_PLOTTED_POINTS} 个。"),
               T("The largest sample can miss the true peak R = 2A|cos(φ/2)| only because "
                 "no sample falls exactly on it, so it must lie in [R·cos(ωg/2), R], where g "
                 "is twice the largest distance from a time in the two periods to its "
                 f"nearest sample (here g = {gap:.3g} s).",
                 "采样点不一定正好落在波峰上，所以最大采样值可能略小于真实峰值 "
                 "R = 2A|cos(φ/2)|，但必定落在 [R·cos(ωg/2), R] 之内；其中 g 是"
                 f"两个周期内任一时刻到最近采样点的最大距离的两倍（这里 g = {gap:.3g} 秒）。")],
    )


LANDMARKS = (
    # (phase, expected amplitude in units of A, English name, Chinese name)
    (0.0, 2.0, "φ = 0: in phase, the amplitude doubles to 2A",
     "φ = 0：同相，振幅加倍为 2A"),
    (math.pi / 2.0, math.sqrt(2.0), "φ = π/2: a quarter period apart, √2·A",
     "φ = π/2：相差四分之一周期，振幅为 √2·A"),
    (TWO_PI / 3.0, 1.0, "φ = 2π/3: the sum is no larger than one wave, A",
     "φ = 2π/3：合成波与单列波一样大，振幅为 A"),
    (math.pi, 0.0, "φ = π: opposite phase, the waves cancel, 0",
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
)
def phase_sweep(amplitude: float, steps: int) -> Result:
    phases = np.arange(2 * steps + 1) * (math.pi / steps)  # 0, ..., pi, ..., 2 pi
    times = _uniform_period()
    omega = TWO_PI
    waves = amplitude * np.sin(omega * times) + amplitude * np.sin(
        omega * times[None, :] + phases[:, None]
    )
    measured = np.sqrt(2.0 * np.mean(waves**2, axis=1))
    closed_form = np.array([equal_amplitude_resultant(amplitude, p) for p in phases])
    max_error = float(np.max(np.abs(measured - closed_form)))
    rounding = 1e-9 * amplitude

    checks = [
        amplitude_check(
            T(f"2A|cos(φ/2)| matches the measured amplitude at all {phases.size} phases "
              "(largest error)",
              f"在全部 {phases.size} 个相位差上 2A|cos(φ/2)| 与测量振幅一致（最大误差）"),
            max_error, 0.0, rounding,
        )
    ]
    rows = []
    for phase, units_of_a, name_en, name_zh in LANDMARKS:
        _, _, total = superpose(times, omega, amplitude, amplitude, phase)
        value = rms_amplitude(total)
        checks.append(amplitude_check(T(name_en, name_zh), value, units_of_a * amplitude,
                                      rounding))
        rows.append([f"{phase:.6f}", f"{units_of_a:.6f}·A", f"{value:.10g}"])

    # Over a full turn of phases (2 pi itself excluded: it repeats 0) cos(phi) averages
    # to zero, so the mean squared amplitude should be 2A^2 = A^2 + A^2.
    mean_power = float(np.mean(measured[:-1] ** 2))
    checks.append(amplitude_check(
        T("Averaged over all phases, the squared amplitude is 2A² = A² + A² "
          "(energy is moved around, not lost)",
          "对所有相位差取平均，振幅平方等于 2A² = A² + A²（能量被重新分配而不是消失）"),
        mean_power, 2.0 * amplitude**2, 1e-9 * amplitude**2,
    ))
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
                  metrics={"max_error": max_error, "mean_squared_amplitude": mean_power})


@experiment(
    name="unequal-amplitudes",
    title=T("Two waves of different amplitudes", "振幅不同的两列波"),
    description=T(
        "Adds A1 sin(ωt) and A2 sin(ωt + φ), measures the amplitude and phase of the sum, and "
        "sweeps φ to find the largest and smallest possible amplitude.",
        "把 A1 sin(ωt) 与 A2 sin(ωt + φ) 相加，测量合成波的振幅和相位，"
        "并扫描 φ 找出合成振幅的最大值和最小值。",
    ),
    params=[
        Param("a1", "float", 1.0, T("amplitude A1", "振幅 A1"), minimum=0.01, maximum=100.0,
              step=0.01),
        Param("a2", "float", 0.5, T("amplitude A2", "振幅 A2"), minimum=0.0, maximum=100.0,
              step=0.01),
        PHASE,
    ],
)
def unequal_amplitudes(a1: float, a2: float, phase: float) -> Result:
    times = _uniform_period(256)
    omega = TWO_PI
    _, _, total = superpose(times, omega, a1, a2, phase)
    measured = rms_amplitude(total)
    fitted_amplitude, fitted_phase, _ = fit_sinusoid(times, total, omega)
    expected = resultant_amplitude(a1, a2, phase)
    scale = max(a1, a2)
    rounding = 1e-9 * scale

    checks = [
        amplitude_check(
            T("Measured amplitude equals √(A1² + A2² + 2·A1·A2·cos φ)",
              "测得的振幅等于 √(A1² + A2² + 2·A1·A2·cos φ)"),
            measured, expected, rounding,
        ),
    ]
    notes = []
    if fitted_amplitude > 1e-6 * scale:
        checks.append(angle_check(
            T("Measured phase of the sum equals atan2(A2 sin φ, A1 + A2 cos φ)",
              "测得的合成相位等于 atan2(A2 sin φ, A1 + A2 cos φ)"),
            fitted_phase, resultant_phase(a1, a2, phase), 1e-7,
        ))
    else:
        notes.append(T("The sum is zero, so it has no phase to compare.",
                       "合成波为零，没有相位可比较。"))

    sweep = np.linspace(0.0, TWO_PI, 361)
    waves = a1 * np.sin(omega * times) + a2 * np.sin(omega * times[None, :] + sweep[:, None])
    swept = np.sqrt(2.0 * np.mean(waves**2, axis=1))
    smallest, largest = float(swept.min()), float(swept.max())
    checks += [
        amplitude_check(
            T("Largest amplitude over all φ is A1 + A2 (at φ = 0)",
              "所有 φ 中最大的合成振幅为 A1 + A2（在 φ = 0 处）"),
            largest, a1 + a2, rounding,
        ),
        amplitude_check(
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
                   sweep.tolist(), [resultant_amplitude(a1, a2, p) for p in sweep]),
        ],
    )
    return Result(
        checks=checks,
        figures=[figure],
        notes=notes,
        metrics={"amplitude": measured, "fitted_amplitude": fitted_amplitude,
                 "phase_of_sum": fitted_phase, "smallest": smallest, "largest": largest},
    )


EXPERIMENTS = [superposition, phase_sweep, unequal_amplitudes]
