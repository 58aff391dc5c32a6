"""Experiments on warm-up: the first call of anything is not a sample of the steady state.

* ``jit-warm-up``: a small loop compiled by numba. Its first call compiles it
  (type inference, LLVM); later calls run machine code. A fresh dispatcher is made on
  every run, so every run sees a real compile.
* ``interpreter-warm-up``: CPython 3.11+ specialises bytecode while it runs (PEP 659:
  ``LOAD_ATTR`` becomes ``LOAD_ATTR_INSTANCE_VALUE``, ``BINARY_OP`` an int- or
  float-specific form). ``dis.get_instructions(..., adaptive=True)`` shows the
  specialised instructions; each run makes fresh code objects, so each starts cold.
* ``first-touch``: a freshly allocated large NumPy buffer has no physical pages yet;
  the first write to each page faults (the kernel finds and zeroes a page). The same
  write into a buffer already touched faults nothing. Minor faults are counted with
  ``resource.getrusage``.
"""

from __future__ import annotations

import dis
import mmap
import resource
import statistics
import time

import numpy as np

from whylab.bench import time_calls, warm_up
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
from whylab.topics.shared import timing_check

JIT_FIRST_OVER_STEADY_AT_LEAST = 100.0
STEADY_SAMPLES = 9  # a 95 % interval of the median that trims one outlier each side
JIT_RESULT_RTOL = 1e-12
INTERPRETER_FIRST_OVER_STEADY_AT_LEAST = 1.2
SPECIALISED_AT_LEAST = 3
HUGE_PAGE = 2 * 1024 * 1024  # the largest page a fault can bring in here (x86-64 THP)
CALLS_SHOWN = 12


# ---------------------------------------------------------------- numba


def sum_of_squares(values):
    """The loop numba compiles: sum of values[i]**2."""
    total = 0.0
    for i in range(values.shape[0]):
        total += values[i] * values[i]
    return total


def sum_of_squares_off_by_one(values):
    """The control's wrong loop: it stops one element early."""
    total = 0.0
    for i in range(values.shape[0] - 1):
        total += values[i] * values[i]
    return total


def compiled_dispatcher(function, eager: bool):
    """A fresh numba dispatcher for ``function``: lazy (compiles on the first call) or eager."""
    import numba  # imported here: it takes a second, and only this experiment needs it

    if eager:
        return numba.njit("float64(float64[::1])", cache=False)(function)
    return numba.njit(cache=False)(function)


