"""Experiment ``interleaving``: why candidates are timed in alternating rounds.

Two candidates with a known cost ratio -- A sums a list of ``n`` integers, B one of
``1.5 n`` -- are timed three ways with :mod:`whylab.bench`:

1. *quiet*: interleaved rounds with nothing else running (the reference ratio);
2. *back to back*: all of A's samples, then all of B's, while a background load
   (:class:`~whylab.topics.benchmarking.load.BackgroundLoad`, pinned to the same CPU as
   this thread) runs during A's block only -- a slow spell that happens to land on one
   candidate, as it does on a shared machine;
3. *interleaved under load*: rounds of A, B (order rotating) with the load running the
   whole time, so every round sees it equally.

The claims are about ratios against the quiet reference, with generous margins: back
to back the ratio moves by at least a quarter; interleaved it stays within a quarter.
"""

from __future__ import annotations

import statistics

from whylab.bench import autorange, back_to_back, interleaved_rounds, warm_up
from whylab.explorer.experiment import (
    Check,
    Control,
    LineChart,
    Param,
    Result,
    Series,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.topics.benchmarking.load import BackgroundLoad, pinned_cpu

BASE_LENGTH = 2000
B_WORK_FACTOR = 1.5  # B sums 1.5x as many integers as A
STABLE_WITHIN = 1.25  # interleaved under load: ratio within this factor of the quiet one
BIASED_BY_AT_LEAST = 1.25  # back to back: ratio moved by at least this factor


def summing(length: int):
    """A candidate: sum a list of ``length`` integers (pure Python: one thread, no BLAS)."""
    values = list(range(length))

    def run() -> int:
        return sum(values)

    return run


def median_ratio(b: list[float], a: list[float]) -> float:
    """Median of the per-round ratios b[i] / a[i]."""
    return statistics.median(y / x for x, y in zip(a, b, strict=True))


def factor_between(x: float, y: float) -> float:
    """How many times larger the larger of two positive numbers is: max/min."""
    return max(x, y) / min(x, y)


@experiment(
    name="interleaving",
    title=T("Back to back or interleaved: a slow spell under control",
            "先后计时还是交替计时：一段可控的“慢时段”"),
    description=T(
        "Times two candidates with a known cost ratio quietly, back to back while a "
        "background process burns CPU during A's block, and in interleaved rounds while "
        "the same load runs throughout.",
        "对两个耗时比例已知的候选分别计时：安静时交替计时；先后计时，并在 A 的那一段里"
        "让一个后台进程占满 CPU；以及在同样的负载一直运行时交替计时。",
    ),
    params=[
        Param("rounds", "int", 6, T("samples per candidate (rounds)", "每个候选的样本数（轮数）"),
              minimum=3, maximum=15, step=1),
        Param("block_ms", "int", 15, T("length of one timed block", "每个计时块的时长"),
              unit="ms", minimum=5, maximum=40, step=1),
    ],
    controls=[
        Control("no-load", T("the background load never runs", "后台负载根本没有运行"),
                breaks=("back-to-back-biased",)),
        Control("load-on-a-turns",
                T("in the interleaved rounds the load runs only during A's turns",
                  "交替计时时负载只在 A 的轮次里运行"),
                breaks=("interleaved-ratio-stable",)),
    ],
    timing=True,
)
def interleaving(rounds: int, block_ms: int) -> Result:
    candidates = {"A": summing(BASE_LENGTH), "B": summing(int(BASE_LENGTH * B_WORK_FACTOR))}
    block_s = block_ms / 1000
    no_load = control_active("no-load")
    load_on_a_turns = control_active("load-on-a-turns")
    # three phases of 2 x rounds blocks, plus calibration; the load outlives them all
    bound_s = min(60.0, 6 * 3 * rounds * block_s * 2 + 5.0)
    with pinned_cpu() as cpu, BackgroundLoad(bound_s, cpu) as load:
        calls = {}
        for name, func in candidates.items():
            warm_up(func, 3)
            calls[name], _ = autorange(func, block_s)
        quiet = interleaved_rounds(candidates, rounds, calls)
        sequential = back_to_back(
            candidates, rounds, calls,
            on_turn=lambda name: load.set_running(name == "A" and not no_load),
        )
        load.pause()
        if load_on_a_turns:
            loaded = interleaved_rounds(candidates, rounds, calls,
                                        on_turn=lambda name: load.set_running(name == "A"))
        else:
            load.resume()
            loaded = interleaved_rounds(candidates, rounds, calls)
        load.pause()

    quiet_ratio = median_ratio(quiet["B"], quiet["A"])
    sequential_ratio = statistics.median(sequential["B"]) / statistics.median(sequential["A"])
    loaded_ratio = median_ratio(loaded["B"], loaded["A"])
    slowdown = statistics.median(sequential["A"]) / statistics.median(quiet["A"])
    moved = factor_between(sequential_ratio, quiet_ratio)
    drift = factor_between(loaded_ratio, quiet_ratio)

    checks = [
        Check(
            id="back-to-back-biased",
            name=T(f"Back to back, with the load during A's block only, the ratio B/A moves "
                   f"by at least {BIASED_BY_AT_LEAST}× from the quiet ratio",
                   f"先后计时、负载只落在 A 的那一段时，B/A 比值偏离安静时的比值至少 "
                   f"{BIASED_BY_AT_LEAST} 倍"),
            passed=moved >= BIASED_BY_AT_LEAST,
            measured=T(f"{sequential_ratio:.2f} against {quiet_ratio:.2f} (×{moved:.2f})",
                       f"{sequential_ratio:.2f}，安静时 {quiet_ratio:.2f}（×{moved:.2f}）"),
            expected=f"≥ ×{BIASED_BY_AT_LEAST}",
        ),
        Check(
            id="interleaved-ratio-stable",
            name=T(f"Interleaved rounds under the same load keep the ratio within "
                   f"{STABLE_WITHIN}× of the quiet ratio (so A stays ranked faster)",
                   f"同样的负载下交替计时，比值与安静时相差不到 {STABLE_WITHIN} 倍"
                   f"（A 仍排在前面）"),
            passed=drift <= STABLE_WITHIN and loaded_ratio > 1.0,
            measured=T(f"{loaded_ratio:.2f} against {quiet_ratio:.2f} (×{drift:.2f})",
                       f"{loaded_ratio:.2f}，安静时 {quiet_ratio:.2f}（×{drift:.2f}）"),
            expected=f"≤ ×{STABLE_WITHIN}, > 1",
        ),
    ]
    phases = {
        "quiet": (T("quiet, interleaved", "安静，交替"), quiet),
        "sequential": (T("back to back, load during A", "先后，负载落在 A 上"), sequential),
        "loaded": (T("interleaved, load throughout", "交替，负载一直在"), loaded),
    }
    chart = LineChart(
        title=T("B / A, sample by sample", "逐个样本的 B / A"),
        x_label=T("round (sample number)", "轮次（样本序号）"),
        y_label=T("B / A", "B / A"),
        series=[Series(label, list(range(1, rounds + 1)),
                       [b / a for a, b in zip(times["A"], times["B"], strict=True)])
                for label, times in phases.values()],
    )
    table = Table(
        title=T("Medians of each phase (µs per call)", "各阶段的中位数（每次调用，微秒）"),
        columns=[T("phase", "阶段"), T("A", "A"), T("B", "B"), T("B / A", "B / A")],
        rows=[[label, f"{statistics.median(times['A']) * 1e6:.2f}",
               f"{statistics.median(times['B']) * 1e6:.2f}", f"{ratio:.2f}"]
              for (label, times), ratio in zip(phases.values(),
                                               [quiet_ratio, sequential_ratio, loaded_ratio],
                                               strict=True)],
    )
    pinned = (T(f"This thread and the load shared CPU {cpu}.", f"本线程与负载共用 CPU {cpu}。")
              if cpu is not None else
              T("This platform cannot pin threads: one load process per CPU ran instead.",
                "本平台无法绑定 CPU：改为每个 CPU 各跑一个负载进程。"))
    return Result(
        checks=checks,
        figures=[chart],
        tables=[table],
        metrics={"quiet_ratio": quiet_ratio, "back_to_back_ratio": sequential_ratio,
                 "interleaved_loaded_ratio": loaded_ratio, "a_slowdown_under_load": slowdown,
                 "calls_a": calls["A"], "calls_b": calls["B"]},
        notes=[pinned,
               T(f"Under the load, A's back-to-back samples took {slowdown:.2f}× as long as "
                 "its quiet ones. The load processes were stopped and reaped before this "
                 "page was drawn.",
                 f"负载下 A 的先后计时样本耗时是安静时的 {slowdown:.2f} 倍。"
                 "负载进程在本页绘制之前已全部结束并回收。")],
    )
