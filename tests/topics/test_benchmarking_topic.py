"""The benchmarking topic: its helpers, its parameters, and its checks under negative controls.

The audits run real timings (that is what the experiments are). Their claims are
ratios with generous margins, or bounds that hold exactly on shared readings, so they
do not depend on how fast or how loaded the machine is; the helpers are tested on
fixed inputs.
"""

from __future__ import annotations

import math
import os
import time
import timeit

import numpy as np
import pytest

from whylab.explorer.experiment import ParamError
from whylab.topics.benchmarking import experiments as topic
from whylab.topics.benchmarking import load as load_module
from whylab.topics.benchmarking.equivalence_experiment import fingerprint
from whylab.topics.benchmarking.interleaving_experiment import (
    calls_for,
    median_ratio,
    twice,
)
from whylab.topics.benchmarking.load import BackgroundLoad, can_pin, pinned_cpu
from whylab.topics.benchmarking.samples_experiment import (
    ADAPTIVE,
    nearest_rank_quartiles,
    stop_rule_holds,
)
from whylab.topics.benchmarking.timer_experiment import floor_to_tick, frozen, per_call
from whylab.topics.benchmarking.tools_experiment import TOOLS_TABLE, one_two_five_target
from whylab.topics.benchmarking.warmup_experiment import (
    fresh_function,
    specialised_instructions,
    sum_of_squares,
    sum_of_squares_off_by_one,
)

# These tests run live timing experiments (see tests/conftest.py for the reruns).
pytestmark = pytest.mark.wallclock

BY_NAME = {e.name: e for e in topic.EXPERIMENTS}


def test_every_timing_experiment_is_marked_timing():
    timed = {name for name, e in BY_NAME.items() if e.timing}
    assert timed == set(BY_NAME) - {"standard-tools"}  # the tools run on a fake clock


# ---------------------------------------------------------------- clock helpers


def test_floor_to_tick_is_what_a_coarse_clock_shows():
    assert floor_to_tick(12.5e-6, 10e-6) == pytest.approx(10e-6)
    assert floor_to_tick(9.9e-6, 10e-6) == 0.0
    assert floor_to_tick(20e-6, 10e-6) == pytest.approx(20e-6)


def test_per_call_with_a_tick_sees_only_whole_ticks():
    readings = [(0.5e-6, 1.5e-6), (9.5e-6, 10.5e-6), (0.0, 40e-6)]
    assert per_call(readings, 1, None) == pytest.approx([1e-6, 1e-6, 40e-6])
    # the first block lies inside one tick, the second straddles a tick boundary
    assert per_call(readings, 1, 10e-6) == pytest.approx([0.0, 10e-6, 40e-6])
    assert per_call(readings, 4, 10e-6) == pytest.approx([0.0, 2.5e-6, 10e-6])


def test_frozen_clock_never_advances():
    clock = frozen(time.perf_counter)
    assert clock() == clock()


# ---------------------------------------------------------------- warm-up helpers


def test_the_off_by_one_loop_is_really_wrong_and_the_right_one_right():
    values = np.arange(1.0, 6.0)
    assert sum_of_squares(values) == float(values @ values) == 55.0
    assert sum_of_squares_off_by_one(values) == 30.0


def test_fresh_functions_start_unspecialised_and_specialise_when_run():
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    function = fresh_function()
    assert specialised_instructions(function.__code__) == []
    points = [Point(1.0, 2.0)] * 20
    for _ in range(10):
        function(points)
    assert len(specialised_instructions(function.__code__)) >= 3
    assert specialised_instructions(fresh_function().__code__) == []  # a new one is cold


# ---------------------------------------------------------------- sample helpers


def test_nearest_rank_quartiles_differ_from_interpolated_ones():
    values = [1.0, 2.0, 3.0, 4.0]
    assert nearest_rank_quartiles(values) == (2.0, 3.0, 4.0)
    assert tuple(np.percentile(values, [25, 50, 75])) == (1.75, 2.5, 3.25)


def test_stop_rule_judges_converged_runs():
    calls = 1
    block = ADAPTIVE["min_run_time"]  # each block alone meets min_run_time
    steady = [block] * 4
    assert stop_rule_holds(steady, calls, "converged")
    assert not stop_rule_holds(steady[:3], calls, "converged")  # too few blocks
    assert not stop_rule_holds(steady + [block], calls, "converged")  # could have stopped


def test_stop_rule_judges_runs_that_gave_up():
    calls = 1
    assert ADAPTIVE["max_run_time"] == 0.5
    noisy = [0.1, 0.3, 0.15, 0.3]  # IQR/median never below 10%
    assert stop_rule_holds(noisy[:3], calls, "max_run_time")  # 0.55 s: first past 0.5 s
    assert not stop_rule_holds(noisy[:2], calls, "max_run_time")  # 0.4 s is under the limit
    assert not stop_rule_holds(noisy, calls, "max_run_time")  # should have stopped at 3


# ---------------------------------------------------------------- interleaving helpers


