"""Comparing several candidates in interleaved rounds.

Timing candidate A for a minute and then candidate B for a minute is unfair on a shared
machine: a slow spell (another tenant, a throttled core) lands on one of them only. So
each *round* times every candidate once, and the order rotates from round to round so
that no candidate always runs right after another. Between two candidates we can pause:
OpenBLAS worker threads keep spinning for about 0.1 s after a call and would otherwise
steal a core from whoever runs next.

The result of a comparison is one sample per candidate per round; ratios are taken
round by round (A's round-3 time over B's round-3 time), which cancels slow spells that
last longer than a round. ``back_to_back`` takes the same samples the unfair way, all of
one candidate's before the next one's, so the two can be put side by side.

``compare(..., check_equal=True)`` first checks that every candidate returns the same
result as the first (see :mod:`whylab.bench.equivalence`) and refuses to time them if not.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from whylab.bench.equivalence import Equal, check_equivalent
from whylab.bench.summary import Quartiles, per_round_ratios, quartiles
from whylab.bench.timing import DEFAULT_MAX_CALLS, Clock, autorange, best_of, warm_up


def round_order(names: Sequence[str], round_index: int, rotate: bool = True) -> list[str]:
    """The order in which the candidates run in round ``round_index``.

    With ``rotate`` the list is rotated left by ``round_index`` (round 0: a, b, c; round 1:
    b, c, a; ...), so every candidate goes first equally often; without it the order is fixed.
    """
    names = list(names)
    if not rotate or not names:
        return names
    shift = round_index % len(names)
    return names[shift:] + names[:shift]


def interleaved_rounds(
    candidates: Mapping[str, Callable[[], object]],
    rounds: int,
    calls: Mapping[str, int] | int,
    *,
    repeats: int = 1,
    pause_s: float = 0.0,
    rotate: bool = True,
    on_turn: Callable[[str], object] | None = None,
    clock: Clock = time.perf_counter,
    sleep: Callable[[float], object] = time.sleep,
) -> dict[str, list[float]]:
    """Seconds per call of every candidate, one sample per round.

    Args:
        candidates: name -> function of no arguments, in the order of round 0.
        rounds: how many rounds to run.
        calls: batch size, either one for all candidates or one per name.
        repeats: each sample is the fastest of this many batches.
        pause_s: sleep this long before each candidate's turn (0: no pause).
        rotate: rotate the order every round (see ``round_order``).
        on_turn: called with the candidate's name just before each of its turns
            (after the pause); an experiment uses it to switch a disturbance on or off.
        clock, sleep: the time source and the pause; tests pass fakes.
    """
    if rounds < 1:
        raise ValueError(f"interleaved_rounds: rounds must be >= 1, got {rounds}")
    if pause_s < 0:
        raise ValueError(f"interleaved_rounds: pause_s must be >= 0, got {pause_s}")
    batch = _batch_sizes(candidates, calls)
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for round_index in range(rounds):
        for name in round_order(list(candidates), round_index, rotate):
            if pause_s > 0:
                sleep(pause_s)
            if on_turn is not None:
                on_turn(name)
            samples[name].append(best_of(candidates[name], batch[name], repeats, clock))
    return samples


def back_to_back(
    candidates: Mapping[str, Callable[[], object]],
    samples: int,
    calls: Mapping[str, int] | int,
    *,
    repeats: int = 1,
    on_turn: Callable[[str], object] | None = None,
    clock: Clock = time.perf_counter,
) -> dict[str, list[float]]:
    """Seconds per call of every candidate: all ``samples`` of one, then all of the next.

    This is the order to avoid on a shared machine -- whatever happens during one
    candidate's block lands on that candidate alone -- and exists so the difference
    can be shown. ``on_turn(name)`` is called once, before each candidate's block.
    """
    if samples < 1:
        raise ValueError(f"back_to_back: samples must be >= 1, got {samples}")
    batch = _batch_sizes(candidates, calls)
    times: dict[str, list[float]] = {}
    for name, func in candidates.items():
        if on_turn is not None:
            on_turn(name)
        times[name] = [best_of(func, batch[name], repeats, clock) for _ in range(samples)]
    return times


def _batch_sizes(
    candidates: Mapping[str, Callable[[], object]], calls: Mapping[str, int] | int
) -> Mapping[str, int]:
    return calls if isinstance(calls, Mapping) else {name: calls for name in candidates}


@dataclass
class Comparison:
    """The samples of one comparison: seconds per call, per candidate, one per round."""

    times: dict[str, list[float]]
    calls: dict[str, int]

    def median(self, name: str) -> float:
        """Median seconds per call of candidate ``name``."""
        return quartiles(self.times[name]).median

    def quartiles(self, name: str) -> Quartiles:
        """First quartile, median and third quartile of ``name``'s seconds per call."""
        return quartiles(self.times[name])

    def ratios(self, name: str, reference: str) -> list[float]:
        """Per-round ratios ``name`` / ``reference``."""
        return per_round_ratios(self.times[name], self.times[reference])

    def ratio_quartiles(self, name: str, reference: str) -> Quartiles:
        """Quartiles of the per-round ratios ``name`` / ``reference``."""
        return quartiles(self.ratios(name, reference))


def compare(
    candidates: Mapping[str, Callable[[], object]],
    rounds: int,
    budget_s: float,
    *,
    warmup: int = 1,
    repeats: int = 1,
    pause_s: float = 0.0,
    rotate: bool = True,
    max_calls: int = DEFAULT_MAX_CALLS,
    check_equal: bool | Equal = False,
    rtol: float = 1e-7,
    atol: float = 0.0,
    clock: Clock = time.perf_counter,
    sleep: Callable[[float], object] = time.sleep,
) -> Comparison:
    """Warm up every candidate, autorange each to ``budget_s``, then run interleaved rounds.

    Each candidate gets its own batch size, so a 1 µs op and a 10 ms op are both timed
    over batches of about ``budget_s``.

    With ``check_equal`` (True, or a function ``equal(result, reference) -> bool``) every
    candidate is first called once and its result compared with the first candidate's,
    within ``rtol``/``atol``; a mismatch raises
    :class:`~whylab.bench.equivalence.ResultsDiffer` before anything is timed. That call
    counts as the first of the ``warmup`` calls.
    """
    warmup_left = warmup
    if check_equal:
        equal = check_equal if callable(check_equal) else None
        check_equivalent(candidates, rtol=rtol, atol=atol, equal=equal)
        warmup_left = max(warmup - 1, 0)
    calls = {}
    for name, func in candidates.items():
        warm_up(func, warmup_left)
        calls[name], _ = autorange(func, budget_s, max_calls=max_calls, clock=clock)
    times = interleaved_rounds(
        candidates, rounds, calls, repeats=repeats, pause_s=pause_s, rotate=rotate,
        clock=clock, sleep=sleep,
    )
    return Comparison(times=times, calls=calls)