def call_times(func, calls: int) -> list[float]:
    """Seconds taken by each of ``calls`` consecutive calls, timed one by one."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return times


@experiment(
    name="jit-warm-up",
    title=T("A JIT's first call compiles", "JIT 的第一次调用要先编译"),
    description=T(
        "Calls a numba-compiled loop one call at a time, starting from a dispatcher that "
        "has never run, and compares the first call with the steady state.",
        "从一个从未运行过的 numba 调度器开始，逐次调用编译后的循环，把第一次调用与稳定状态比较。",
    ),
    params=[Param("n", "int", 10_000, T("array length", "数组长度"), minimum=100,
                  maximum=1_000_000, step=100)],
    controls=[
        Control("precompiled", T("numba compiles the function before the first timed call",
                                 "numba 在第一次计时调用之前就已编译好"),
                breaks=("jit-first-call",)),
        Control("jit-off-by-one", T("the compiled loop skips the last element",
                                    "编译后的循环漏掉了最后一个元素"),
                breaks=("jit-same-result",)),
    ],
    timing=True,
    metrics=[
        Metric("first_call_s", T("first call (compiles)", "第一次调用（含编译）"), "s"),
        Metric("second_call_s", T("second call", "第二次调用"), "s"),
        Metric("steady_s", T("steady call (median)", "稳定后的一次调用（中位数）"), "s"),
        Metric(
            "first_over_steady",
            T("first call / steady call", "第一次调用 / 稳定后的调用"),
            "×",
        ),
    ],
)
def jit_warm_up(n: int) -> Result:
    values = np.random.default_rng(0).standard_normal(n)
    source = sum_of_squares_off_by_one if control_active("jit-off-by-one") else sum_of_squares
    compiled = compiled_dispatcher(source, eager=control_active("precompiled"))

    def call():
        return compiled(values)

    times = call_times(call, CALLS_SHOWN)
    steady_calls = max(1, int(1e-3 / max(statistics.median(times[2:]), 1e-9)))
    # The first call happens once; STEADY_SAMPLES steady samples give the interval its spread.
    steady_samples = [time_calls(call, steady_calls) for _ in range(STEADY_SAMPLES)]
    steady = statistics.median(steady_samples)
    ratio = times[0] / steady
    result, expected = float(call()), float(values @ values)
    error = abs(result - expected) / abs(expected)
    checks = [
        timing_check("jit-first-call",
                     T(f"The first call (which compiles: {times[0] * 1e3:.1f} ms) takes at least "
                       f"{JIT_FIRST_OVER_STEADY_AT_LEAST:g}× as long as a steady call "
                       f"({steady * 1e6:.1f} µs; against each of {STEADY_SAMPLES} steady "
                       "samples)",
                       f"第一次调用（包含编译：{times[0] * 1e3:.1f} 毫秒）的耗时至少是稳定调用"
                       f"（{steady * 1e6:.1f} 微秒；与 {STEADY_SAMPLES} 个稳定样本逐一相比）的 "
                       f"{JIT_FIRST_OVER_STEADY_AT_LEAST:g} 倍"),
                     [times[0] / s for s in steady_samples],
                     at_least=JIT_FIRST_OVER_STEADY_AT_LEAST, number_format=",.0f"),
        Check(id="jit-same-result",
              name=T("The compiled loop gives NumPy's answer (values @ values)",
                     "编译后的循环与 NumPy 的结果（values @ values）一致"),
              passed=error <= JIT_RESULT_RTOL,
              measured=T(f"relative error {error:.1e}", f"相对误差 {error:.1e}"),
              expected=f"≤ {JIT_RESULT_RTOL:.0e}"),
    ]
    chart = LineChart(
        title=T("Time of each call, in order", "按顺序每次调用的耗时"),
        x_label=T("call number", "第几次调用"), y_label=T("seconds", "秒"),
        series=[Series(T("numba-compiled loop", "numba 编译的循环"),
                       list(range(1, CALLS_SHOWN + 1)), times),
                Series(T("steady state (median of 1 ms blocks)", "稳定状态（1 毫秒块的中位数）"),
                       [1, CALLS_SHOWN], [steady, steady])],
        log_y=True,
    )
    return Result(checks=checks, figures=[chart],
                  metrics={"first_call_s": times[0], "second_call_s": times[1],
                           "steady_s": steady, "first_over_steady": ratio},
                  notes=[T("A new dispatcher is built for every run, so the compile is "
                           "measured each time (numba's on-disk cache is off).",
                           "每次运行都新建调度器，所以每次都测到编译（numba 的磁盘缓存已关闭）。")])


# ---------------------------------------------------------------- CPython specialisation

_POINTS_SOURCE = '''
def weighted_total(points):
    total = 0.0
    for p in points:
        total += p.x * p.y + p.x
    return total
'''
_POINTS_CODE = compile(_POINTS_SOURCE, "<interpreter-warm-up>", "exec")


class Point:
    def __init__(self, x: float, y: float):
        self.x = x
        self.y = y


def fresh_function():
    """A new ``weighted_total`` with a code object that has never run."""
    namespace: dict = {}
    exec(_POINTS_CODE, namespace)  # our own constant source, never reader input
    function = namespace["weighted_total"]
    function.__code__ = function.__code__.replace()
    return function


def specialised_instructions(code) -> list[str]:
    """Instructions whose adaptive (running) form differs from the generic one."""
    generic = [i.opname for i in dis.get_instructions(code)]
    adaptive = [i.opname for i in dis.get_instructions(code, adaptive=True)]
    return [a for g, a in zip(generic, adaptive, strict=True) if a != g]


@experiment(
    name="interpreter-warm-up",
    title=T("CPython warms up too", "CPython 也需要预热"),
    description=T(
        "Times the first calls of freshly made Python functions one by one and lists the "
        "bytecode instructions the interpreter specialised while running them.",
        "逐次计时新建 Python 函数的前几次调用，并列出解释器在运行中特化了哪些字节码指令。",
    ),
    params=[Param("copies", "int", 9, T("fresh copies of the function", "新建函数副本的个数"),
                  minimum=3, maximum=25, step=1)],
    controls=[
        Control("fresh-code-copy",
                T("the specialisation is read from a fresh copy of the code, which never ran",
                  "特化情况读自一份从未运行过的代码副本"),
                breaks=("interpreter-specialises",)),
        Control("warmed-before-first",
                T("each function is called a few times before its 'first' call is timed",
                  "每个函数在计时“第一次”调用之前已被调用过几次"),
                breaks=("first-call-slower",)),
    ],
    timing=True,
    metrics=[
        Metric(
            "first_over_steady",
            T(
                "first call / steady call (median over copies)",
                "第一次调用 / 稳定后的调用（各副本的中位数）",
            ),
            "×",
        ),
        Metric("specialised", T("specialised instructions after warm-up", "预热后被特化的指令数")),
    ],
)
def interpreter_warm_up(copies: int) -> Result:
    points = [Point(float(i), 2.0) for i in range(50)]
    warmed = control_active("warmed-before-first")
    ratios, curves = [], []
    before = after = []
    for _ in range(copies):
        function = fresh_function()
        before = specialised_instructions(function.__code__)
        if warmed:
            warm_up(lambda f=function: f(points), 3)
        times = call_times(lambda f=function: f(points), 40)
        ratios.append(times[0] / statistics.median(times[20:]))
        curves.append(times[:CALLS_SHOWN])
        code = function.__code__
        if control_active("fresh-code-copy"):
            code = code.replace()
        after = specialised_instructions(code)
    ratio = statistics.median(ratios)
    median_curve = [statistics.median(c[i] for c in curves) for i in range(CALLS_SHOWN)]
    checks = [
        Check(id="interpreter-specialises",
              name=T(f"After running, at least {SPECIALISED_AT_LEAST} of the function's "
                     "instructions are specialised forms (none before the first call)",
                     f"运行之后，函数中至少 {SPECIALISED_AT_LEAST} 条指令变成了特化形式"
                     "（第一次调用之前一条也没有）"),
              passed=len(after) >= SPECIALISED_AT_LEAST and not before,
              measured=T(f"{len(before)} before, {len(after)} after",
                         f"之前 {len(before)} 条，之后 {len(after)} 条"),
              expected=f"0 → ≥ {SPECIALISED_AT_LEAST}"),
        timing_check("first-call-slower",
                     T(f"A fresh function's first call takes at least "
                       f"{INTERPRETER_FIRST_OVER_STEADY_AT_LEAST:g}× its steady time "
                       f"(one ratio per fresh copy, {copies} copies)",
                       f"新函数第一次调用的耗时至少是其稳定耗时的 "
                       f"{INTERPRETER_FIRST_OVER_STEADY_AT_LEAST:g} 倍（每个新副本一个比值，共 "
                       f"{copies} 个副本）"),
                     ratios, at_least=INTERPRETER_FIRST_OVER_STEADY_AT_LEAST),
    ]
    chart = LineChart(
        title=T("Time of each call of a fresh function (median over copies)",
                "新函数每次调用的耗时（各副本的中位数）"),
        x_label=T("call number", "第几次调用"), y_label=T("seconds", "秒"),
        series=[Series(T("weighted_total(points)", "weighted_total(points)"),
                       list(range(1, CALLS_SHOWN + 1)), median_curve)],
    )
    table = Table(
        title=T("Instructions specialised while running", "运行中被特化的指令"),
        columns=[T("specialised instruction", "特化后的指令")],
        rows=[[name] for name in after],
    )
    return Result(checks=checks, figures=[chart], tables=[table],
                  metrics={"first_over_steady": ratio, "specialised": len(after)})


# ---------------------------------------------------------------- page faults

PAGES = {
    # mode: (label, bytes one fault brings in at least, fresh/reused time ratio at least)
    "small": (T("4 KiB pages (mmap, huge pages off)", "4 KiB 页（mmap，关闭大页）"),
              mmap.PAGESIZE, 2.0),
    "numpy": (T("np.empty as NumPy allocates (may use 2 MiB pages)",
                "NumPy 默认的 np.empty（可能用 2 MiB 大页）"), HUGE_PAGE, 1.15),
}


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def timed_fill(buffer: np.ndarray, value: float) -> tuple[float, int]:
    """Seconds and minor page faults taken by writing ``value`` into every element."""
    faults = minor_faults()
    start = time.perf_counter()
    buffer.fill(value)
    return time.perf_counter() - start, minor_faults() - faults


def fresh_buffer(elements: int, pages: str) -> np.ndarray:
    """A float64 buffer whose pages have never been touched.

    ``"numpy"``: ``np.empty`` (above glibc's largest mmap threshold, 32 MiB, so it is a
    new mapping; NumPy asks for huge pages on large arrays). ``"small"``: an anonymous
    ``mmap`` with huge pages declined (``MADV_NOHUGEPAGE``), so every 4 KiB page faults;
    the array keeps the mapping alive and unmapping happens when the array goes.
    """
    if pages == "numpy":
        return np.empty(elements)
    region = mmap.mmap(-1, elements * 8)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        region.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(region, dtype=np.float64)


@experiment(
    name="first-touch",
    title=T("The first touch of fresh memory faults", "第一次写入新内存会触发缺页"),
    description=T(
        "Writes every element of a freshly allocated buffer, then writes the same buffer "
        "again, counting page faults and time.",
        "先写满一块新分配的缓冲区的每个元素，再把同一块缓冲区写一遍，统计缺页次数和耗时。",
    ),
    params=[
        Param("megabytes", "int", 64, T("buffer size", "缓冲区大小"), unit="MiB",
              minimum=40, maximum=256, step=8),
        Param("pages", "choice", "small", T("allocation", "分配方式"), choices=tuple(PAGES),
              choice_labels=tuple(label for label, _, _ in PAGES.values())),
        Param("repeats", "int", 9, T("fresh buffers", "新缓冲区的个数"), minimum=1,
              maximum=15, step=1),
    ],
    controls=[
        Control("buffer-reused", T("the 'fresh' buffer is one that was already written",
                                   "所谓“新”缓冲区其实已经写过一遍"),
                breaks=("fresh-buffer-faults", "fresh-buffer-slower")),
    ],
    timing=True,
    metrics=[
        Metric(
            "fresh_over_reused",
            T("time: fresh memory / reused memory", "耗时：新内存 / 复用的内存"),
            "×",
        ),
        Metric("fresh_faults", T("page faults, fresh memory", "新内存的缺页次数")),
        Metric("reused_faults", T("page faults, reused memory", "复用内存的缺页次数")),
    ],
)
def first_touch(megabytes: int, pages: str, repeats: int) -> Result:
    size = megabytes * 1024 * 1024
    _, bytes_per_fault, slower_at_least = PAGES[pages]
    reuse_first = control_active("buffer-reused")
    fresh, reused = [], []
    for _ in range(repeats):
        buffer = fresh_buffer(size // 8, pages)
        if reuse_first:
            buffer.fill(0.0)
        fresh.append(timed_fill(buffer, 1.0))
        reused.append(timed_fill(buffer, 2.0))
        del buffer  # unmapped before the next one is made
    fresh_time = statistics.median(t for t, _ in fresh)
    reused_time = statistics.median(t for t, _ in reused)
    fresh_faults = min(f for _, f in fresh)
    reused_faults = max(f for _, f in reused)
    at_least = size // bytes_per_fault
    at_most_again = max(1, at_least // 100)
    ratio = fresh_time / reused_time
    unit = f"{bytes_per_fault // 1024} KiB"
    checks = [
        Check(id="fresh-buffer-faults",
              name=T(f"Writing the fresh {megabytes} MiB buffer faults at least once per {unit} "
                     f"({at_least} faults); writing it again faults at most {at_most_again} "
                     "times",
                     f"写这块新的 {megabytes} MiB 缓冲区时，每 {unit} 至少缺页一次（{at_least} "
                     f"次）；再写一遍时缺页不超过 {at_most_again} 次"),
              passed=fresh_faults >= at_least and reused_faults <= at_most_again,
              measured=T(f"fresh {fresh_faults}, again {reused_faults}",
                         f"新缓冲区 {fresh_faults} 次，再写 {reused_faults} 次"),
              expected=f"≥ {at_least}, ≤ {at_most_again}"),
        timing_check("fresh-buffer-slower",
                     T(f"The first write takes at least {slower_at_least:g}× as long as the "
                       f"second (medians {fresh_time * 1e3:.1f} ms and {reused_time * 1e3:.1f} "
                       f"ms; one ratio per fresh buffer)",
                       f"第一次写入的耗时至少是第二次的 {slower_at_least:g} 倍（中位数分别为 "
                       f"{fresh_time * 1e3:.1f} 毫秒和 {reused_time * 1e3:.1f} 毫秒；"
                       "每块新缓冲区一个比值）"),
                     [f / r for (f, _), (r, _) in zip(fresh, reused, strict=True)],
                     at_least=slower_at_least),
    ]
    table = Table(
        title=T("Each buffer, written twice", "每块缓冲区写两遍"),
        columns=[T("buffer", "缓冲区"), T("first write (ms)", "第一次写入（毫秒）"),
                 T("faults", "缺页次数"), T("second write (ms)", "第二次写入（毫秒）"),
                 T("faults", "缺页次数")],
        rows=[[i + 1, f"{f[0] * 1e3:.2f}", f[1], f"{r[0] * 1e3:.2f}", r[1]]
              for i, (f, r) in enumerate(zip(fresh, reused, strict=True))],
    )
    return Result(checks=checks, tables=[table],
                  metrics={"fresh_over_reused": ratio, "fresh_faults": fresh_faults,
                           "reused_faults": reused_faults})