def test_median_ratio_is_taken_round_by_round():
    assert median_ratio([2.0, 6.0, 3.0], [1.0, 2.0, 3.0]) == 2.0


def test_candidate_b_runs_a_exactly_twice():
    calls = []
    b = twice(lambda: calls.append(1) or len(calls))
    assert b() == 2 and calls == [1, 1]


def test_calls_for_sizes_a_block_from_the_fastest_run():
    assert calls_for(lambda: time.sleep(0.0001), 0.01) <= 100  # >= 0.1 ms a call
    assert calls_for(lambda: None, 0.001) > 1000


def process_states(load: BackgroundLoad) -> list[str]:
    """Each child's scheduler state from /proc: R running, T stopped."""
    return [open(f"/proc/{child.pid}/stat").read().split()[2] for child in load._children]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads process states from /proc")
def test_background_load_is_paused_resumed_and_always_reaped():
    with BackgroundLoad(5.0, cpu=min(os.sched_getaffinity(0)) if can_pin() else None,
                        per_cpu=3) as load:
        assert load.alive == 3 and load.running == 0
        load.resume()
        assert load.running == 3
        load.resume(1)  # a lighter load: one child burns, two stay stopped
        assert load.running == 1
        deadline = time.monotonic() + 5  # SIGSTOP lands asynchronously
        while time.monotonic() < deadline and process_states(load)[1:] != ["T", "T"]:
            time.sleep(0.01)
        assert process_states(load)[1:] == ["T", "T"]
        load.set_running(False)
        assert load.running == 0
        with pytest.raises(ValueError, match="count must be 1 to 3, got 4"):
            load.resume(4)
        children = list(load._children)
    assert all(child.poll() is not None for child in children)
    assert load.alive == 0


def test_background_load_is_reaped_when_the_experiment_raises():
    with pytest.raises(RuntimeError, match="boom"), BackgroundLoad(5.0) as load:
        load.resume()
        children = list(load._children)
        raise RuntimeError("boom")
    assert children and all(child.poll() is not None for child in children)


def test_background_load_ends_itself_at_its_deadline():
    with BackgroundLoad(0.3) as load:
        load.resume()
        child = load._children[0]
        child.wait(timeout=10)  # bounded even if nobody stops it
        assert child.returncode == 0


def test_background_load_rejects_unbounded_durations():
    with pytest.raises(ValueError, match=r"seconds must be in \(0, 60"):
        BackgroundLoad(0.0)
    with pytest.raises(ValueError, match="got 61"):
        BackgroundLoad(61.0)
    with pytest.raises(ValueError, match="per_cpu must be 1 to 8, got 0"):
        BackgroundLoad(1.0, per_cpu=0)


@pytest.mark.skipif(not can_pin(), reason="needs os.sched_setaffinity")
def test_pinned_cpu_restores_the_affinity():
    before = os.sched_getaffinity(0)
    with pinned_cpu() as cpu:
        assert os.sched_getaffinity(0) == {cpu}
    assert os.sched_getaffinity(0) == before


def test_load_module_bounds_every_child():
    assert "time.monotonic() < end" in load_module._BURN


# ---------------------------------------------------------------- equivalence and tools


def test_fingerprint_tells_inputs_apart():
    x = np.arange(4.0)
    assert fingerprint(x) == fingerprint(x.copy())
    assert fingerprint(x) != fingerprint(x + 1)
    assert fingerprint(x) != fingerprint(x.astype(np.float32))


@pytest.mark.parametrize(("cost", "target"), [(0.001, 0.2), (0.03, 0.2), (0.3, 0.2),
                                               (1e-6, 0.2)])
def test_one_two_five_rule_matches_the_real_timeit(cost, target):
    class Clock:
        now = 0.0

    clock = Clock()

    def work():
        clock.now += cost

    loops, _ = timeit.Timer(stmt=work, timer=lambda: clock.now).autorange()
    assert loops == one_two_five_target(cost, target)


def test_tools_table_rows_are_complete_and_cite_a_source():
    assert len(TOOLS_TABLE.rows) == 5
    for row in TOOLS_TABLE.rows:
        assert len(row) == len(TOOLS_TABLE.columns)
        assert "/" in row[-1]  # a repository path


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [("timer-overhead", {"tick_us": 0}, "tick_us: must be >= 1"),
     ("interleaving", {"rounds": 16}, "rounds: must be <= 15"),
     ("first-touch", {"pages": "huge"}, "pages: must be one of small, numpy"),
     ("same-answer", {"n": 5}, "n: must be >= 10")],
)
def test_out_of_range_parameters_are_refused(name, raw, message):
    with pytest.raises(ParamError, match=message):
        BY_NAME[name].parse_params(raw)


def test_timer_overhead_says_when_its_premise_is_not_reached():
    # a 1 µs tick is shorter than a 2000-integer sum: the coarse-clock claim has no premise
    result = BY_NAME["timer-overhead"].run(work=2000, tick_us=1)
    check = result.check("single-call-tick-dominated")
    assert check is not None and check.state == "not_applicable"
    assert math.isfinite(result.metrics["per_call_ns"])
