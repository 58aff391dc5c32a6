"""Summaries of timing samples: quartiles, per-round ratios and a plain-text table.

Timings on a shared machine are skewed (interruptions only add time), so we report the
median with the first and third quartiles instead of a mean and standard deviation.
Quartiles use the "inclusive" method (linear interpolation between order statistics,
the same as ``numpy.percentile``'s default), so the quartiles of a sample lie within its
range.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import NamedTuple


class Quartiles(NamedTuple):
    """First quartile, median and third quartile of a sample."""

    q1: float
    median: float
    q3: float

    @property
    def iqr(self) -> float:
        """The interquartile range ``q3 - q1``: the spread of the middle half of the sample."""
        return self.q3 - self.q1

    @property
    def relative_iqr(self) -> float:
        """``iqr / median``: the noise figure torch.utils.benchmark warns about above 0.1.

        A median of 0 (a clock too coarse to see the work) gives infinity.
        """
        return self.iqr / self.median if self.median > 0 else math.inf

    def format(self, spec: str = ".2f") -> str:
        """``median [q1, q3]`` with each number formatted by ``spec``."""
        return f"{self.median:{spec}} [{self.q1:{spec}}, {self.q3:{spec}}]"


def quartiles(values: Sequence[float]) -> Quartiles:
    """Quartiles of ``values``; a single value is its own median and quartiles."""
    values = list(values)
    if not values:
        raise ValueError("quartiles: need at least one value, got none")
    if len(values) == 1:
        return Quartiles(values[0], values[0], values[0])
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Quartiles(q1, median, q3)


def relative_iqr(values: Sequence[float]) -> float:
    """IQR / median of ``values``: the noise figure of a set of timing samples."""
    return quartiles(values).relative_iqr


def per_round_ratios(times: Sequence[float], reference: Sequence[float]) -> list[float]:
    """``times[i] / reference[i]`` for every round ``i`` (both lists must have one per round)."""
    if len(times) != len(reference):
        raise ValueError(
            f"per_round_ratios: {len(times)} times but {len(reference)} reference times"
        )
    if any(r <= 0 for r in reference):
        raise ValueError("per_round_ratios: reference times must be > 0")
    return [t / r for t, r in zip(times, reference, strict=True)]


def ratio_quartiles(times: Sequence[float], reference: Sequence[float]) -> Quartiles:
    """Quartiles of the per-round ratios ``times / reference``."""
    return quartiles(per_round_ratios(times, reference))


def format_time(seconds: float) -> str:
    """A duration with a unit that keeps 3-4 significant digits: ns, us, ms or s."""
    magnitude = abs(seconds)
    if magnitude < 1e-6:
        return f"{seconds * 1e9:.1f} ns"
    if magnitude < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if magnitude < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned.

    Every cell is turned into text with ``str``; each column is as wide as its widest
    cell. A rule of dashes separates the header from the rows.
    """
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    for number, row in enumerate(cells[1:], start=1):
        if len(row) != len(headers):
            raise ValueError(
                f"format_table: row {number} has {len(row)} cells, header has {len(headers)}"
            )
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    header_line = line(cells[0])
    return "\n".join([header_line, "-" * len(header_line), *(line(row) for row in cells[1:])])
