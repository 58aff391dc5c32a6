"""Experiment ``timer-overhead``: what a clock costs, what its tick hides, and why blocks help.

Three things are measured on this machine:

* what each of Python's clocks says about itself (``time.get_clock_info``) and what
  two back-to-back readings of it differ by (:func:`whylab.bench.clock_deltas`);
* one small operation (summing a list of ``work`` integers, about a microsecond)
  timed in blocks of k = 1, 4, 16, ... calls with ``time.perf_counter``;
* the same readings as a *coarse* clock would have given them: each reading floored
  to a tick of ``tick_us`` microseconds, as a clock with that resolution reports.

Because the coarse readings are derived from the same perf_counter readings, the
coarse and fine estimates of one block differ only by the tick, never by noise: the
claims about blocks amortising the tick are exact bounds, not luck.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

from whylab.bench import clock_deltas, warm_up
from whylab.explorer.experiment import (
    Check,
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

CLOCKS = ("perf_counter", "monotonic", "time", "process_time")
DELTA_READINGS = 5000
SINGLE_CALLS = 1000
SAMPLES_PER_BLOCK_SIZE = 9
TICKS_PER_BLOCK = 100  # a block spanning 100 ticks bounds the tick's error by 1%
TICK_ERROR_AT_MOST = 0.02
ZERO_READINGS_AT_LEAST = 0.5
TICK_OVER_OP_AT_LEAST = 4.0  # premise: the tick is at least 4x the operation
TIMER_SHARE_AT_MOST = 0.005


def summing(length: int) -> Callable[[], int]:
    values = list(range(length))

    def run() -> int:
        return sum(values)

    return run


def frozen(clock: Callable[[], float]) -> Callable[[], float]:
    """A broken clock for the control: reads ``clock`` once and returns that forever."""
    first = clock()
    return lambda: first


def floor_to_tick(seconds: float, tick: float) -> float:
    """The reading a clock with resolution ``tick`` shows at time ``seconds``."""
    return math.floor(seconds / tick) * tick


def block_readings(func: Callable[[], object], calls: int, samples: int,
                   timer_inside_loop: bool) -> list[tuple[float, float]]:
    """(start, end) perf_counter readings around ``samples`` blocks of ``calls`` calls.

    With ``timer_inside_loop`` (the control) the end is read after the first call of the
    block, a plausible bug that makes every "block" a single-call reading.
    """
    clock = time.perf_counter
    readings = []
    for _ in range(samples):
        start = clock()
        end = None
        for _ in range(calls):
            func()
            if timer_inside_loop and end is None:
                end = clock()
        readings.append((start, clock() if end is None else end))
    return readings


def per_call(readings: list[tuple[float, float]], calls: int, tick: float | None) -> list[float]:
    """Per-call estimates from block readings, read by a fine clock or one with ``tick``."""
    if tick is None:
        return [(end - start) / calls for start, end in readings]
    return [(floor_to_tick(end, tick) - floor_to_tick(start, tick)) / calls
            for start, end in readings]


@experiment(
    name="timer-overhead",
    title=T("What the clock costs and what its tick hides", "时钟本身的开销，以及刻度掩盖了什么"),
    description=T(
        "Reads Python's clocks back to back, times a ~1 µs operation one call at a time and "
        "in growing blocks with perf_counter, and reads the same blocks as a clock with a "
        "coarse tick would have.",
        "连续读取 Python 的各个时钟；用 perf_counter 对一个约 1 微秒的操作逐次计时、"
        "再按越来越大的块计时；并把同样的读数换成刻度粗糙的时钟会给出的读数。",
    ),
    params=[
        Param("work", "int", 150, T("integers summed by the operation", "操作要求和的整数个数"),
              minimum=10, maximum=2000, step=10),
        Param("tick_us", "int", 20, T("tick of the coarse clock", "粗糙时钟的刻度"), unit="µs",
              minimum=1, maximum=1000, step=1),
    ],
    controls=[
        Control("frozen-clock",
                T("the clock is read once and the value reused, so readings never advance",
                  "时钟只读一次、之后一直沿用那个值，读数从不前进"),
                breaks=("timer-cost-visible",)),
        Control("timer-inside-loop",
                T("each block's end is read after its first call (the timer sits inside the "
                  "loop)", "每个块的结束时刻在第一次调用后就读取（计时器放进了循环里）"),
                breaks=("blocks-amortise-tick", "blocks-amortise-cost")),
        Control("no-coarse-clock",
                T("the coarse clock is really perf_counter, with no tick",
                  "所谓粗糙时钟其实就是 perf_counter，没有刻度"),
                breaks=("single-call-tick-dominated",)),
    ],
    timing=True,
    metrics=[
        Metric(
            "perf_counter_cost_ns",
            T(
                "cost of one perf_counter() call (median)",
                "一次 perf_counter() 调用的开销（中位数）",
            ),
            "ns",
        ),
        Metric(
            "single_call_ns",
            T("one call timed alone (fastest)", "单独计时一次调用（最快）"),
            "ns",
        ),
        Metric(
            "per_call_ns",
            T("per call, from a long block (reference)", "长块中平均每次调用（参考值）"),
            "ns",
        ),
        Metric(
            "timer_share_single",
            T("timer cost / one call timed alone", "计时器开销 / 单独计时的一次调用"),
            "×",
        ),
        Metric(
            "zero_readings_share",
            T("coarse clock: share of single readings that are 0", "粗时钟：单次读数为 0 的比例"),
        ),
        Metric("long_block_calls", T("calls in the long block", "长块中的调用次数")),
    ],
)
def timer_overhead(work: int, tick_us: int) -> Result:
    tick = tick_us * 1e-6
    op = summing(work)
    warm_up(op, 100)
    perf = frozen(time.perf_counter) if control_active("frozen-clock") else time.perf_counter
    coarse_tick = None if control_active("no-coarse-clock") else tick
    inside = control_active("timer-inside-loop")

    deltas = {name: clock_deltas(DELTA_READINGS, getattr(time, name)) for name in CLOCKS}
    deltas["perf_counter"] = clock_deltas(DELTA_READINGS, perf)
    cost = statistics.median(deltas["perf_counter"])
    resolution = time.get_clock_info("perf_counter").resolution

    single = block_readings(op, 1, SINGLE_CALLS, timer_inside_loop=False)
    single_fine = per_call(single, 1, None)
    single_coarse = per_call(single, 1, coarse_tick)
    # Fastest readings throughout: other work on the machine only ever adds time, and a
    # block that escaped it shows what the code costs.
    single_fastest = min(single_fine)
    zero_share = sum(reading == 0 for reading in single_coarse) / len(single_coarse)

    # The block that spans TICKS_PER_BLOCK ticks, sized from a steady estimate of one
    # call (blocks of 64); the chart's sizes grow by 4 from a single call up to it.
    estimate = min(per_call(block_readings(op, 64, SAMPLES_PER_BLOCK_SIZE, False), 64, None))
    long_calls = math.ceil(TICKS_PER_BLOCK * tick / estimate)
    sizes = [4**i for i in range(1, 12) if 4**i < long_calls] + [long_calls]
    fine_fastest = {1: single_fastest}
    coarse_fastest = {1: min(single_coarse)}
    for calls in sizes:
        readings = block_readings(op, calls, SAMPLES_PER_BLOCK_SIZE, inside)
        fine_fastest[calls] = min(per_call(readings, calls, None))
        coarse_fastest[calls] = min(per_call(readings, calls, coarse_tick))
    sizes = [1, *sizes]
    reference = fine_fastest[long_calls]
    block_reading = reference * long_calls  # one long block, as the fine clock read it
    tick_error = abs(coarse_fastest[long_calls] - reference) / reference
    share_long = cost / block_reading
    share_single = cost / single_fastest

    checks = [
        Check(
            id="timer-cost-visible",
            name=T("Two back-to-back perf_counter() readings differ by a measurable cost, at "
                   "least the clock's reported resolution",
                   "连续两次 perf_counter() 读数之间有可测的开销，且不小于时钟自报的分辨率"),
            passed=cost > 0 and cost >= resolution,
            measured=T(f"median {cost * 1e9:.0f} ns", f"中位数 {cost * 1e9:.0f} 纳秒"),
            expected=f"≥ {resolution * 1e9:g} ns",
        ),
    ]
    if tick >= TICK_OVER_OP_AT_LEAST * single_fastest:
        checks.append(Check(
            id="single-call-tick-dominated",
            name=T(f"Timed one call at a time with a {tick_us} µs clock, at least half the "
                   "readings are 0: the tick, not the operation, decides the reading",
                   f"用 {tick_us} 微秒刻度的时钟逐次计时，至少一半读数为 0："
                   "读数由刻度决定，而不是由操作决定"),
            passed=zero_share >= ZERO_READINGS_AT_LEAST,
            measured=T(f"{zero_share:.0%} of {SINGLE_CALLS} readings are 0",
                       f"{SINGLE_CALLS} 个读数中 {zero_share:.0%} 为 0"),
            expected=f"≥ {ZERO_READINGS_AT_LEAST:.0%}",
        ))
    else:
        checks.append(Check.not_applicable(
            id="single-call-tick-dominated",
            name=T("Timed one call at a time with the coarse clock, most readings are 0",
                   "用粗糙时钟逐次计时，大部分读数为 0"),
            expected=f"≥ {ZERO_READINGS_AT_LEAST:.0%}",
            why=T(f"needs a tick ≥ {TICK_OVER_OP_AT_LEAST:g}× the operation "
                  f"({single_fastest * 1e6:.2f} µs): raise tick_us or lower work",
                  f"需要刻度 ≥ 操作耗时（{single_fastest * 1e6:.2f} 微秒）的 "
                  f"{TICK_OVER_OP_AT_LEAST:g} 倍：调大 tick_us 或调小 work"),
        ))
    checks += [
        Check(
            id="blocks-amortise-tick",
            name=T(f"Blocks of {long_calls} calls (≥ {TICKS_PER_BLOCK} ticks each) give a "
                   f"per-call estimate from the coarse clock within {TICK_ERROR_AT_MOST:.0%} "
                   "of the fine clock's on the same readings",
                   f"每块 {long_calls} 次调用（每块 ≥ {TICKS_PER_BLOCK} 个刻度）时，"
                   f"粗糙时钟给出的每次调用耗时与同一组读数下精细时钟的结果相差不到 "
                   f"{TICK_ERROR_AT_MOST:.0%}"),
            passed=tick_error <= TICK_ERROR_AT_MOST,
            measured=T(f"relative difference {tick_error:.2%}", f"相对差 {tick_error:.2%}"),
            expected=f"≤ {TICK_ERROR_AT_MOST:.0%}",
        ),
        Check(
            id="blocks-amortise-cost",
            name=T(f"In a block of {long_calls} calls, perf_counter's own cost is under "
                   f"{TIMER_SHARE_AT_MOST:.1%} of the reading (one call per reading: "
                   f"{share_single:.1%})",
                   f"每块 {long_calls} 次调用时，perf_counter 自身的开销不到读数的 "
                   f"{TIMER_SHARE_AT_MOST:.1%}（每次读数只含一次调用时为 {share_single:.1%}）"),
            passed=share_long <= TIMER_SHARE_AT_MOST,
            measured=f"{share_long:.3%}",
            expected=f"≤ {TIMER_SHARE_AT_MOST:.1%}",
        ),
    ]

    clock_rows = []
    for name in CLOCKS:
        info = time.get_clock_info(name)
        clock_rows.append([
            f"time.{name}()", info.implementation, f"{info.resolution:g}",
            T("yes", "是") if info.monotonic else T("no", "否"),
            f"{statistics.median(deltas[name]) * 1e9:.0f}",
        ])
    clock_table = Table(
        title=T("Python's clocks on this machine", "本机上 Python 的各个时钟"),
        columns=[T("clock", "时钟"), T("implementation", "实现"),
                 T("reported resolution (s)", "自报分辨率（秒）"), T("monotonic", "单调"),
                 T("median back-to-back difference (ns)", "连续读数之差的中位数（纳秒）")],
        rows=clock_rows,
    )
    block_table = Table(
        title=T("Per-call estimates by block size (fastest block)",
                "不同块大小下的每次调用耗时估计（最快的块）"),
        columns=[T("calls per block", "每块调用次数"),
                 T("perf_counter (ns)", "perf_counter（纳秒）"),
                 T(f"{tick_us} µs clock (ns)", f"{tick_us} 微秒时钟（纳秒）"),
                 T("timer's share of a reading", "计时器开销占读数的比例")],
        rows=[[calls, f"{fine_fastest[calls] * 1e9:.0f}", f"{coarse_fastest[calls] * 1e9:.0f}",
               f"{cost / (fine_fastest[calls] * calls):.3%}"] for calls in sizes],
    )

    def error(value: float) -> float:
        return max(abs(value - reference) / reference, 1e-5)  # a log axis has no 0

    chart = LineChart(
        title=T("Relative error of the per-call estimate against block size",
                "每次调用耗时估计的相对误差与块大小"),
        x_label=T("calls per block", "每块调用次数"),
        y_label=T("|estimate − reference| / reference", "|估计 − 参考| / 参考"),
        series=[
            Series(T("perf_counter", "perf_counter"), sizes,
                   [error(fine_fastest[k]) for k in sizes]),
            Series(T(f"{tick_us} µs clock", f"{tick_us} 微秒时钟"), sizes,
                   [error(coarse_fastest[k]) for k in sizes]),
            Series(T("bound: tick / block length", "上界：刻度 / 块时长"), sizes,
                   [max(tick / (reference * k), 1e-5) for k in sizes]),
        ],
        log_x=True, log_y=True,
    )
    return Result(
        checks=checks,
        figures=[chart],
        tables=[clock_table, block_table],
        metrics={"perf_counter_cost_ns": cost * 1e9, "single_call_ns": single_fastest * 1e9,
                 "per_call_ns": reference * 1e9, "timer_share_single": share_single,
                 "zero_readings_share": zero_share, "long_block_calls": long_calls},
        notes=[T(f"Each estimate is the fastest of {SAMPLES_PER_BLOCK_SIZE} blocks (of "
                 f"{SINGLE_CALLS} single calls at block size 1). Reference: the fastest per-call "
                 f"time from blocks of {long_calls} calls read by perf_counter. The coarse clock "
                 "is perf_counter's readings floored to the tick.",
                 f"每个估计值取 {SAMPLES_PER_BLOCK_SIZE} 个块中最快的一个（块大小为 1 时取 "
                 f"{SINGLE_CALLS} 次单独调用中最快的一次）。参考值：用 perf_counter 读取、"
                 f"每块 {long_calls} 次调用时最快的每次调用耗时。粗糙时钟就是把 perf_counter "
                 "的读数向下取整到刻度。")],
    )
