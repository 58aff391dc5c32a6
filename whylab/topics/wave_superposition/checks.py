"""The comparisons behind the wave-superposition checks, small enough to feed wrong inputs."""

from __future__ import annotations

import math

from whylab.explorer.experiment import Check, Text

TWO_PI = 2.0 * math.pi


def amplitude_check(check_id: str, name: Text, measured: float, expected: float,
                    tolerance: float) -> Check:
    """Pass when ``measured`` is within ``tolerance`` of ``expected``."""
    error = abs(measured - expected)
    return Check(
        id=check_id,
        name=name,
        passed=bool(error <= tolerance),
        measured=f"{measured:.10g} (|Δ| = {error:.2e})",
        expected=f"{expected:.10g} ± {tolerance:.1e}",
    )


def peak_resolution(omega: float, gap: float) -> float:
    """cos(w g / 2): the largest sample of a sinusoid is at least this fraction of its amplitude.

    Within the window |y| reaches R several times; every such peak is at most
    g/2 from a sample, where |y| >= R cos(w g / 2).
    """
    return math.cos(min(math.pi / 2.0, omega * gap / 2.0))


def peak_check(check_id: str, name: Text, peak: float, amplitude: float, resolution: float,
               tolerance: float) -> Check:
    """The largest |sample| of R sin(wt + theta) lies in [R·resolution, R].

    ``measured`` and ``expected`` hold numbers and symbols only (they show on
    both language pages); the experiment's notes say what R and g are.
    """
    lower = amplitude * resolution
    passed = lower - tolerance <= peak <= amplitude + tolerance
    return Check(
        id=check_id,
        name=name,
        passed=bool(passed),
        measured=f"{peak:.10g}",
        expected=f"∈ [R·cos(ωg/2), R] = [{lower:.10g}, {amplitude:.10g}]",
    )


def angle_check(check_id: str, name: Text, measured: float, expected: float,
                tolerance: float) -> Check:
    """Pass when two angles agree modulo 2 pi."""
    error = angle_error(measured, expected)
    return Check(
        id=check_id,
        name=name,
        passed=bool(error <= tolerance),
        measured=f"{measured:.10g} rad (|Δ| = {error:.2e})",
        expected=f"{expected:.10g} rad ± {tolerance:.1e}",
    )


def angle_error(measured: float, expected: float) -> float:
    """|measured − expected| taken modulo 2π, in [0, π]."""
    return abs((measured - expected + math.pi) % TWO_PI - math.pi)
