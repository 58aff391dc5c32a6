"""Sampling until the noise is small: an adaptive stop on IQR / median.

A fixed number of samples is either too many (a quiet machine, a steady function) or
too few (a noisy one). ``adaptive_autorange`` keeps taking blocks of calls until the
samples' interquartile range is a small enough fraction of their median, or a time
limit is reached -- the rule of ``torch.utils.benchmark.Timer.adaptive_autorange``
(torch/utils/benchmark/utils/timer.py: at least four blocks, at least ``min_run_time``
seconds in all, then stop once ``Measurement.meets_confidence(threshold)``, i.e.
``iqr / median < threshold``; give up after ``max_run_time``). Torch picks its block
size by growing it tenfold until the timer's overhead is negligible; we reuse
:func:`whylab.bench.timing.autorange`, which doubles it until one block lasts
``block_s``.

The result says *why* sampling stopped, so a caller can tell a converged estimate from
one that ran out of time and is still noisy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from whylab.bench.summary import Quartiles, quartiles
from whylab.bench.timing import DEFAULT_MAX_CALLS, Clock, autorange, time_calls

MIN_BLOCKS = 4  # torch's stop hook asks for len(times) > 3 before judging the noise


@dataclass(frozen=True)
class AdaptiveRun:
    """The samples of one adaptive run: seconds per call, one per block of ``calls`` calls."""

    calls: int
    samples: list[float]
    stopped: Literal["converged", "max_run_time"]
    threshold: float

    @property
    def quartiles(self) -> Quartiles:
        return quartiles(self.samples)

    @property
    def noise(self) -> float:
        """IQR / median of the samples."""
        return self.quartiles.relative_iqr


def meets_threshold(samples: list[float], threshold: float, min_blocks: int = MIN_BLOCKS) -> bool:
    """Enough to stop: at least ``min_blocks`` samples and IQR/median below ``threshold``."""
    return len(samples) >= min_blocks and quartiles(samples).relative_iqr < threshold


def adaptive_autorange(
    func: Callable[[], object],
    threshold: float = 0.1,
    *,
    block_s: float = 0.001,
    min_run_time: float = 0.01,
    max_run_time: float = 10.0,
    min_blocks: int = MIN_BLOCKS,
    max_calls: int = DEFAULT_MAX_CALLS,
    clock: Clock = time.perf_counter,
) -> AdaptiveRun:
    """Time blocks of calls until IQR/median < ``threshold`` or ``max_run_time`` is spent.

    The block size comes from ``autorange(func, block_s)``; the blocks it times while
    growing count as warm-up, not as samples. Sampling stops after a block when
    ``min_blocks`` blocks have been timed, they add up to at least ``min_run_time``
    seconds, and their noise figure is below ``threshold`` (``stopped="converged"``);
    or when the blocks add up to more than ``max_run_time`` (``stopped="max_run_time"``).
    """
    if not (threshold > 0 and math.isfinite(threshold)):
        raise ValueError(f"adaptive_autorange: threshold must be > 0 and finite, got {threshold}")
    if block_s <= 0:
        raise ValueError(f"adaptive_autorange: block_s must be > 0, got {block_s}")
    if min_run_time < 0:
        raise ValueError(f"adaptive_autorange: min_run_time must be >= 0, got {min_run_time}")
    if max_run_time < min_run_time:
        raise ValueError(
            f"adaptive_autorange: max_run_time must be >= min_run_time ({min_run_time}), "
            f"got {max_run_time}"
        )
    if min_blocks < 2:
        raise ValueError(f"adaptive_autorange: min_blocks must be >= 2, got {min_blocks}")
    calls, _ = autorange(func, block_s, max_calls=max_calls, clock=clock)
    samples: list[float] = []
    total = 0.0
    while True:
        per_call = time_calls(func, calls, clock)
        samples.append(per_call)
        total += per_call * calls
        if total >= min_run_time and meets_threshold(samples, threshold, min_blocks):
            return AdaptiveRun(calls, samples, "converged", threshold)
        if total > max_run_time:
            return AdaptiveRun(calls, samples, "max_run_time", threshold)
