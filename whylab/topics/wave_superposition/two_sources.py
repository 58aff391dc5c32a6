"""The two-source experiment: where the phase difference comes from a path difference.

Two sources a distance d apart send out the same travelling wave
A sin(k r − ω t), k = 2π/λ, in step. At a point at distances r1 and r2 the
waves arrive with phase difference φ = k (r2 − r1) = 2π Δd / λ, which changes
from point to point: bright and dark fringes. Everything is measured from
sampled waves: the phase of each wave at a point (its projection on e^{iωt}),
the amplitude and intensity of the sum (RMS and mean square over a period),
and, for incoherent sources, the intensity averaged over many random phase
jumps. The energy check averages the intensity over a circle of directions far
away and compares with 2 I₁ (1 + J₀(kd)) from scipy's Bessel function.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import j0

from whylab.explorer.experiment import (
    Check,
    Control,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    control_active,
    experiment,
)
from whylab.topics.wave_superposition.checks import amplitude_check, angle_error
from whylab.topics.wave_superposition.waves import (
    AMPLITUDE_TOO_HIGH,
    TOO_HIGH,
    TWO_PI,
    control,
    equal_amplitude_resultant,
    uniform_period,
)

AMPLITUDE = 1.0
OMEGA = TWO_PI  # 1 Hz
SCREEN_DISTANCE = 10.0
SCREEN_HALF_WIDTH = 10.0
SCREEN_POINTS = 201  # odd: the middle point is equidistant from both sources
SAMPLES_PER_PERIOD = 8
PHASE_JUMPS = 1000  # random phases of the incoherent second source
DIRECTIONS = 2048  # far-field circle for the energy average
RING_PHASE_JUMPS = 100  # random phases used on the circle when coherence is lost (a control)
INCOHERENT_SIGMAS = 5.0

WAVE_NUMBER_WITHOUT_TWO_PI = "wave-number-without-2pi"
SOURCES_IN_ANTIPHASE = "sources-in-antiphase"
INCOHERENT_AS_COHERENT = "incoherent-as-coherent"
COHERENT_AS_INCOHERENT = "coherent-as-incoherent"


def wave_number(wavelength: float) -> float:
    """k = 2π/λ (under its control, 1/λ: the 2π forgotten)."""
    if control_active(WAVE_NUMBER_WITHOUT_TWO_PI):
        return 1.0 / wavelength
    return TWO_PI / wavelength


def travelling_wave(distance: np.ndarray, times: np.ndarray, k: float,
                    offset: np.ndarray | float = 0.0) -> np.ndarray:
    """A sin(k r − ω t + offset) at each distance (rows) and time (columns)."""
    amplitude = AMPLITUDE * (TOO_HIGH if control_active(AMPLITUDE_TOO_HIGH) else 1.0)
    return amplitude * np.sin(k * np.asarray(distance)[..., None] - OMEGA * times
                              + np.asarray(offset)[..., None])


def second_source_offset() -> float:
    """The second source's phase relative to the first (π under its control)."""
    return math.pi if control_active(SOURCES_IN_ANTIPHASE) else 0.0


