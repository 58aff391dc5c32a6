"""Experiment ``standard-tools``: what timeit, pyperf, torch.utils.benchmark, Triton and Google
Benchmark do, read from their own sources and, where importable here, checked by running them.

The table's figures were read from each project's source (the file is named in the
table). The two tools importable in this environment are run with a *fake* timer -- a
clock that only moves when the timed statement says so -- so their loop counts and
stopping points can be checked exactly against the figures the table states:

* ``timeit.Timer.autorange`` (standard library): stops at the first of 1, 2, 5, 10,
  20, 50, ... loops whose run takes at least 0.2 s; ``repeat`` defaults to 5;
* ``torch.utils.benchmark.Timer.blocked_autorange``: keeps timing blocks until they add
  up to ``min_run_time`` = 0.2 s; a ``Measurement`` warns when IQR / median is 10% or
  more; and whylab's noise figure equals torch's ``iqr / median`` on the same samples.

pyperf, Triton and Google Benchmark are not installed here; their rows are cited facts,
not checks. No wall clock is read, so this experiment is not a timing experiment.
"""

from __future__ import annotations

import importlib.util
import inspect
import statistics
import timeit

import numpy as np

from whylab.bench import relative_iqr
from whylab.explorer.experiment import (
    Check,
    Control,
    Result,
    T,
    Table,
    control_active,
    experiment,
)

# The figures the table states (read from the sources named in SOURCES).
STATED = {"timeit_target_s": 0.2, "timeit_repeat": 5, "torch_min_run_time_s": 0.2,
          "torch_warn_iqr_over_median": 0.1}
MISREAD = {"timeit_target_s": 0.1, "timeit_repeat": 3, "torch_min_run_time_s": 0.1,
           "torch_warn_iqr_over_median": 0.05}
STEP_S = 0.001  # the fake statement's cost


class FakeClock:
    """A clock that advances only when :meth:`work` is called."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def work(self) -> None:
        self.now += STEP_S


def one_two_five_target(cost_s: float, target_s: float) -> int:
    """The loop count timeit's documented rule picks: first of 1, 2, 5, 10, ... reaching target."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if scale * step * cost_s >= target_s:
                return scale * step
        scale *= 10


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def not_applicable_without_torch(check_id: str, name: T, expected: str) -> Check:
    return Check.not_applicable(id=check_id, name=name, expected=expected,
                                why=T("needs torch installed", "需要安装 torch"))


def std_over_mean(values: list[float]) -> float:
    """The control's wrong noise figure: standard deviation over mean."""
    return statistics.stdev(values) / statistics.fmean(values)


