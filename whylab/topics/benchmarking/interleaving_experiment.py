"""Experiment ``interleaving``: why candidates are timed in alternating rounds.

Two candidates with a cost ratio known by construction -- A sums a list of integers, B
calls A twice, so B / A = 2 -- are timed two ways with :mod:`whylab.bench`:

1. *back to back*: all of A's samples, then all of B's;
2. *interleaved*: rounds of A, B (order rotating).

Both orderings run under the *same* wall-clock disturbance schedule: a background load
(:class:`~whylab.topics.benchmarking.load.BackgroundLoad`: three processes pinned to the
same CPU as this thread) during the first half of the phase (``rounds × block``
seconds from its start), none after -- a slow spell that comes and goes by the clock, as
on a shared machine. So only the ordering differs between the two phases: back to back
the spell lands on A's block alone; interleaved it lands on A's and B's turns of the same
early rounds alike.

The claims are about the ratio against the known 2, decided on the confidence interval
of the per-round (back to back: per-sample-pair) ratios
(:func:`whylab.topics.shared.timing_check`): back to back A looks slower, B/A falling at
least 1.25× below 2; interleaved B/A stays within 1.35× of 2. The controls move the spell
(to the second half: onto B's block), tie the load to A's turns, or replace the
interleaved phase by a second back-to-back one under the same schedule -- the mistake
the interleaved claim must catch.
"""

from __future__ import annotations

import statistics
import time

