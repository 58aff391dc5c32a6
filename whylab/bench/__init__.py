"""A small benchmarking harness: warm-up, autorange, interleaved rounds, medians and quartiles.

Every benchmark in ``benchmarks/`` and every timed experiment in ``whylab/topics`` asks the
same questions -- how many calls make a timing long enough to trust, how to keep a slow
spell of a shared machine from favouring one candidate, how to summarise the spread -- so
the answers live here once (see "Benchmark hygiene" in DESIGN.md):

* :mod:`whylab.bench.timing` times one callable: a warm-up, ``autorange`` (grow the loop
  count until a batch of calls lasts at least a budget) and best-of repeats;
* :mod:`whylab.bench.rounds` times several candidates in interleaved rounds, rotating who
  goes first and pausing between switches so BLAS worker threads can go idle;
* :mod:`whylab.bench.summary` turns the samples into medians, quartiles and per-round
  ratios against a reference, and prints them as a plain-text table;
* :mod:`whylab.bench.adaptive` keeps sampling until IQR / median is below a threshold
  (torch.utils.benchmark's ``adaptive_autorange`` rule);
* :mod:`whylab.bench.equivalence` refuses to time candidates whose results differ.

The clock and the sleep function are parameters everywhere, so the tests can drive the
harness with a fake clock and never depend on real wall-clock speed.
"""

from whylab.bench.adaptive import AdaptiveRun, adaptive_autorange, meets_threshold
from whylab.bench.equivalence import (
    ResultsDiffer,
    check_equivalent,
    largest_difference,
    results_match,
)
from whylab.bench.rounds import (
    Comparison,
    back_to_back,
    compare,
    interleaved_rounds,
    round_order,
)
from whylab.bench.summary import (
    Quartiles,
    format_table,
    format_time,
    per_round_ratios,
    quartiles,
    ratio_quartiles,
    relative_iqr,
)
from whylab.bench.timing import (
    autorange,
    best_of,
    clock_deltas,
    fastest_per_call,
    time_calls,
    warm_up,
)

__all__ = [
    "AdaptiveRun",
    "Comparison",
    "Quartiles",
    "ResultsDiffer",
    "adaptive_autorange",
    "autorange",
    "back_to_back",
    "best_of",
    "check_equivalent",
    "clock_deltas",
    "compare",
    "fastest_per_call",
    "format_table",
    "format_time",
    "interleaved_rounds",
    "largest_difference",
    "meets_threshold",
    "per_round_ratios",
    "quartiles",
    "ratio_quartiles",
    "relative_iqr",
    "results_match",
    "round_order",
    "time_calls",
    "warm_up",
]