@experiment(
    name="standard-tools",
    title=T("What the standard tools do", "标准工具各自怎么做"),
    description=T(
        "Sets the rules of five benchmarking tools side by side, as read from their sources, "
        "and runs the two importable here (timeit, torch.utils.benchmark) on a fake clock to "
        "check the figures.",
        "把五个基准测试工具的规则并排列出（均读自其源码），并在假时钟上运行此处可导入的两个"
        "（timeit、torch.utils.benchmark）来核对这些数字。",
    ),
    controls=[
        Control("figures-misread",
                T("the table's figures were misread (0.1 s targets, 3 repeats, a 5% warning)",
                  "表中的数字读错了（目标 0.1 秒、重复 3 次、5% 报警）"),
                breaks=("timeit-autorange-target", "timeit-default-repeat",
                        "torch-blocked-min-run-time", "torch-warns-at-10-percent")),
        Control("noise-as-std-over-mean",
                T("whylab's noise figure is std / mean instead of IQR / median",
                  "whylab 的噪声指标用了 标准差 / 均值，而不是 IQR / 中位数"),
                breaks=("noise-figure-matches-torch",)),
    ],
)
def standard_tools() -> Result:
    stated = MISREAD if control_active("figures-misread") else STATED
    noise = std_over_mean if control_active("noise-as-std-over-mean") else relative_iqr

    clock = FakeClock()
    loops, taken = timeit.Timer(stmt=clock.work, timer=clock).autorange()
    expected_loops = one_two_five_target(STEP_S, stated["timeit_target_s"])
    repeat_default = inspect.signature(timeit.Timer.repeat).parameters["repeat"].default
    checks = [
        Check(id="timeit-autorange-target",
              name=T(f"timeit's autorange stops at the first 1-2-5 loop count lasting ≥ "
                     f"{stated['timeit_target_s']:g} s (a 1 ms statement: {expected_loops} loops)",
                     f"timeit 的 autorange 停在第一个耗时 ≥ {stated['timeit_target_s']:g} 秒的 "
                     f"1-2-5 循环次数（1 毫秒的语句：{expected_loops} 次）"),
              passed=loops == expected_loops,
              measured=T(f"{loops} loops, {taken:.3f} s", f"{loops} 次，{taken:.3f} 秒"),
              expected=f"{expected_loops}"),
        Check(id="timeit-default-repeat",
              name=T(f"timeit.Timer.repeat takes the best of {stated['timeit_repeat']} by "
                     "default (default_repeat)",
                     f"timeit.Timer.repeat 默认重复 {stated['timeit_repeat']} 次"
                     "（default_repeat）"),
              passed=repeat_default == timeit.default_repeat == stated["timeit_repeat"],
              measured=T(f"repeat={repeat_default}, default_repeat={timeit.default_repeat}",
                         f"Timer.repeat 的默认值 {repeat_default}，default_repeat = "
                         f"{timeit.default_repeat}"),
              expected=f"{stated['timeit_repeat']}"),
    ]

    samples = list(np.random.default_rng(7).lognormal(mean=0.0, sigma=0.08, size=41))
    names = {
        "torch-blocked-min-run-time": T(
            f"torch's blocked_autorange times blocks until they add up to "
            f"{stated['torch_min_run_time_s']:g} s (its min_run_time)",
            f"torch 的 blocked_autorange 一直计时，直到各块总时长达到 "
            f"{stated['torch_min_run_time_s']:g} 秒（min_run_time）"),
        "torch-warns-at-10-percent": T(
            f"torch's Measurement warns when IQR / median ≥ "
            f"{stated['torch_warn_iqr_over_median']:.0%}, and not below",
            f"torch 的 Measurement 在 IQR / 中位数 ≥ {stated['torch_warn_iqr_over_median']:.0%} "
            "时报警，低于时不报"),
        "noise-figure-matches-torch": T(
            "whylab's noise figure equals torch's iqr / median on the same 41 samples",
            "在同样 41 个样本上，whylab 的噪声指标等于 torch 的 iqr / median"),
    }
    if torch_available():
        from torch.utils.benchmark import Timer
        from torch.utils.benchmark.utils.common import Measurement, TaskSpec

        torch_clock = FakeClock()
        measured = Timer(stmt="work()", globals={"work": torch_clock.work},
                         timer=torch_clock).blocked_autorange()
        total = sum(measured.raw_times)
        block = measured.number_per_run * STEP_S
        target = stated["torch_min_run_time_s"]
        spec = TaskSpec(stmt="pass", setup="pass")

        def warns(iqr_over_median: float) -> bool:
            # quartiles of [1 - h, 1 - h/2, 1, 1 + h/2, 1 + h] are 1 ∓ h/2: IQR/median = h
            spread = [1 - iqr_over_median, 1 - iqr_over_median / 2, 1.0,
                      1 + iqr_over_median / 2, 1 + iqr_over_median]
            return Measurement(number_per_run=1, raw_times=spread, task_spec=spec).has_warnings

        limit = stated["torch_warn_iqr_over_median"]
        below, above = warns(limit * 0.98), warns(limit * 1.02)
        torch_noise = Measurement(number_per_run=1, raw_times=samples, task_spec=spec)
        theirs = torch_noise.iqr / torch_noise.median
        ours = noise(samples)
        checks += [
            Check(id="torch-blocked-min-run-time", name=names["torch-blocked-min-run-time"],
                  passed=target <= total < target + block,
                  measured=T(f"{len(measured.raw_times)} blocks of {measured.number_per_run}, "
                             f"{total:.3f} s in all",
                             f"{len(measured.raw_times)} 块，每块 {measured.number_per_run} 次，"
                             f"共 {total:.3f} 秒"),
                  expected=T(f"[{target:g}, {target:g} + 1 block)",
                             f"[{target:g}, {target:g} + 1 块)")),
            Check(id="torch-warns-at-10-percent", name=names["torch-warns-at-10-percent"],
                  passed=above and not below,
                  measured=T(f"at {limit * 0.98:.1%}: {'warns' if below else 'silent'}; "
                             f"at {limit * 1.02:.1%}: {'warns' if above else 'silent'}",
                             f"{limit * 0.98:.1%} 时：{'报警' if below else '不报'}；"
                             f"{limit * 1.02:.1%} 时：{'报警' if above else '不报'}"),
                  expected=T("silent below, warns above", "低于时不报，高于时报警")),
            Check(id="noise-figure-matches-torch", name=names["noise-figure-matches-torch"],
                  passed=abs(ours - theirs) <= 1e-12 * theirs,
                  measured=f"{ours:.6f} vs {theirs:.6f}",
                  expected=T("|Δ| ≤ 1e-12 relative", "相对差 |Δ| ≤ 1e-12")),
        ]
    else:
        checks += [not_applicable_without_torch("torch-blocked-min-run-time",
                                                names["torch-blocked-min-run-time"], "0.2 s"),
                   not_applicable_without_torch("torch-warns-at-10-percent",
                                                names["torch-warns-at-10-percent"], "10%"),
                   not_applicable_without_torch("noise-figure-matches-torch",
                                                names["noise-figure-matches-torch"], "equal")]
    return Result(checks=checks, tables=[TOOLS_TABLE],
                  notes=[T("The rows for pyperf, Triton and Google Benchmark are read from their "
                           "sources, not run: those tools are not installed here.",
                           "pyperf、Triton 和 Google Benchmark 这三行读自源码，并未运行："
                           "这里没有安装这些工具。")])


