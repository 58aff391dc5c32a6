"""Experiment ``repeated-samples``: the distribution of per-call times, and how to summarise it.

Many short blocks of one small operation give a sample of per-call times. Its shape
is what a summary must survive: a floor (the cost of the code itself) and a tail to
the right (interrupts, other tenants, cache misses only ever add time). The
experiment draws the histogram, compares median and quartiles with mean and standard
deviation, flags outliers by Tukey's rule (beyond Q3 + 1.5·IQR), and runs
:func:`whylab.bench.adaptive_autorange`, which samples until IQR / median is below a
threshold, checking its stopping rule with ``numpy.percentile``.
"""

from __future__ import annotations

import statistics

import numpy as np

from whylab.bench import Quartiles, adaptive_autorange, autorange, quartiles, time_calls, warm_up
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
from whylab.topics.benchmarking.timer_experiment import summing

QUARTILE_RTOL = 1e-12
SUMMARY_MOVES_AT_MOST = 0.005
SLOWEST_SHARE = 0.05  # the slowest 5% of samples, doubled, as a burst of interrupts would
BINS = 30
ADAPTIVE = {"threshold": 0.1, "block_s": 0.002, "min_run_time": 0.01, "max_run_time": 0.5}


def nearest_rank_quartiles(values: list[float]) -> Quartiles:
    """The control's wrong quartiles: order statistics at rank round(p·n), no interpolation."""
    ordered = sorted(values)
    at = [ordered[min(len(ordered) - 1, round(p * len(ordered)))] for p in (0.25, 0.5, 0.75)]
    return Quartiles(*at)


def stop_rule_holds(samples: list[float], calls: int, stopped: str) -> bool:
    """Whether an adaptive run stopped exactly where its rule says, judged by numpy.percentile.

    Converged: the samples (>= 4 of them, >= min_run_time in all) have IQR/median below
    the threshold, and no shorter prefix satisfied all of that. Gave up: the samples add
    up to more than max_run_time, the run without its last block did not, and no prefix
    ever met the threshold.
    """
    def meets(prefix: list[float]) -> bool:
        q1, median, q3 = np.percentile(prefix, [25, 50, 75])
        return (len(prefix) >= 4 and sum(prefix) * calls >= ADAPTIVE["min_run_time"]
                and (q3 - q1) / median < ADAPTIVE["threshold"])

    earlier = [meets(samples[:n]) for n in range(1, len(samples))]
    if stopped == "converged":
        return meets(samples) and not any(earlier)
    total = sum(samples) * calls
    before = sum(samples[:-1]) * calls
    return total > ADAPTIVE["max_run_time"] >= before and not any(earlier) and not meets(samples)