def phase_at(waves: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Phase of A sin(θ − ω t) from its samples over one period: the angle of mean(y e^{iωt}).

    mean(A sin(θ − ωt) e^{iωt}) = (A/2i) e^{iθ} for three or more samples per
    period, so the angle is θ − π/2; differences of two phases are exact.
    """
    return np.angle(np.mean(waves * np.exp(1j * OMEGA * times), axis=-1))


def intensity(waves: np.ndarray) -> np.ndarray:
    """Mean square over the sampled period(s): the time-averaged intensity, up to a constant."""
    return np.mean(np.square(waves), axis=-1)


@experiment(
    name="two-sources",
    title=T("Two sources: phase from path difference", "两个波源：由路程差产生的相位差"),
    description=T(
        "Two sources d apart emit A sin(kr − ωt) in step. Along a screen the path difference "
        "Δd, and with it φ = 2πΔd/λ, changes from point to point; measures the phase, amplitude "
        "and intensity of the sum at every point, for coherent and for incoherent sources, and "
        "the intensity averaged over all directions far away.",
        "两个相距 d 的波源同步发出 A sin(kr − ωt)。沿着观察屏，路程差 Δd 以及相位差 "
        "φ = 2πΔd/λ 逐点变化；实验在每个点上测量合成波的相位、振幅和强度，分别考察相干与非相干"
        "波源，并测量远处各个方向上强度的平均值。",
    ),
    params=[
        Param("wavelength", "float", 1.0, T("wavelength λ", "波长 λ"), minimum=0.2, maximum=4.0,
              step=0.05, help=T("wave number k = 2π/λ", "波数 k = 2π/λ")),
        Param("separation", "float", 3.0, T("source separation d", "波源间距 d"), minimum=0.5,
              maximum=10.0, step=0.1),
        Param("seed", "int", 0, T("random seed (incoherent phases)", "随机种子（非相干相位）"),
              minimum=0, maximum=2**31 - 1, seed=True),
    ],
    controls=[
        Control(WAVE_NUMBER_WITHOUT_TWO_PI,
                T("the waves use k = 1/λ, the 2π forgotten", "波数误用了 k = 1/λ，漏掉了 2π"),
                breaks=("phase-from-path-difference", "fringe-amplitude")),
        Control(SOURCES_IN_ANTIPHASE,
                T("the second source starts half a period late", "第二个波源晚了半个周期起振"),
                breaks=("phase-from-path-difference", "fringe-amplitude", "energy-in-space")),
        control(AMPLITUDE_TOO_HIGH, ("fringe-amplitude",)),
        Control(INCOHERENT_AS_COHERENT,
                T("the \"coherent\" sources jump in phase at random, like incoherent ones",
                  "所谓“相干”的波源其实像非相干波源一样随机跳相"),
                breaks=("bright-fringe-four-times", "energy-in-space")),
        Control(COHERENT_AS_INCOHERENT,
                T("the \"incoherent\" second source keeps a fixed phase",
                  "所谓“非相干”的第二个波源其实保持固定相位"),
                breaks=("incoherent-twice-everywhere",)),
    ],
    metrics=[
        Metric("wave_number", T("wave number k = 2π/λ", "波数 k = 2π/λ")),
        Metric(
            "kd",
            T("k·d (phase across the source separation)", "k·d（波源间距对应的相位）"),
            "rad",
        ),
        Metric(
            "bright_over_one_source",
            T("intensity at the central fringe / one source's", "中央亮纹强度 / 单个波源的强度"),
            "×",
        ),
        Metric(
            "ring_average_over_two_sources",
            T("intensity averaged over all directions / (I₁ + I₂)", "各方向平均强度 / (I₁ + I₂)"),
            "×",
        ),
        Metric("j0_kd", T("J₀(kd)", "J₀(kd)")),
    ],
)
def two_sources(wavelength: float, separation: float, seed: int) -> Result:
    k = wave_number(wavelength)
    times = uniform_period(SAMPLES_PER_PERIOD)
    screen = np.linspace(-SCREEN_HALF_WIDTH, SCREEN_HALF_WIDTH, SCREEN_POINTS)
    r1 = np.hypot(screen + separation / 2.0, SCREEN_DISTANCE)
    r2 = np.hypot(screen - separation / 2.0, SCREEN_DISTANCE)
    path_difference = r2 - r1
    expected_phase = TWO_PI * path_difference / wavelength

    rng = np.random.default_rng(seed)
    random_phases = rng.uniform(0.0, TWO_PI, PHASE_JUMPS)
    coherent_offset = (random_phases[:, None] if control_active(INCOHERENT_AS_COHERENT)
                       else np.full((1, 1), second_source_offset()))
    incoherent_offset = (np.zeros((1, 1)) if control_active(COHERENT_AS_INCOHERENT)
                         else random_phases[:, None])

    first = travelling_wave(r1, times, k)  # [point, time]
    second = travelling_wave(r2, times, k, second_source_offset())
    one_source = intensity(first)
    measured_phase = phase_at(second, times) - phase_at(first, times)
    phase_errors = [angle_error(m, e) for m, e in zip(measured_phase, expected_phase,
                                                       strict=True)]
    # [phase jump, point, time]: each jump holds for one sampled period.
    coherent_waves = first[None] + travelling_wave(r2[None, :], times, k, coherent_offset)
    coherent = intensity(coherent_waves).mean(axis=0)
    amplitude_of_sum = np.sqrt(2.0 * coherent)
    closed_form = np.array([equal_amplitude_resultant(AMPLITUDE, p) for p in expected_phase])
    incoherent_waves = first[None] + travelling_wave(r2[None, :], times, k, incoherent_offset)
    incoherent = intensity(incoherent_waves).mean(axis=0)
    incoherent_ratio = incoherent / one_source
    incoherent_tolerance = 2.0 * INCOHERENT_SIGMAS / math.sqrt(2.0 * PHASE_JUMPS)
    middle = SCREEN_POINTS // 2
    bright_ratio = float(coherent[middle] / one_source[middle])

    # Far field: in direction θ the paths differ by d·cos θ (first source on the left).
    angles = np.arange(DIRECTIONS) * (TWO_PI / DIRECTIONS)
    left = separation / 2.0 * np.cos(angles)
    ring_offset = (random_phases[:RING_PHASE_JUMPS, None]
                   if control_active(INCOHERENT_AS_COHERENT) else np.zeros((1, 1)))
    ring_first = travelling_wave(left, times, k)
    ring_sum = ring_first[None] + travelling_wave(-left[None, :], times, k,
                                                  ring_offset + second_source_offset())
    ring_ratio = float(intensity(ring_sum).mean() / intensity(ring_first).mean()) / 2.0
    kd = TWO_PI / wavelength * separation

    rounding = 1e-9
    worst_phase = max(phase_errors)
    checks = [
        Check(id="phase-from-path-difference",
              name=T("At every screen point the second wave lags by φ = 2πΔd/λ = k·Δd",
                     "屏上每一点，第二列波都落后 φ = 2πΔd/λ = k·Δd"),
              passed=bool(worst_phase <= 1e-7),
              measured=f"max |Δφ| = {worst_phase:.2e} rad", expected="≤ 1e-07 rad"),
        amplitude_check("fringe-amplitude",
                        T("At every point the amplitude of the sum is 2A|cos(φ/2)| with "
                          "φ = 2πΔd/λ (largest error)",
                          "每一点上合成波的振幅都是 2A|cos(φ/2)|，其中 φ = 2πΔd/λ（最大误差）"),
                        float(np.max(np.abs(amplitude_of_sum - closed_form))), 0.0, rounding),
        amplitude_check("bright-fringe-four-times",
                        T("Coherent sources: where the paths are equal, the intensity is 4× one "
                          "source's",
                          "相干波源：两条路程相等处，强度是单个波源的 4 倍"),
                        bright_ratio, 4.0, rounding),
        Check(id="incoherent-twice-everywhere",
              name=T("Incoherent sources (random phase jumps): the intensity is 2× one source's "
                     f"at every point, within {INCOHERENT_SIGMAS:g} standard deviations of "
                     f"averaging {PHASE_JUMPS} jumps",
                     f"非相干波源（相位随机跳变）：每一点的强度都是单个波源的 2 倍，误差在对 "
                     f"{PHASE_JUMPS} 次跳变取平均的 {INCOHERENT_SIGMAS:g} 个标准差以内"),
              passed=bool(np.max(np.abs(incoherent_ratio - 2.0)) <= incoherent_tolerance),
              measured=f"{float(incoherent_ratio.min()):.3f} … {float(incoherent_ratio.max()):.3f}",
              expected=f"2 ± {incoherent_tolerance:.3f}"),
        amplitude_check("energy-in-space",
                        T("Averaged over all directions far away, the intensity is "
                          "(I₁ + I₂)·(1 + J₀(kd)): energy moves between bright and dark "
                          "directions, up to a term that fades as the sources move apart",
                          "在远处对所有方向取平均，强度为 (I₁ + I₂)·(1 + J₀(kd))：能量在亮、暗方向"
                          "之间重新分配，只多出一项随波源间距增大而消失的 J₀(kd)"),
                        ring_ratio, 1.0 + float(j0(kd)), rounding),
    ]
    figure = LineChart(
        title=T("Intensity along the screen, in units of one source's",
                "屏上强度（以单个波源为单位）"),
        x_label=T("position on the screen x", "屏上位置 x"),
        y_label=T("intensity / one source's", "强度 / 单个波源的强度"),
        series=[
            Series(T("coherent (measured)", "相干（测量值）"), screen.tolist(),
                   (coherent / one_source).tolist()),
            Series(T("4cos²(φ/2), φ = 2πΔd/λ", "4cos²(φ/2)，φ = 2πΔd/λ"), screen.tolist(),
                   (closed_form**2).tolist()),
            Series(T("incoherent (measured)", "非相干（测量值）"), screen.tolist(),
                   incoherent_ratio.tolist()),
        ],
    )
    return Result(
        checks=checks,
        figures=[figure],
        metrics={"wave_number": k, "kd": kd, "bright_over_one_source": bright_ratio,
                 "ring_average_over_two_sources": ring_ratio, "j0_kd": float(j0(kd))},
        notes=[T(f"Sources at x = ±d/2, screen at distance {SCREEN_DISTANCE:g}; both waves are "
                 "taken to arrive with the same amplitude A (the fall-off with distance is "
                 f"left out). Incoherent: the second source's phase jumps to a random value "
                 f"{PHASE_JUMPS} times, once per sampled period.",
                 f"波源位于 x = ±d/2，观察屏距离为 {SCREEN_DISTANCE:g}；假定两列波到达时振幅都是 A"
                 f"（不计随距离的衰减）。非相干情形：第二个波源的相位随机跳变 {PHASE_JUMPS} 次，"
                 "每个采样周期跳一次。")],
    )
