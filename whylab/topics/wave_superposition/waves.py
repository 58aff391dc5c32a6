"""The waves the wave-superposition experiments add, their closed forms, and the measurements.

The closed forms are the page's claims; the measurements (largest sample, a
least-squares sinusoid fit and its residual, the RMS value) never use them.
The negative controls are switched in here, where the real computation
happens: both waves 10% too strong, the second wave detuned or shifted by
only half the phase, a closed form that forgets the half angle, a phase formula
borrowed from the equal-amplitude case, a cross term without its factor 2.
"""

from __future__ import annotations

import math

import numpy as np

from whylab.explorer.experiment import Control, T, control_active

TWO_PI = 2.0 * math.pi

AMPLITUDE_TOO_HIGH = "amplitude-10-percent-high"
SECOND_WAVE_DETUNED = "second-wave-detuned"
PHASE_HALVED = "phase-halved"
HALF_ANGLE_FORGOTTEN = "half-angle-forgotten"
EQUAL_AMPLITUDE_PHASE = "equal-amplitude-phase-formula"
CROSS_TERM_HALVED = "cross-term-halved"

LABELS = {
    AMPLITUDE_TOO_HIGH: T("both waves are computed with an amplitude 10% too high",
                          "两列波的振幅都多算了 10%"),
    SECOND_WAVE_DETUNED: T("the second wave's frequency is 5% off the first's",
                           "第二列波的频率与第一列差了 5%"),
    PHASE_HALVED: T("the second wave is shifted by φ/2 instead of φ",
                    "第二列波只移动了 φ/2，而不是 φ"),
    HALF_ANGLE_FORGOTTEN: T("the closed form forgets the half angle: 2A|cos φ|",
                            "公式漏掉了半角：写成了 2A|cos φ|"),
    EQUAL_AMPLITUDE_PHASE: T("the phase of the sum is taken to be φ/2, as for equal amplitudes",
                             "把合成波的相位当成 φ/2，照搬等幅情形"),
    CROSS_TERM_HALVED: T("the cross term lacks its factor 2: √(A1² + A2² + A1·A2·cos φ)",
                         "交叉项漏掉了因子 2：写成了 √(A1² + A2² + A1·A2·cos φ)"),
}

DETUNING = 1.05
TOO_HIGH = 1.1


def control(name: str, breaks: tuple[str, ...], **params) -> Control:
    """The control ``name`` with its label, declared to break ``breaks``."""
    return Control(name, LABELS[name], breaks=breaks, params=params)


# ---------------------------------------------------------------- closed forms (the claims)


def equal_amplitude_resultant(amplitude: float, phase: float) -> float:
    """Amplitude of A sin(wt) + A sin(wt + phase): 2A|cos(phase/2)|."""
    if control_active(HALF_ANGLE_FORGOTTEN):
        return 2.0 * amplitude * abs(math.cos(phase))
    return 2.0 * amplitude * abs(math.cos(phase / 2.0))


def resultant_amplitude(a1: float, a2: float, phase: float) -> float:
    """Amplitude of A1 sin(wt) + A2 sin(wt + phase): sqrt(A1^2 + A2^2 + 2 A1 A2 cos(phase))."""
    cross = 1.0 if control_active(CROSS_TERM_HALVED) else 2.0
    # max(0, ...): at a1 == a2, phase == pi rounding could make the sum slightly negative.
    return math.sqrt(max(0.0, a1 * a1 + a2 * a2 + cross * a1 * a2 * math.cos(phase)))


def resultant_phase(a1: float, a2: float, phase: float) -> float:
    """Phase theta of the sum R sin(wt + theta), in (-pi, pi]."""
    if control_active(EQUAL_AMPLITUDE_PHASE):
        return phase / 2.0
    return math.atan2(a2 * math.sin(phase), a1 + a2 * math.cos(phase))


def product_form(times: np.ndarray, amplitude: float, omega1: float, omega2: float,
                 phase: float) -> np.ndarray:
    """Sum to product: A sin(w1 t) + A sin(w2 t + phi) = 2A cos((dw t + phi)/2) sin(w̄ t + phi/2).

    With w1 = w2 the cosine is the constant cos(phi/2); otherwise it is the
    slow envelope of beats, |cos| repeating every 1/|f2 - f1| seconds.
    """
    half_difference = ((omega2 - omega1) * times + phase) / 2.0
    mean = (omega1 + omega2) / 2.0
    return 2.0 * amplitude * np.cos(half_difference) * np.sin(mean * times + phase / 2.0)


# ---------------------------------------------------------------- the computation


def superpose(times: np.ndarray, omega: float, a1: float, a2: float, phase: float,
              omega2: float | None = None):
    """The two waves A1 sin(w t) and A2 sin(w2 t + phase), sampled at ``times``, and their sum.

    ``times`` may carry leading axes (a grid of phases, say) that broadcast
    against ``phase``. ``omega2`` defaults to ``omega``.
    """
    omega2 = omega if omega2 is None else omega2
    if control_active(AMPLITUDE_TOO_HIGH):
        a1, a2 = TOO_HIGH * a1, TOO_HIGH * a2
    if control_active(SECOND_WAVE_DETUNED):
        omega2 = DETUNING * omega2
    if control_active(PHASE_HALVED):
        phase = phase / 2.0
    first = a1 * np.sin(omega * times)
    second = a2 * np.sin(omega2 * times + phase)
    return first, second, first + second


# ---------------------------------------------------------------- measurements


def fit_sinusoid(times: np.ndarray, values: np.ndarray, omega: float):
    """Least-squares fit ``values ~ R sin(omega t + theta)``; returns (R, theta, rms residual).

    Writes R sin(wt + theta) = p sin(wt) + q cos(wt) with p = R cos(theta),
    q = R sin(theta), which is linear in p and q.
    """
    basis = np.column_stack([np.sin(omega * times), np.cos(omega * times)])
    (p, q), *_ = np.linalg.lstsq(basis, values, rcond=None)
    residual = values - basis @ np.array([p, q])
    return math.hypot(p, q), math.atan2(q, p), float(np.sqrt(np.mean(residual**2)))


def rms_amplitude(values: np.ndarray) -> np.ndarray | float:
    """sqrt(2 * mean(y^2)) along the last axis: a sinusoid's amplitude from whole periods.

    Exact (up to rounding) for three or more uniform samples per period,
    because the sampled cos(2wt) terms then sum to zero.
    """
    result = np.sqrt(2.0 * np.mean(np.square(values), axis=-1))
    return float(result) if np.ndim(result) == 0 else result


def largest_gap(times: np.ndarray, window: float) -> float:
    """Largest distance from any point of [0, window] to its nearest sample, doubled."""
    edges = [2.0 * times[0], 2.0 * (window - times[-1])]
    return float(max(np.max(np.diff(times), initial=0.0), *edges))


def uniform_period(samples: int) -> np.ndarray:
    """``samples`` uniform times covering one period of a 1 Hz wave, end excluded."""
    return np.arange(samples) / samples