@experiment(
    name="repeated-samples",
    title=T("Many samples: a floor and a tail", "大量样本：一个下限和一条长尾"),
    description=T(
        "Times many short blocks of a small operation, draws the distribution of the "
        "per-call times, compares median and quartiles with mean and standard deviation, and "
        "samples adaptively until IQR / median is below 10%.",
        "对一个小操作的大量短计时块计时，画出每次调用耗时的分布，把中位数与四分位数同均值与"
        "标准差对比，并自适应地采样直到 IQR / 中位数低于 10%。",
    ),
    params=[
        Param("samples", "int", 400, T("samples (timed blocks)", "样本数（计时块数）"),
              minimum=50, maximum=2000, step=50),
        Param("block_us", "int", 200, T("length of one block", "每个计时块的时长"), unit="µs",
              minimum=20, maximum=2000, step=10),
    ],
    controls=[
        Control("quartiles-nearest-rank",
                T("the quartiles are read off by nearest rank instead of interpolated",
                  "四分位数按最近秩直接取值，而不是插值"),
                breaks=("quartiles-match-numpy",)),
        Control("mirrored-samples",
                T("the samples are mirrored around their median, as if noise were symmetric",
                  "样本围绕中位数做了镜像，好像噪声是对称的"),
                breaks=("slow-tail-longer",)),
        Control("mean-as-summary", T("the summary is the mean instead of the median",
                                     "用均值代替中位数作为概括"),
                breaks=("median-resists-outliers",)),
        Control("last-block-dropped",
                T("the adaptive run's last block is lost before it is reported",
                  "自适应采样的最后一个块在报告前丢失了"),
                breaks=("adaptive-stop-rule",)),
    ],
    timing=True,
    metrics=[
        Metric("median_ns", T("median", "中位数"), "ns"),
        Metric("mean_ns", T("mean", "均值"), "ns"),
        Metric("relative_iqr", T("IQR / median", "IQR / 中位数")),
        Metric("std_over_mean", T("standard deviation / mean", "标准差 / 均值")),
        Metric("outliers", T("outliers (> Q3 + 1.5·IQR)", "离群值个数（> Q3 + 1.5·IQR）")),
        Metric(
            "adaptive_blocks",
            T("blocks adaptive_autorange() took", "adaptive_autorange() 取的块数"),
        ),
    ],
)
def repeated_samples(samples: int, block_us: int) -> Result:
    op = summing(150)
    warm_up(op, 100)
    calls, _ = autorange(op, block_us * 1e-6)
    times = [time_calls(op, calls) for _ in range(samples)]
    if control_active("mirrored-samples"):
        middle = statistics.median(times)
        times = [2 * middle - t for t in times]

    q = nearest_rank_quartiles(times) if control_active("quartiles-nearest-rank") else quartiles(
        times)
    reference = np.percentile(times, [25, 50, 75])
    quartile_error = float(np.max(np.abs(np.array(q) - reference) / reference[1]))
    mean, std = statistics.fmean(times), statistics.stdev(times)
    fastest, slowest = min(times), max(times)
    fence = q.q3 + 1.5 * q.iqr
    outliers = [t for t in times if t > fence]

    # A burst of interrupts: the slowest 5% of the samples take twice as long.
    ordered = sorted(times)
    hit = max(1, int(SLOWEST_SHARE * len(ordered)))
    burst = ordered[:-hit] + [2 * t for t in ordered[-hit:]]

    def summary(values: list[float]) -> float:
        if control_active("mean-as-summary"):
            return statistics.fmean(values)
        return quartiles(values).median

    moved = abs(summary(burst) - summary(times)) / summary(times)
    mean_moved = abs(statistics.fmean(burst) - mean) / mean

    run = adaptive_autorange(op, **ADAPTIVE)
    reported = run.samples[:-1] if control_active("last-block-dropped") else run.samples
    reported_noise = quartiles(reported).relative_iqr

    checks = [
        Check(id="quartiles-match-numpy",
              name=T("The quartiles whylab.bench reports are numpy.percentile's (25, 50, 75)",
                     "whylab.bench 给出的四分位数与 numpy.percentile 的 25、50、75 分位一致"),
              passed=quartile_error <= QUARTILE_RTOL,
              measured=T(f"largest difference {quartile_error:.1e} of the median",
                         f"最大差为中位数的 {quartile_error:.1e}"),
              expected=f"≤ {QUARTILE_RTOL:.0e}"),
        Check(id="slow-tail-longer",
              name=T("The slowest sample lies farther above the median than the fastest lies "
                     "below it: noise only adds time",
                     "最慢的样本高出中位数的距离，大于最快的样本低于中位数的距离：噪声只会增加耗时"),
              passed=slowest - q.median > q.median - fastest,
              measured=T(f"+{(slowest - q.median) * 1e9:.0f} ns against "
                         f"−{(q.median - fastest) * 1e9:.0f} ns",
                         f"+{(slowest - q.median) * 1e9:.0f} 纳秒，对比 "
                         f"−{(q.median - fastest) * 1e9:.0f} 纳秒"),
              expected=T("max − median > median − min", "最大值 − 中位数 > 中位数 − 最小值")),
        Check(id="median-resists-outliers",
              name=T(f"Doubling the slowest {SLOWEST_SHARE:.0%} of the samples moves the "
                     f"summary (the median) by less than {SUMMARY_MOVES_AT_MOST:.1%}; the mean "
                     f"moves {mean_moved:.1%}",
                     f"把最慢的 {SLOWEST_SHARE:.0%} 样本耗时加倍，概括值（中位数）的变化小于 "
                     f"{SUMMARY_MOVES_AT_MOST:.1%}；均值变化了 {mean_moved:.1%}"),
              passed=moved < SUMMARY_MOVES_AT_MOST,
              measured=f"{moved:.2%}",
              expected=f"< {SUMMARY_MOVES_AT_MOST:.1%}"),
        Check(id="adaptive-stop-rule",
              name=T(f"adaptive_autorange stopped at the first block where IQR/median < "
                     f"{ADAPTIVE['threshold']:.0%} (with ≥ 4 blocks and ≥ "
                     f"{ADAPTIVE['min_run_time'] * 1e3:g} ms), or at its "
                     f"{ADAPTIVE['max_run_time']:g} s limit, as numpy.percentile judges it",
                     f"按 numpy.percentile 判断，adaptive_autorange 恰好停在 IQR/中位数首次低于 "
                     f"{ADAPTIVE['threshold']:.0%} 的块（至少 4 块、至少 "
                     f"{ADAPTIVE['min_run_time'] * 1e3:g} 毫秒），或停在 "
                     f"{ADAPTIVE['max_run_time']:g} 秒的上限"),
              passed=stop_rule_holds(reported, run.calls, run.stopped),
              measured=T(f"{len(reported)} blocks, IQR/median {reported_noise:.1%}, "
                         f"{run.stopped.replace('_', ' ')}",
                         f"{len(reported)} 块，IQR/中位数 {reported_noise:.1%}，"
                         + ("已收敛" if run.stopped == "converged" else "到达时间上限")),
              expected=T("the rule's stopping block", "规则规定的停止块")),
    ]

    edges = np.linspace(fastest, min(slowest, fence + 2 * q.iqr), BINS + 1)
    counts, _ = np.histogram(np.clip(times, edges[0], edges[-1]), bins=edges)
    centres = (edges[:-1] + edges[1:]) / 2
    chart = LineChart(
        title=T("Per-call times: counts per bin", "每次调用耗时：各区间的样本数"),
        x_label=T("seconds per call (the last bin holds everything slower)",
                  "每次调用的秒数（最后一个区间收纳所有更慢的样本）"),
        y_label=T("samples", "样本数"),
        series=[Series(T(f"{samples} blocks of {calls} calls",
                         f"{samples} 个块，每块 {calls} 次调用"),
                       [float(c) for c in centres], [int(c) for c in counts])],
    )
    table = Table(
        title=T("Two ways to summarise the same samples", "同一组样本的两种概括"),
        columns=[T("statistic", "统计量"), T("value (ns per call)", "数值（每次调用，纳秒）")],
        rows=[
            [T("median [Q1, Q3]", "中位数 [Q1, Q3]"),
             Quartiles(q.q1 * 1e9, q.median * 1e9, q.q3 * 1e9).format(".1f")],
            [T("IQR / median (noise figure)", "IQR / 中位数（噪声指标）"), f"{q.relative_iqr:.2%}"],
            [T("mean ± standard deviation", "均值 ± 标准差"),
             f"{mean * 1e9:.1f} ± {std * 1e9:.1f}"],
            [T("std / mean", "标准差 / 均值"), f"{std / mean:.2%}"],
            [T("fastest, slowest", "最快，最慢"), f"{fastest * 1e9:.1f}, {slowest * 1e9:.1f}"],
            [T("outliers (> Q3 + 1.5·IQR)", "离群值（> Q3 + 1.5·IQR）"),
             T(f"{len(outliers)} of {samples}", f"{samples} 个中有 {len(outliers)} 个")],
            [T("adaptive_autorange", "adaptive_autorange"),
             T(f"{len(run.samples)} blocks of {run.calls}: "
               f"{run.quartiles.median * 1e9:.1f} ns, noise {run.noise:.1%}",
               f"{len(run.samples)} 块，每块 {run.calls} 次："
               f"{run.quartiles.median * 1e9:.1f} 纳秒，噪声 {run.noise:.1%}")],
        ],
    )
    return Result(checks=checks, figures=[chart], tables=[table],
                  metrics={"median_ns": q.median * 1e9, "mean_ns": mean * 1e9,
                           "relative_iqr": q.relative_iqr, "std_over_mean": std / mean,
                           "outliers": len(outliers), "adaptive_blocks": len(run.samples)})
