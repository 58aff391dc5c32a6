"""Chart axes: "nice" tick steps (1-2-5, or decades on a log axis), the tick labels
(with the real minus sign) and the mapping from data to pixels (:class:`Axis`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MINUS = "\u2212"  # the real minus sign, in every tick label


def tick_labels(values: Sequence[float], step: float | None = None) -> list[str]:
    """Labels for the ticks of one axis, all in one style.

    One notation for the whole axis: powers of ten (``1e5``, ``2e5``, ``1e−4``)
    when any tick is at least 1e5 or below 1e-3 in size, plain decimals
    otherwise; on a linear axis (``step`` given) every label has the decimals the
    step needs (0.5, 1.0, 1.5), on a log axis each its own (0.01, 0.1, 1, 10); and
    the minus sign is U+2212 everywhere.
    """
    sizes = [abs(v) for v in values if v != 0]
    scientific = bool(sizes) and (max(sizes) >= 1e5 or min(sizes) < 1e-3)
    decimals = None
    if step is not None and step > 0 and not scientific:
        decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    labels = []
    for value in values:
        if value == 0:
            text = "0"
        elif scientific:
            exponent = math.floor(math.log10(abs(value)) + 1e-9)
            mantissa = float(f"{value / 10.0**exponent:.3g}")
            head = "1" if mantissa == 1 else "-1" if mantissa == -1 else f"{mantissa:g}"
            text = f"{head}e{exponent}"
        elif decimals is not None:
            text = f"{value:.{decimals}f}"
        else:
            text = f"{value:.6g}"
        labels.append(text.replace("-", MINUS))
    return labels


def nice_step(span: float, target_ticks: int = 5) -> float:
    """A step of 1, 2 or 5 times a power of ten giving about ``target_ticks`` ticks."""
    raw = span / max(1, target_ticks)
    power = 10.0 ** math.floor(math.log10(raw))
    for multiple in (1.0, 2.0, 5.0, 10.0):
        if raw <= multiple * power * 1.0000001:
            return multiple * power
    return 10.0 * power


@dataclass(frozen=True)
class Axis:
    """Maps data values to pixels along one axis; knows its ticks."""

    low: float  # in data units (for a log axis: the value, not its logarithm)
    high: float
    pixel_low: float
    pixel_high: float
    log: bool
    ticks: tuple[tuple[float, str], ...]

    def to_pixel(self, value: float) -> float:
        if self.log:
            lo, hi, v = math.log10(self.low), math.log10(self.high), math.log10(value)
        else:
            lo, hi, v = self.low, self.high, value
        return self.pixel_low + (v - lo) / (hi - lo) * (self.pixel_high - self.pixel_low)


def linear_axis(
    values: Sequence[float],
    pixel_low: float,
    pixel_high: float,
    tight: bool = False,
    target_ticks: int = 5,
) -> Axis:
    """A linear axis; ``tight`` keeps the data's own ends instead of rounding out to a tick."""
    low, high = min(values), max(values)
    if low == high:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    step = nice_step(high - low, target_ticks)
    first = math.ceil(low / step - 1e-9) if tight else math.floor(low / step + 1e-9)
    last = math.floor(high / step + 1e-9) if tight else math.ceil(high / step - 1e-9)
    if not tight:
        low, high = first * step, last * step
    values = [i * step for i in range(first, last + 1)]
    ticks = tuple(zip(values, tick_labels(values, step), strict=True))
    return Axis(low, high, pixel_low, pixel_high, False, ticks)


def log_axis(values: Sequence[float], pixel_low: float, pixel_high: float) -> Axis:
    """A log axis that ends at the data (2048, not 10⁴), with ticks at decades (and 2x, 5x
    when the data span two decades or less) inside it."""
    low, high = min(values), max(values)
    if high <= low * 1.0000001:
        low, high = low / 2, high * 2
    low_exp = math.floor(math.log10(low) + 1e-9)
    high_exp = math.ceil(math.log10(high) - 1e-9)
    decades = high_exp - low_exp
    values: list[float] = []
    if decades <= 2:  # few decades: also tick 2x and 5x
        for exponent in range(low_exp, high_exp + 1):
            for multiple in (1, 2, 5):
                value = multiple * 10.0**exponent
                if low * 0.9999999 <= value <= high * 1.0000001:
                    values.append(value)
    else:
        stride = max(1, math.ceil(decades / 8))
        for exponent in range(low_exp, high_exp + 1, stride):
            if low * 0.9999999 <= 10.0**exponent <= high * 1.0000001:
                values.append(10.0**exponent)
    ticks = zip(values, tick_labels(values), strict=True)
    return Axis(low, high, pixel_low, pixel_high, True, tuple(ticks))