from whylab.bench import back_to_back, best_of, interleaved_rounds, time_calls, warm_up
from whylab.explorer.experiment import (
    Control,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.topics.benchmarking.load import BackgroundLoad, pinned_cpu
from whylab.topics.benchmarking.timer_experiment import summing
from whylab.topics.shared import timing_check

BASE_LENGTH = 2000
TRUE_RATIO = 2.0  # B runs A twice
STABLE_WITHIN = 1.35  # interleaved under load: ratio within this factor of 2
BIASED_BY_AT_LEAST = 1.25  # back to back: ratio below 2 by at least this factor
# The load: three processes on this thread's CPU, which then gets about a quarter of it: a
# spell strong enough that back to back B/A falls well below 2, and that timing the
# interleaved phase back to back (a control) is caught. Under it each 10 ms block straddles
# scheduler slices, so the interleaved claim needs its 15 rounds to be decided.
LOAD_PER_CPU = 3
CALIBRATION_CALLS = 64


def calls_for(func, block_s: float) -> int:
    """Calls that make one block last about ``block_s``, from the fastest of a few short runs.

    The fastest run is the one least disturbed by anything else on the machine, so a
    stall during calibration does not shrink the blocks.
    """
    warm_up(func, 3)
    per_call = best_of(func, CALIBRATION_CALLS, 5)
    return max(1, round(block_s / per_call))


def twice(func):
    """Candidate B: ``func`` run twice, so it costs twice A by construction."""

    def run():
        func()
        return func()

    return run


class SpellSchedule:
    """The wall-clock disturbance: the load runs from the phase's start for ``window_s``
    seconds (or, ``late``, from then on), whatever candidate is timed at the moment."""

    def __init__(self, load: BackgroundLoad, window_s: float, *, late: bool = False):
        self.load, self.window_s, self.late = load, window_s, late
        self.started = time.perf_counter()

    def on_turn(self, _name: str) -> None:
        early = time.perf_counter() - self.started < self.window_s
        self.load.set_running(early != self.late)


def median_ratio(b: list[float], a: list[float]) -> float:
    """Median of the per-round ratios b[i] / a[i]."""
    return statistics.median(y / x for x, y in zip(a, b, strict=True))


@experiment(
    name="interleaving",
    title=T("Back to back or interleaved: a slow spell under control",
            "先后计时还是交替计时：一段可控的“慢时段”"),
    description=T(
        "Times A and B = A run twice (so B / A = 2) back to back and in interleaved rounds, "
        "each under the same wall-clock schedule: background processes burn CPU during the "
        "first half of the phase.",
        "对 A 和 B（B 就是把 A 运行两次，所以 B / A = 2）分别先后计时和交替计时，"
        "两者都处在同一个按时钟安排的干扰下：每个阶段的前一半时间里，后台进程占用 CPU。",
    ),
    params=[
        Param("rounds", "int", 15, T("samples per candidate (rounds)", "每个候选的样本数（轮数）"),
              minimum=3, maximum=15, step=1),
        Param("block_ms", "int", 10, T("length of one timed block", "每个计时块的时长"),
              unit="ms", minimum=5, maximum=50, step=5),
    ],
    controls=[
        Control("load-on-b-block",
                T("the slow spell comes in the second half of each phase, so back to back it "
                  "lands on B's block instead of A's",
                  "慢时段出现在每个阶段的后一半，于是先后计时时它落在 B 的那一段，而不是 A 的"),
                breaks=("back-to-back-biased",)),
        Control("load-on-a-turns",
                T("in the interleaved rounds the load runs only during A's turns",
                  "交替计时时负载只在 A 的轮次里运行"),
                breaks=("interleaved-ratio-stable",)),
        Control("interleaved-is-back-to-back",
                T("the 'interleaved' phase in fact times back to back, under the same schedule",
                  "所谓“交替计时”阶段其实是先后计时，干扰安排相同"),
                breaks=("interleaved-ratio-stable",)),
    ],
    timing=True,
    metrics=[
        Metric(
            "back_to_back_ratio",
            T("B/A timed one after the other (true: 2)", "先后分别计时的 B/A（真实值 2）"),
            "×",
        ),
        Metric(
            "interleaved_loaded_ratio",
            T("B/A interleaved, under load (median)", "交替计时、有负载时的 B/A（中位数）"),
            "×",
        ),
        Metric(
            "a_slowdown_under_load",
            T(
                "A timed under the load / half of B timed without it",
                "有负载时的 A / 无负载时 B 的一半",
            ),
            "×",
        ),
        Metric("calls_a", T("calls per sample of A", "A 每个样本的调用次数")),
        Metric("calls_b", T("calls per sample of B", "B 每个样本的调用次数")),
    ],
)
def interleaving(rounds: int, block_ms: int) -> Result:
    single = summing(BASE_LENGTH)
    candidates = {"A": single, "B": twice(single)}
    block_s = block_ms / 1000
    late = control_active("load-on-b-block")
    load_on_a_turns = control_active("load-on-a-turns")
    window_s = rounds * block_s  # half of a phase's unloaded length (A and B: block_s each)
    # 4 x rounds blocks, each at most ~(1 + LOAD_PER_CPU)x longer under load, and margin
    bound_s = min(60.0, 4 * rounds * block_s * (1 + LOAD_PER_CPU) * 2 + 5.0)
    with pinned_cpu() as cpu, BackgroundLoad(bound_s, cpu, per_cpu=LOAD_PER_CPU) as load:
        calls = {name: calls_for(func, block_s) for name, func in candidates.items()}
        # Let the load settle first: freshly started (and at once stopped) processes are
        # scheduled behind at their first resume, and would disturb the first block less.
        load.resume()
        for name, func in candidates.items():
            time_calls(func, calls[name])
        schedule = SpellSchedule(load, window_s, late=late)
        sequential = back_to_back(candidates, rounds, calls, on_turn=schedule.on_turn)
        schedule = SpellSchedule(load, window_s, late=late)
        if load_on_a_turns:
            loaded = interleaved_rounds(candidates, rounds, calls,
                                        on_turn=lambda name: load.set_running(name == "A"))
        elif control_active("interleaved-is-back-to-back"):
            loaded = back_to_back(candidates, rounds, calls, on_turn=schedule.on_turn)
        else:
            loaded = interleaved_rounds(candidates, rounds, calls, on_turn=schedule.on_turn)
        load.pause()

    # Back to back there are no rounds; sample i of A and sample i of B make a pair (taken
    # in two blocks, so the pair does not cancel a slow spell: that is the point).
    sequential_ratio = median_ratio(sequential["B"], sequential["A"])
    loaded_ratio = median_ratio(loaded["B"], loaded["A"])
    pair_biases = [TRUE_RATIO * a / b for a, b in zip(sequential["A"], sequential["B"],
                                                      strict=True)]
    round_ratios = [b / a for a, b in zip(loaded["A"], loaded["B"], strict=True)]
    # B's back-to-back block ran without the load: half of it is A's unloaded cost
    slowdown = min(sequential["A"]) / (min(sequential["B"]) / 2)

    checks = [
        timing_check(
            "back-to-back-biased",
            T(f"Back to back, the spell lands on A's block only and A looks slower than it "
              f"is: the measured B/A (median {sequential_ratio:.2f}) falls below the true "
              f"{TRUE_RATIO:g} by at least {BIASED_BY_AT_LEAST:g}× ({TRUE_RATIO:g} ÷ B/A, "
              "sample pair by sample pair)",
              f"先后计时时慢时段只落在 A 的那一段，A 看起来比实际更慢：测得的 B/A（中位数 "
              f"{sequential_ratio:.2f}）比真实值 {TRUE_RATIO:g} 低至少 {BIASED_BY_AT_LEAST:g} 倍"
              f"（逐对样本计算 {TRUE_RATIO:g} ÷ B/A）"),
            pair_biases, at_least=BIASED_BY_AT_LEAST),
        timing_check(
            "interleaved-ratio-stable",
            T(f"Interleaved rounds under the same schedule measure B/A within "
              f"{STABLE_WITHIN:g}× of the true {TRUE_RATIO:g} (per-round ratios)",
              f"同样的干扰安排下交替计时，测得的 B/A 与真实值 {TRUE_RATIO:g} 相差不到 "
              f"{STABLE_WITHIN:g} 倍（逐轮比值）"),
            round_ratios, at_least=round(TRUE_RATIO / STABLE_WITHIN, 2),
            at_most=round(TRUE_RATIO * STABLE_WITHIN, 2)),
    ]
    phases = {
        "sequential": (T("back to back, load during A", "先后，负载落在 A 上"), sequential),
        "loaded": (T("interleaved, same schedule", "交替，干扰安排相同"), loaded),
    }
    chart = LineChart(
        title=T("B / A, sample by sample (the truth is 2)", "逐个样本的 B / A（真实值为 2）"),
        x_label=T("round (sample number)", "轮次（样本序号）"),
        y_label=T("B / A", "B / A"),
        series=[Series(label, list(range(1, rounds + 1)),
                       [b / a for a, b in zip(times["A"], times["B"], strict=True)])
                for label, times in phases.values()]
        + [Series(T("true ratio", "真实比值"), [1, rounds], [TRUE_RATIO, TRUE_RATIO])],
    )
    table = Table(
        title=T("Medians of each phase (µs per call); B / A as the checks compute it",
                "各阶段的中位数（每次调用，微秒）；B / A 按检验的算法计算"),
        columns=[T("phase", "阶段"), T("A", "A"), T("B", "B"), T("B / A", "B / A")],
        rows=[[label, f"{statistics.median(times['A']) * 1e6:.2f}",
               f"{statistics.median(times['B']) * 1e6:.2f}", f"{ratio:.2f}"]
              for (label, times), ratio in zip(phases.values(), [sequential_ratio, loaded_ratio],
                                               strict=True)],
    )
    pinned = (T(f"This thread and the load shared CPU {cpu}.", f"本线程与负载共用 CPU {cpu}。")
              if cpu is not None else
              T("This platform cannot pin threads: load processes ran on every CPU instead.",
                "本平台无法绑定 CPU：改为在每个 CPU 上运行负载进程。"))
    return Result(
        checks=checks,
        figures=[chart],
        tables=[table],
        metrics={"back_to_back_ratio": sequential_ratio, "interleaved_loaded_ratio": loaded_ratio,
                 "a_slowdown_under_load": slowdown, "calls_a": calls["A"], "calls_b": calls["B"]},
        notes=[pinned,
               T(f"Under the load, A's back-to-back samples took {slowdown:.2f}× as long as "
                 "A's share of B's unloaded ones. The load processes were stopped and reaped "
                 "before this page was drawn.",
                 f"负载下 A 的先后计时样本耗时是 B 的无负载样本中 A 那一份的 {slowdown:.2f} 倍。"
                 "负载进程在本页绘制之前已全部结束并回收。")],
    )
