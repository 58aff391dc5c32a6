"""The cost-growth experiment: time and counted arithmetic of the DFT and the FFT against n.

The timing checks claim only what separates the growth laws on a loaded
machine: the DFT's fitted exponent is nearer 2 than 1.5; the FFT's time per
n·log₂ n stays flat over a range where an n^1.5 algorithm's would grow about
twofold; the DFT is many times slower at n = 1024; and most of the DFT's time
is the n² exponentials it evaluates per call. Each size is timed in
interleaved rounds; each round gives one value of each claim's quantity, and a
claim is decided on the confidence interval of their median
(:func:`whylab.topics.shared.timing_check`). The chart shows the fastest round.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from whylab.bench import fastest_per_call
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
from whylab.numerics.fft import OperationCount, dft, dft_matrix, dft_two_factor, fft
from whylab.topics.fft.checks import (
    count_check,
    growth_over_range,
    n_log_n,
    n_to_the_1_5_over_n_log_n,
)
from whylab.topics.fft.signals import make_signal
from whylab.topics.fft.under_test import (
    DFT_BY_FFT,
    ONLY_BIT_REVERSAL,
    control,
    plan_under_test,
    reference_dft,
)
from whylab.topics.shared import growth_exponent, timing_check

SMALLEST_LOG2N = 6
DFT_MAX_LOG2N = 10  # the O(n²) DFT is timed up to n = 1024 (tens of ms per call)
DFT_FIT_MIN_LOG2N = 7
FFT_FIT_MIN_LOG2N = 12  # below ~4096 points the fixed cost of each stage hides the growth
DFT_EXPONENT_AT_LEAST = 1.75  # nearer 2 than 1.5
DFT_SLOWER_AT_LEAST = 10.0
EXPONENTIALS_SHARE_AT_LEAST = 3.0
N_TO_THE_1_5_FOR_FFT = "n-to-the-1-5-for-fft"
N_TO_THE_1_5_FOR_DFT = "n-to-the-1-5-for-dft"
DFT_MATRIX_CACHED = "dft-matrix-cached"


def seconds_per_call(func: Callable[[np.ndarray], object], x: np.ndarray,
                     budget_s: float = 0.001, repeats: int = 7) -> float:
    """Time of one call: the fastest of ``repeats`` loops, each lasting about ``budget_s``.

    On a shared machine other work can only add time, never remove it, so the
    fastest loop is the most stable estimate of what the code itself costs. The
    loops are short and many: when the cores are oversubscribed, a loop longer
    than the scheduler's time slice is almost always interrupted, so only short
    loops give a large n an even chance of one clean measurement.
    """
    return fastest_per_call(partial(func, x), budget_s, repeats, max_calls=1 << 14)


def fft_slot(n: int) -> Callable[[np.ndarray], object]:
    """What is timed as "the FFT" at length n (under its control, an O(n^1.5) algorithm)."""
    if control_active(N_TO_THE_1_5_FOR_FFT):
        return dft_two_factor
    return partial(fft, plan=plan_under_test(n))


def dft_slot(n: int) -> Callable[[np.ndarray], object]:
    """What is timed as "the DFT": the direct sum, recomputing its matrix on every call."""
    if control_active(N_TO_THE_1_5_FOR_DFT):
        return dft_two_factor
    if control_active(DFT_MATRIX_CACHED):
        return partial(dft, matrix=dft_matrix(n))
    return dft


@experiment(
    name="cost-growth",
    title=T("How the cost grows with n", "运算量随 n 的增长"),
    description=T(
        "Times the O(n²) DFT, the iterative radix-2 FFT and numpy.fft.fft across n on this "
        "machine, tests the growth laws, and counts the operations each does.",
        "在本机上对 O(n²) 的 DFT、迭代版基 2 FFT 和 numpy.fft.fft 在不同 n 下计时，"
        "检验增长规律，并统计各自的运算次数。",
    ),
    params=[
        # At least 14, so time/(n log n) is judged over 4096 ... 16384 or more, a range in
        # which an n^1.5 algorithm's would grow by 1.7x or more.
        Param("max_log2n", "int", 15, T("largest log₂ n for the FFTs", "FFT 的最大 log₂ n"),
              minimum=14, maximum=16, step=1),
        Param("rounds", "int", 9, T("timing rounds (interleaved)", "计时轮数（交替进行）"),
              minimum=1, maximum=15, step=1),
    ],
    timing=True,
    controls=[
        Control(N_TO_THE_1_5_FOR_FFT,
                T("an O(n√n) algorithm (one even split into √n × √n direct DFTs) is timed "
                  "in place of the FFT",
                  "计时的不是 FFT，而是一个 O(n√n) 的算法（只拆一次，分成 √n × √n 个直接 DFT）"),
                breaks=("fft-time-per-n-log-n-flat",)),
        Control(N_TO_THE_1_5_FOR_DFT,
                T("an O(n√n) algorithm is timed in place of the O(n²) DFT",
                  "计时的不是 O(n²) 的 DFT，而是一个 O(n√n) 的算法"),
                breaks=("dft-time-grows-like-n-squared", "dft-slower-than-fft")),
        Control(DFT_MATRIX_CACHED,
                T("the DFT reuses a precomputed matrix instead of evaluating its n² "
                  "exponentials on every call",
                  "DFT 复用预先算好的矩阵，不再每次调用都计算 n² 个复指数"),
                breaks=("dft-time-is-exponentials",)),
        control(ONLY_BIT_REVERSAL, ("fft-butterflies-every-n",)),
        control(DFT_BY_FFT, ("dft-multiplies-every-n",)),
    ],
    metrics=[
        Metric(
            "dft_exponent",
            T("DFT time grows as nᵖ: exponent p", "DFT 耗时按 nᵖ 增长：指数 p"),
        ),
        Metric(
            "fft_time_per_n_log_n_growth",
            T(
                "FFT time per n·log₂ n, largest n / smallest n fitted",
                "FFT 每 n·log₂ n 的耗时：拟合范围内最大 n 与最小 n 之比",
            ),
            "×",
        ),
        Metric(
            "largest_dft_n",
            T(
                "largest n the DFT is timed at (the three ratios below)",
                "DFT 计时的最大 n（下面三个比值所在的 n）",
            ),
        ),
        Metric("dft_over_fft_time", T("time: DFT / FFT", "耗时：DFT / FFT"), "×"),
        Metric(
            "dft_over_fft_multiplies",
            T("complex multiplies: DFT / FFT", "复数乘法次数：DFT / FFT"),
            "×",
        ),
        Metric(
            "dft_over_dft_with_cached_matrix",
            T("time: DFT / DFT with its matrix precomputed", "耗时：DFT / 预先算好矩阵的 DFT"),
            "×",
        ),
        Metric("largest_n", T("largest n timed", "计时的最大 n")),
        Metric(
            "fft_over_numpy",
            T(
                "time at the largest n: this page's FFT / numpy.fft.fft",
                "最大 n 处的耗时：本页 FFT / numpy.fft.fft",
            ),
            "×",
        ),
    ],
)
def cost_growth(max_log2n: int, rounds: int) -> Result:
    fft_sizes = [2**k for k in range(SMALLEST_LOG2N, max_log2n + 1)]
    dft_sizes = [n for n in fft_sizes if n <= 2**DFT_MAX_LOG2N]
    largest_common = dft_sizes[-1]
    methods = {"numpy": lambda n: np.fft.fft, "fft": fft_slot, "dft": dft_slot}
    signals = {n: make_signal(n, "random", seed=n) for n in fft_sizes}
    funcs = {m: {n: make(n) for n in (dft_sizes if m == "dft" else fft_sizes)}
             for m, make in methods.items()}
    cached = partial(dft, matrix=dft_matrix(largest_common))
    samples: dict[str, dict[int, list[float]]] = {m: {n: [] for n in funcs[m]} for m in funcs}
    cached_samples = []
    # Interleaved rounds: a slow spell of the machine affects every method alike.
    for _ in range(rounds):
        for n in fft_sizes:
            for method in methods:
                if n in funcs[method]:
                    samples[method][n].append(seconds_per_call(funcs[method][n], signals[n]))
        cached_samples.append(seconds_per_call(cached, signals[largest_common]))
    best = {m: {n: min(v) for n, v in per_n.items()} for m, per_n in samples.items()}

    fft_fit = [n for n in fft_sizes if n >= 2**FFT_FIT_MIN_LOG2N]
    dft_fit = [n for n in dft_sizes if n >= 2**DFT_FIT_MIN_LOG2N]
    fft_growth = growth_over_range(fft_fit, [best["fft"][n] for n in fft_fit], n_log_n)
    n15_growth = n_to_the_1_5_over_n_log_n(fft_fit[0], fft_fit[-1])
    flat_bound = math.sqrt(n15_growth)  # halfway, on a log scale, between flat and n^1.5
    dft_exponent = growth_exponent(dft_fit, [best["dft"][n] for n in dft_fit])
    slowdown = best["dft"][largest_common] / best["fft"][largest_common]
    exponentials_share = best["dft"][largest_common] / min(cached_samples)
    # The checks are decided per round: each round's times give one exponent, one growth
    # and one ratio, and the confidence interval of their median decides each claim.
    per_round = range(rounds)
    round_exponents = [growth_exponent(dft_fit, [samples["dft"][n][r] for n in dft_fit])
                       for r in per_round]
    round_growths = [growth_over_range(fft_fit, [samples["fft"][n][r] for n in fft_fit], n_log_n)
                     for r in per_round]
    round_slowdowns = [samples["dft"][largest_common][r] / samples["fft"][largest_common][r]
                       for r in per_round]
    round_shares = [samples["dft"][largest_common][r] / cached_samples[r] for r in per_round]

    butterflies, dft_multiplies = [], []
    for n in fft_sizes:
        count = OperationCount()
        fft(np.zeros(n), count, plan_under_test(n))
        butterflies.append(count.butterflies)
    for n in dft_sizes:
        count = OperationCount()
        reference_dft(np.zeros(n, dtype=complex), count)
        dft_multiplies.append(count.complex_multiplies)
    multiply_ratio = (largest_common**2) / (largest_common // 2 * int(math.log2(largest_common)))

    checks = [
        count_check("fft-butterflies-every-n",
                    T("Butterflies counted in the FFT = (n/2)·log₂ n at every n",
                      "在每个 n 上 FFT 统计到的蝶形运算次数都等于 (n/2)·log₂ n"),
                    butterflies, [n // 2 * int(math.log2(n)) for n in fft_sizes], fft_sizes),
        count_check("dft-multiplies-every-n",
                    T("Complex products formed by the DFT = n² at every n",
                      "在每个 n 上 DFT 算出的复数乘积个数都等于 n²"),
                    dft_multiplies, [n * n for n in dft_sizes], dft_sizes),
        timing_check("dft-time-grows-like-n-squared",
                       T(f"DFT time grows like n²: the exponent fitted over n = {dft_fit[0]}–"
                         f"{dft_fit[-1]} is nearer 2 than 1.5 (at least "
                         f"{DFT_EXPONENT_AT_LEAST})",
                         f"DFT 耗时按 n² 增长：在 n = {dft_fit[0]}–{dft_fit[-1]} 上拟合的指数"
                         f"离 2 比离 1.5 更近（不小于 {DFT_EXPONENT_AT_LEAST}）"),
                     round_exponents, at_least=DFT_EXPONENT_AT_LEAST, unit=""),
        timing_check("fft-time-per-n-log-n-flat",
                          T(f"FFT time grows like n·log₂ n, not n√n: over n = {fft_fit[0]}–"
                            f"{fft_fit[-1]}, time/(n·log₂ n) grows at most {flat_bound:.2f}× "
                            f"(an n√n algorithm's would grow {n15_growth:.2f}×)",
                            f"FFT 耗时按 n·log₂ n 增长而不是 n√n：在 n = {fft_fit[0]}–"
                            f"{fft_fit[-1]} 上，时间/(n·log₂ n) 至多增长为 {flat_bound:.2f} 倍"
                            f"（n√n 的算法会增长为 {n15_growth:.2f} 倍）"),
                     round_growths, at_most=round(flat_bound, 2)),
        timing_check("dft-slower-than-fft",
                    T(f"At n = {largest_common} the DFT takes at least {DFT_SLOWER_AT_LEAST:g}× "
                      "as long as the FFT",
                      f"n = {largest_common} 时 DFT 的耗时至少是 FFT 的 "
                      f"{DFT_SLOWER_AT_LEAST:g} 倍"),
                    round_slowdowns, at_least=DFT_SLOWER_AT_LEAST, number_format=".3g"),
        timing_check("dft-time-is-exponentials",
                    T(f"Most of the DFT's time is its n² exponentials: at n = {largest_common}, "
                      f"with the matrix precomputed it runs at least "
                      f"{EXPONENTIALS_SHARE_AT_LEAST:g}× faster",
                      f"DFT 的大部分时间花在 n² 个复指数上：n = {largest_common} 时，"
                      f"预先算好矩阵后耗时不到原来的 1/{EXPONENTIALS_SHARE_AT_LEAST:g}"),
                    round_shares, at_least=EXPONENTIALS_SHARE_AT_LEAST,
                    number_format=".3g"),
    ]
    names = {"numpy": T("numpy.fft.fft", "numpy.fft.fft"),
             "fft": T("radix-2 FFT (this page)", "基 2 FFT（本页实现）"),
             "dft": T("DFT, O(n²)", "DFT，O(n²)")}
    timing_chart = LineChart(
        title=T("Time per transform (fastest of the rounds)", "每次变换的耗时（各轮中最快的一次）"),
        x_label=T("n (points)", "n（点数）"),
        y_label=T("seconds", "秒"),
        series=[Series(names[m], list(best[m]), list(best[m].values())) for m in methods],
        log_x=True, log_y=True,
    )
    per_n_log_n_chart = LineChart(
        title=T("FFT time per n·log₂ n", "FFT 每 n·log₂ n 的耗时"),
        x_label=T("n (points)", "n（点数）"),
        y_label=T("nanoseconds per n·log₂ n", "每 n·log₂ n 的纳秒数"),
        series=[Series(names[m], fft_sizes, [best[m][n] / n_log_n(n) * 1e9 for n in fft_sizes])
                for m in ("fft", "numpy")],
        log_x=True,
    )
    count_chart = LineChart(
        title=T("Complex multiplies counted", "统计到的复数乘法次数"),
        x_label=T("n (points)", "n（点数）"),
        y_label=T("complex multiplies", "复数乘法次数"),
        series=[Series(T("DFT: n²", "DFT：n²"), dft_sizes, dft_multiplies),
                Series(T("FFT: (n/2)·log₂ n", "FFT：(n/2)·log₂ n"), fft_sizes, butterflies)],
        log_x=True, log_y=True,
    )
    rows = [[n, f"{best['dft'][n] * 1e6:.1f}" if n in best["dft"] else "—",
             f"{best['fft'][n] * 1e6:.1f}", f"{best['numpy'][n] * 1e6:.1f}"]
            for n in fft_sizes]
    table = Table(
        title=T("Time per transform, fastest of the rounds (µs)",
                "每次变换的耗时，各轮中最快的一次（微秒）"),
        columns=[T("n", "n"), T("DFT", "DFT"), T("radix-2 FFT", "基 2 FFT"),
                 T("numpy.fft", "numpy.fft")],
        rows=rows,
    )
    return Result(
        checks=checks,
        figures=[timing_chart, per_n_log_n_chart, count_chart],
        tables=[table],
        metrics={"dft_exponent": dft_exponent, "fft_time_per_n_log_n_growth": fft_growth,
                 "largest_dft_n": largest_common,
                 "dft_over_fft_time": slowdown,
                 "dft_over_fft_multiplies": multiply_ratio,
                 "dft_over_dft_with_cached_matrix": exponentials_share,
                 "largest_n": fft_sizes[-1],
                 "fft_over_numpy": best["fft"][fft_sizes[-1]] / best["numpy"][fft_sizes[-1]]},
        notes=[T("Wall-clock times from this machine; they vary from run to run. The DFT is "
                 f"timed up to n = {2**DFT_MAX_LOG2N}. At n = {largest_common} the time ratio "
                 f"DFT/FFT ({slowdown:.0f}×) exceeds the ratio of multiplies "
                 f"({multiply_ratio:.0f}×) because the DFT also evaluates n² complex "
                 "exponentials on every call, each far dearer than a multiply; with its matrix "
                 f"precomputed it runs {exponentials_share:.0f}× faster.",
                 f"耗时是本机实测值，每次运行都会略有不同。DFT 只计时到 n = {2**DFT_MAX_LOG2N}。"
                 f"n = {largest_common} 时 DFT 与 FFT 的耗时之比（{slowdown:.0f} 倍）大于乘法次数"
                 f"之比（{multiply_ratio:.0f} 倍），因为 DFT 每次调用还要计算 n² 个复指数，"
                 f"每个都比一次乘法贵得多；预先算好矩阵后，耗时只有原来的 "
                 f"1/{exponentials_share:.0f}。")],
    )
