"""Test signals and small display helpers shared by the fft topic's experiments."""

from __future__ import annotations

import math

import numpy as np

MAX_PLOTTED_POINTS = 1024


def make_signal(n: int, kind: str, seed: int) -> np.ndarray:
    """A test signal: two tones plus a little noise (real), or complex Gaussian noise."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.standard_normal(n) + 1j * rng.standard_normal(n)
    j = np.arange(n)
    low, high = max(1, n // 16), max(1, n // 5)  # cycles per n samples
    tones = np.cos(2 * np.pi * low * j / n) + 0.5 * np.sin(2 * np.pi * high * j / n)
    return tones + 0.1 * rng.standard_normal(n)


def thin(values: np.ndarray) -> list[float]:
    """At most MAX_PLOTTED_POINTS values, evenly spaced, for a chart."""
    step = max(1, math.ceil(values.shape[0] / MAX_PLOTTED_POINTS))
    return [float(v) for v in values[::step]]