TOOLS_TABLE = Table(
    title=T("Five benchmarking tools, side by side", "五个基准测试工具并排对比"),
    columns=[T("tool", "工具"), T("how many calls per sample", "每个样本调用多少次"),
             T("samples and repeats", "样本与重复"), T("what it reports", "报告什么"),
             T("read from", "出处")],
    rows=[
        ["timeit",
         T("autorange(): 1, 2, 5, 10, 20, 50, … loops until one run takes ≥ 0.2 s",
           "autorange()：1、2、5、10、20、50……次循环，直到一次运行 ≥ 0.2 秒"),
         T("repeat = 5 runs (default_repeat)", "重复 5 次（default_repeat）"),
         T("the command line prints the best (minimum) of the repeats",
           "命令行输出各次重复中最好（最小）的一次"),
         "python/cpython Lib/timeit.py"],
        ["pyperf",
         T("loops doubled until one value takes ≥ min_time = 0.1 s (calibrated in a first "
           "worker process)",
           "循环次数不断加倍，直到一个值耗时 ≥ min_time = 0.1 秒（在第一个工作进程中校准）"),
         T("20 worker processes × 3 values, 1 warm-up value each (no JIT)",
           "20 个工作进程 × 每个 3 个值，各有 1 个预热值（无 JIT 时）"),
         T("mean ± standard deviation", "均值 ± 标准差"),
         "psf/pyperf pyperf/_runner.py, _worker.py, _cli.py"],
        ["torch.utils.benchmark",
         T("blocked_autorange: block size ×10 until the timer's overhead is ≤ 1e-4 of a block",
           "blocked_autorange：块大小每次乘 10，直到计时器开销 ≤ 块时长的 1e-4"),
         T("blocks until min_run_time = 0.2 s; adaptive_autorange: until IQR/median < 0.1 "
           "(≥ 4 blocks, 0.01–10 s)",
           "一直取块直到 min_run_time = 0.2 秒；adaptive_autorange：直到 IQR/中位数 < 0.1"
           "（至少 4 块，0.01–10 秒）"),
         T("median and IQR; warns at IQR/median ≥ 10% (≥ 25%: \"significant environmental "
           "influence\")", "中位数与 IQR；IQR/中位数 ≥ 10% 时报警（≥ 25%：“显著的环境影响”）"),
         "pytorch/pytorch torch/utils/benchmark/utils/timer.py, common.py"],
        ["triton.testing.do_bench",
         T("one call per sample, timed with CUDA events on the stream; as many calls as fit "
           "in rep = 100 ms (after warmup = 25 ms)",
           "每个样本一次调用，用流上的 CUDA 事件计时；调用次数为 rep = 100 毫秒内能放下的次数"
           "（先预热 25 毫秒）"),
         T("before every call it zeroes a 256 MB buffer so L2 holds none of the inputs",
           "每次调用前把一块 256 MB 的缓冲区清零，使 L2 中不留任何输入"),
         T("the mean by default (return_mode), or chosen quantiles",
           "默认返回均值（return_mode），也可返回指定分位数"),
         "triton-lang/triton python/triton/testing.py"],
        ["Google Benchmark",
         T("iterations grown (×min_time·1.4/elapsed, at most ×10 from a short run) until a run "
           "lasts ≥ min_time = 0.5 s",
           "迭代次数按 min_time·1.4/实际耗时 增长（从很短的一次运行出发时最多 ×10），"
           "直到一次运行 ≥ min_time = 0.5 秒"),
         T("benchmark_repetitions = 1 by default; random interleaving of repetitions is an "
           "option (off)",
           "默认 benchmark_repetitions = 1；可以选择随机交错各次重复（默认关闭）"),
         T("with benchmark_repetitions > 1: mean, median, stddev and cv of the repetitions",
           "benchmark_repetitions > 1 时：各次重复的均值、中位数、标准差和变异系数"),
         "google/benchmark src/benchmark.cc, src/benchmark_runner.cc, "
         "include/benchmark/benchmark_api.h"],
    ],
)
