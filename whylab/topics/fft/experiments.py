"""Experiments for "the radix-2 FFT": correctness against the DFT, the butterfly
network, and how the cost grows with n.

Everything shown runs :mod:`whylab.numerics.fft`: the butterfly diagram is drawn
from the index pairs and intermediate values of the same iterative FFT that the
other experiments time and compare, and the operation counts are counted while
that code runs. The comparisons live in small functions (:func:`agreement_check`,
:func:`growth_exponent`, ...) so tests can hand them wrong inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from whylab.bench import fastest_per_call
from whylab.explorer.experiment import (
    Check,
    GraphDiagram,
    GraphNode,
    LineChart,
    Param,
    Result,
    Series,
    T,
    Table,
    experiment,
)
from whylab.numerics.fft import (
    OperationCount,
    bit_reversal_permutation,
    butterfly_stages,
    dft,
    fft,
    fft_recursive,
    fft_stages,
    ifft,
)

SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
AGREEMENT_TOLERANCE = 1e-12  # relative: max |a - b| / max |b|
MAX_PLOTTED_POINTS = 1024
DFT_MAX_LOG2N = 10  # the O(n^2) DFT is timed up to n = 1024 (tens of ms per call)
FFT_FIT_MIN_LOG2N = 10  # below ~1024 points, fixed per-stage overhead hides the growth
DFT_FIT_MIN_LOG2N = 6
DFT_EXPONENT_AT_LEAST = 1.5
FFT_EXPONENT_AT_MOST = 1.6
DFT_SLOWER_AT_LEAST = 10.0


# ---------------------------------------------------------------- comparisons


def relative_error(values: np.ndarray, reference: np.ndarray) -> float:
    """max |values - reference| / max |reference| (absolute when the reference is 0).

    Arrays of different shapes do not agree at all: the error is infinite.
    """
    values = np.asarray(values)
    if values.shape != np.shape(reference):
        return math.inf
    scale = float(np.max(np.abs(reference), initial=0.0)) or 1.0
    return float(np.max(np.abs(values - reference), initial=0.0)) / scale


def agreement_check(name, values: np.ndarray, reference: np.ndarray,
                    tolerance: float = AGREEMENT_TOLERANCE) -> Check:
    """Pass when ``values`` equals ``reference`` to a relative error of ``tolerance``."""
    error = relative_error(values, reference)
    return Check(name=name, passed=bool(error <= tolerance),
                 measured=T(f"relative max error {error:.1e}", f"最大相对误差 {error:.1e}"),
                 expected=f"≤ {tolerance:.0e}")


def count_check(name, counted: list[int], formula: list[int], sizes: list[int]) -> Check:
    """Pass when every counted operation total equals the formula's."""
    mismatches = [n for n, c, f in zip(sizes, counted, formula, strict=True) if c != f]
    shown = ", ".join(f"n={n}: {c}" for n, c in list(zip(sizes, counted, strict=True))[-2:])
    return Check(
        name=name,
        passed=not mismatches,
        measured=shown if not mismatches else T(f"differs at n = {mismatches}",
                                                 f"在 n = {mismatches} 处不同"),
        expected=(T("formula at every n", "每个 n 都与公式相符") if len(sizes) > 1
                  else f"{formula[0]}"),
    )


def growth_exponent(sizes: list[int], seconds: list[float]) -> float:
    """Slope of a least-squares line through (log n, log time): time ~ n^slope."""
    slope, _ = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope)


def exponent_check(name, exponent: float, *, at_least: float | None = None,
                   at_most: float | None = None) -> Check:
    """Pass when the fitted growth exponent lies on the claimed side of a bound."""
    passed = (at_least is None or exponent >= at_least) and (at_most is None or exponent <= at_most)
    bound = f"≥ {at_least}" if at_least is not None else f"≤ {at_most}"
    return Check(name=name, passed=bool(passed),
                 measured=T(f"exponent {exponent:.2f}", f"指数 {exponent:.2f}"), expected=bound)


# ---------------------------------------------------------------- helpers


def make_signal(n: int, kind: str, seed: int) -> np.ndarray:
    """A test signal: two tones plus a little noise (real), or complex Gaussian noise."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.standard_normal(n) + 1j * rng.standard_normal(n)
    j = np.arange(n)
    low, high = max(1, n // 16), max(1, n // 5)  # cycles per n samples
    tones = np.cos(2 * np.pi * low * j / n) + 0.5 * np.sin(2 * np.pi * high * j / n)
    return tones + 0.1 * rng.standard_normal(n)


def _thin(values: np.ndarray) -> list[float]:
    step = max(1, math.ceil(values.shape[0] / MAX_PLOTTED_POINTS))
    return [float(v) for v in values[::step]]


def _format_complex(value: complex) -> str:
    real, imag = value.real, value.imag
    if abs(imag) < 5e-13:
        return f"{real:.3g}"
    return f"{real:.3g}{imag:+.3g}i"


def seconds_per_call(func: Callable[[np.ndarray], object], x: np.ndarray,
                     budget_s: float = 0.003, repeats: int = 3) -> float:
    """Time of one call: the fastest of ``repeats`` loops, each lasting about ``budget_s``.

    On a shared machine other work can only add time, never remove it, so the
    fastest loop is the most stable estimate of what the code itself costs.
    """
    return fastest_per_call(partial(func, x), budget_s, repeats, max_calls=1 << 14)


# ---------------------------------------------------------------- experiments


@experiment(
    name="fft-vs-dft",
    title=T("The FFT computes exactly the DFT", "FFT 算出的就是 DFT"),
    description=T(
        "Transforms one signal four ways -- the O(n²) DFT, the recursive and the iterative "
        "radix-2 FFT, and numpy.fft.fft -- and compares them, counting the arithmetic done.",
        "用四种方法变换同一个信号——O(n²) 的 DFT、递归版与迭代版基 2 FFT、numpy.fft.fft——"
        "逐一比较结果，并统计实际做了多少次运算。",
    ),
    params=[
        Param("log2n", "int", 10, T("log₂ n (n = 2^log₂n points)", "log₂ n（点数 n = 2^log₂n）"),
              minimum=0, maximum=12, step=1),
        Param("signal", "choice", "tones", T("signal", "信号"), choices=("tones", "random"),
              choice_labels=(T("two tones + noise", "两个单音加噪声"),
                             T("complex Gaussian noise", "复高斯噪声"))),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
)
def fft_vs_dft(log2n: int, signal: str, seed: int) -> Result:
    n = 2**log2n
    x = make_signal(n, signal, seed)
    fft_count, dft_count = OperationCount(), OperationCount()
    reference = dft(x, dft_count)
    iterative = fft(x, fft_count)
    recursive = fft_recursive(x)
    butterflies_expected = n // 2 * log2n

    checks = [
        agreement_check(T("Iterative radix-2 FFT equals the O(n²) DFT",
                          "迭代版基 2 FFT 与 O(n²) 的 DFT 结果相同"), iterative, reference),
        agreement_check(T("Recursive (even/odd) FFT equals the DFT",
                          "递归（奇偶拆分）版 FFT 与 DFT 结果相同"), recursive, reference),
        agreement_check(T("Iterative FFT equals numpy.fft.fft",
                          "迭代版 FFT 与 numpy.fft.fft 结果相同"), iterative, np.fft.fft(x)),
        agreement_check(T("The inverse FFT gives back the signal: ifft(fft(x)) = x",
                          "逆 FFT 还原出原信号：ifft(fft(x)) = x"), ifft(iterative), x),
        count_check(T("Butterflies done by the FFT = (n/2)·log₂ n",
                      "FFT 实际执行的蝶形运算次数 = (n/2)·log₂ n"),
                    [fft_count.butterflies], [butterflies_expected], [n]),
        count_check(T("Complex multiplies done by the DFT = n²",
                      "DFT 实际执行的复数乘法次数 = n²"),
                    [dft_count.complex_multiplies], [n * n], [n]),
    ]
    bins = np.arange(n)
    figure = LineChart(
        title=T("Magnitude spectrum |X[k]|", "幅度谱 |X[k]|"),
        x_label=T("frequency bin k", "频率序号 k"),
        y_label=T("|X[k]|", "|X[k]|"),
        series=[
            Series(T("DFT (definition)", "DFT（定义）"), _thin(bins), _thin(np.abs(reference))),
            Series(T("radix-2 FFT", "基 2 FFT"), _thin(bins), _thin(np.abs(iterative))),
        ],
    )
    table = Table(
        title=T("Arithmetic counted during this run", "本次运行中统计到的运算次数"),
        columns=[T("method", "方法"), T("complex multiplies", "复数乘法"),
                 T("complex additions", "复数加法")],
        rows=[
            ["DFT", dft_count.complex_multiplies, dft_count.complex_additions],
            ["FFT", fft_count.complex_multiplies, fft_count.complex_additions],
        ],
    )
    multiply_ratio = n * n / fft_count.complex_multiplies if fft_count.complex_multiplies else 1.0
    return Result(
        checks=checks,
        figures=[figure],
        tables=[table],
        metrics={"n": n, "max_abs_error_vs_dft": float(np.max(np.abs(iterative - reference))),
                 "dft_multiplies_per_fft_multiply": multiply_ratio},
    )


@experiment(
    name="butterfly",
    title=T("The butterfly network", "蝶形网络"),
    description=T(
        "The data flow of the iterative FFT, drawn from the index pairs it actually uses, with "
        "the values that flow through it for the input x[j] = j.",
        "迭代版 FFT 的数据流图，由它实际使用的下标对画出，"
        "节点上标出输入 x[j] = j 时流经的真实数值。",
    ),
    params=[
        Param("n", "choice", "8", T("points n", "点数 n"), choices=("4", "8", "16")),
    ],
)
def butterfly(n: str) -> Result:
    size = int(n)
    x = np.arange(size, dtype=float)
    perm = bit_reversal_permutation(size)
    stages = butterfly_stages(size)
    snapshots = fft_stages(x)
    last = len(stages)

    nodes = []
    for s, values in enumerate(snapshots):
        for p in range(size):
            if s == 0:
                label = f"x[{perm[p]}]"
            elif s == last:
                label = f"X[{p}]"
            else:
                label = f"{p}"
            # Pinned: stage s is column s, position p is row p, so the wires of each
            # butterfly cross as in the textbook picture.
            nodes.append(GraphNode(id=f"s{s}p{p}", label=label,
                                   detail=_format_complex(values[p]), group=f"stage {s}",
                                   layer=s, order=p))
    wires = butterfly_wires(size)

    checks = [
        wiring_check(wires, snapshots),
        agreement_check(T("The network's last column equals numpy.fft.fft(x)",
                          "网络最后一列等于 numpy.fft.fft(x)"), snapshots[-1], np.fft.fft(x)),
        stage_structure_check(size),
        subtransform_check(x),
        even_odd_check(size),
    ]
    bits = last
    table = Table(
        title=T("Bit reversal: where each input sample starts", "位反转：每个输入样本的起始位置"),
        columns=[T("position i", "位置 i"), T("i in binary", "i 的二进制"),
                 T("reversed", "反转后"), T("sample placed there", "放在此处的样本")],
        rows=[[i, format(i, f"0{bits}b"), format(int(perm[i]), f"0{bits}b"), f"x[{perm[i]}]"]
              for i in range(size)],
    )
    return Result(
        checks=checks,
        figures=[GraphDiagram(title=T(f"Radix-2 butterflies for n = {size}",
                                      f"n = {size} 的基 2 蝶形网络"),
                              nodes=nodes,
                              edges=[(w.source, w.target, w.label) for w in wires],
                              direction="LR")],
        tables=[table],
        metrics={"stages": last, "butterflies": sum(s.top.shape[0] for s in stages)},
        notes=[T("An edge labelled +Wₘᵏ or −Wₘᵏ multiplies by ±exp(−2πik/m) on the way, "
                 "where m is the block length the stage produces; an unlabelled edge adds the "
                 "value unchanged.",
                 "标注为 +Wₘᵏ 或 −Wₘᵏ 的边表示沿途乘以 ±exp(−2πik/m)，m 是该级合并后的块长；"
                 "没有标注的边把数值原样加过去。")],
    )


@dataclass(frozen=True)
class Wire:
    """One edge of the butterfly diagram: ``target += factor * source``."""

    source: str  # node id "s{stage}p{position}"
    target: str
    label: str
    factor: complex


def butterfly_wires(n: int) -> list[Wire]:
    """The four wires of every butterfly of :func:`fft`, read from its stages."""
    wires = []
    for s, stage in enumerate(butterfly_stages(n), start=1):
        for top, bottom, k, w in zip(stage.top, stage.bottom, stage.twiddle_exponent,
                                     stage.twiddles, strict=True):
            twiddle = f"W{str(stage.span).translate(SUBSCRIPT)}{str(k).translate(SUPERSCRIPT)}"
            wires += [
                Wire(f"s{s - 1}p{top}", f"s{s}p{top}", "", 1.0),
                Wire(f"s{s - 1}p{bottom}", f"s{s}p{top}", f"+{twiddle}", complex(w)),
                Wire(f"s{s - 1}p{top}", f"s{s}p{bottom}", "", 1.0),
                Wire(f"s{s - 1}p{bottom}", f"s{s}p{bottom}", f"−{twiddle}", -complex(w)),
            ]
    return wires


def wiring_check(wires: list[Wire], snapshots: list[np.ndarray]) -> Check:
    """Every node after the first column is the sum of its incoming wires' contributions.

    This ties the picture to the numbers: recomputing each value from the drawn
    wires alone must reproduce what :func:`fft` held after each stage.
    """
    def value(node_id: str) -> complex:
        stage, position = node_id[1:].split("p")
        return complex(snapshots[int(stage)][int(position)])

    recomputed: dict[str, complex] = {}
    for wire in wires:
        recomputed[wire.target] = recomputed.get(wire.target, 0) + wire.factor * value(wire.source)
    expected_nodes = (len(snapshots) - 1) * snapshots[0].shape[0]
    scale = max(abs(value(node)) for node in recomputed) or 1.0
    worst = max((abs(total - value(node)) for node, total in recomputed.items()), default=0.0)
    passed = len(recomputed) == expected_nodes and worst <= AGREEMENT_TOLERANCE * scale
    return Check(
        name=T("Each value in the diagram is the sum of its incoming wires times their factors",
               "图中每个数值都等于所有输入连线的数值乘以各自系数之和"),
        passed=bool(passed),
        measured=T(f"{len(recomputed)} nodes, largest difference {worst:.1e}",
                   f"{len(recomputed)} 个节点，最大差 {worst:.1e}"),
        expected=T(f"{expected_nodes} nodes, ≤ {AGREEMENT_TOLERANCE:.0e} relative",
                   f"{expected_nodes} 个节点，相对差 ≤ {AGREEMENT_TOLERANCE:.0e}"),
    )


def stage_structure_check(n: int) -> Check:
    """Every stage has n/2 butterflies, and touches every position exactly once."""
    stages = butterfly_stages(n)
    good = all(
        stage.top.shape[0] == n // 2
        and sorted(np.concatenate([stage.top, stage.bottom]).tolist()) == list(range(n))
        for stage in stages
    )
    return Check(
        name=T("Each of the log₂ n stages has n/2 butterflies touching every position once",
               "log₂ n 级中每一级都有 n/2 个蝶形运算，且每个位置恰好参与一次"),
        passed=bool(good and len(stages) == int(math.log2(n))),
        measured=T(f"{len(stages)} stages × {stages[0].top.shape[0]} butterflies",
                   f"{len(stages)} 级 × {stages[0].top.shape[0]} 个蝶形"),
        expected=f"{int(math.log2(n))} × {n // 2}",
    )


def subtransform_check(x: np.ndarray) -> Check:
    """After stage s, each block of 2^s positions holds the DFT of one sub-sequence.

    The block starting at position b holds the 2^s-point DFT of
    x[r], x[r + n/2^s], x[r + 2n/2^s], ... with r = perm[b]: exactly the
    sub-problem the recursive version solves at that depth.
    """
    n = x.shape[0]
    perm = bit_reversal_permutation(n)
    snapshots = fft_stages(x)
    worst = 0.0
    for s, values in enumerate(snapshots):
        block = 2**s
        for start in range(0, n, block):
            sub_sequence = x[perm[start]::n // block]
            worst = max(worst, relative_error(values[start:start + block], dft(sub_sequence)))
    return Check(
        name=T("After stage s, every block of 2^s values is the DFT of one sub-sequence "
               "x[r], x[r + n/2^s], …",
               "第 s 级之后，每一块 2^s 个数都是某个子序列 x[r], x[r + n/2^s], … 的 DFT"),
        passed=bool(worst <= AGREEMENT_TOLERANCE),
        measured=T(f"relative max error {worst:.1e}", f"最大相对误差 {worst:.1e}"),
        expected=f"≤ {AGREEMENT_TOLERANCE:.0e}",
    )


def even_odd_check(n: int) -> Check:
    """Bit reversal puts the even-indexed samples in the first half, the odd in the second."""
    perm = bit_reversal_permutation(n).tolist()
    half = n // 2
    good = sorted(perm[:half]) == list(range(0, n, 2)) and sorted(perm[half:]) == list(
        range(1, n, 2))
    return Check(
        name=T("Bit reversal puts the even-indexed samples in the first half, the odd in "
               "the second",
               "位反转把偶数下标的样本放在前一半，奇数下标的放在后一半"),
        passed=bool(good),
        measured=T(f"first half: {perm[:half]}", f"前一半：{perm[:half]}"),
        expected=T(f"{list(range(0, n, 2))} in some order", f"{list(range(0, n, 2))}，顺序不限"),
    )


@experiment(
    name="cost-growth",
    title=T("How the cost grows with n", "运算量随 n 的增长"),
    description=T(
        "Times the O(n²) DFT, the iterative radix-2 FFT and numpy.fft.fft across n on this "
        "machine, fits the growth exponent, and counts the operations each does.",
        "在本机上对 O(n²) 的 DFT、迭代版基 2 FFT 和 numpy.fft.fft 在不同 n 下计时，"
        "拟合增长指数，并统计各自的运算次数。",
    ),
    params=[
        # At least 12, so the FFT's exponent is fitted over three or more sizes (n >= 1024).
        Param("max_log2n", "int", 13, T("largest log₂ n for the FFTs", "FFT 的最大 log₂ n"),
              minimum=12, maximum=15, step=1),
        Param("rounds", "int", 3, T("timing rounds (fastest kept)", "计时轮数（取最快一次）"),
              minimum=1, maximum=9, step=1),
    ],
    timing=True,
)
def cost_growth(max_log2n: int, rounds: int) -> Result:
    fft_sizes = [2**k for k in range(4, max_log2n + 1)]
    dft_sizes = [n for n in fft_sizes if n <= 2**DFT_MAX_LOG2N]
    methods = {"numpy": np.fft.fft, "fft": fft, "dft": dft}
    samples: dict[str, dict[int, list[float]]] = {m: {n: [] for n in fft_sizes} for m in methods}
    signals = {n: make_signal(n, "random", seed=n) for n in fft_sizes}
    # Interleaved rounds: a slow spell of the machine affects every method alike.
    for _ in range(rounds):
        for n in fft_sizes:
            for method, func in methods.items():
                if method == "dft" and n not in dft_sizes:
                    continue
                samples[method][n].append(seconds_per_call(func, signals[n]))
    best = {m: {n: min(v) for n, v in per_n.items() if v} for m, per_n in samples.items()}

    fft_fit = [n for n in fft_sizes if n >= 2**FFT_FIT_MIN_LOG2N]
    dft_fit = [n for n in dft_sizes if n >= 2**DFT_FIT_MIN_LOG2N]
    fft_exponent = growth_exponent(fft_fit, [best["fft"][n] for n in fft_fit])
    dft_exponent = growth_exponent(dft_fit, [best["dft"][n] for n in dft_fit])
    largest_common = dft_sizes[-1]
    slowdown = best["dft"][largest_common] / best["fft"][largest_common]

    butterflies, dft_multiplies = [], []
    for n in fft_sizes:
        count = OperationCount()
        fft(np.zeros(n), count)
        butterflies.append(count.butterflies)
    for n in dft_sizes:
        count = OperationCount()
        dft(np.zeros(n), count)
        dft_multiplies.append(count.complex_multiplies)

    checks = [
        count_check(T("Butterflies counted in the FFT = (n/2)·log₂ n at every n",
                      "在每个 n 上 FFT 统计到的蝶形运算次数都等于 (n/2)·log₂ n"),
                    butterflies, [n // 2 * int(math.log2(n)) for n in fft_sizes], fft_sizes),
        count_check(T("Complex multiplies counted in the DFT = n² at every n",
                      "在每个 n 上 DFT 统计到的复数乘法次数都等于 n²"),
                    dft_multiplies, [n * n for n in dft_sizes], dft_sizes),
        exponent_check(T(f"DFT time grows like n²: fitted exponent over n = {dft_fit[0]}–"
                         f"{dft_fit[-1]} is at least {DFT_EXPONENT_AT_LEAST}",
                         f"DFT 耗时按 n² 增长：在 n = {dft_fit[0]}–{dft_fit[-1]} 上拟合的指数"
                         f"不小于 {DFT_EXPONENT_AT_LEAST}"),
                       dft_exponent, at_least=DFT_EXPONENT_AT_LEAST),
        exponent_check(T(f"FFT time grows far more slowly than n²: fitted exponent over "
                         f"n = {fft_fit[0]}–{fft_fit[-1]} is at most {FFT_EXPONENT_AT_MOST}",
                         f"FFT 耗时的增长远慢于 n²：在 n = {fft_fit[0]}–{fft_fit[-1]} 上拟合的指数"
                         f"不大于 {FFT_EXPONENT_AT_MOST}"),
                       fft_exponent, at_most=FFT_EXPONENT_AT_MOST),
        Check(name=T(f"At n = {largest_common} the DFT takes at least {DFT_SLOWER_AT_LEAST:g}× "
                     "as long as the FFT",
                     f"n = {largest_common} 时 DFT 的耗时至少是 FFT 的 {DFT_SLOWER_AT_LEAST:g} 倍"),
              passed=bool(slowdown >= DFT_SLOWER_AT_LEAST), measured=f"{slowdown:.0f}×",
              expected=f"≥ {DFT_SLOWER_AT_LEAST:g}×"),
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
        figures=[timing_chart, count_chart],
        tables=[table],
        metrics={"dft_exponent": dft_exponent, "fft_exponent": fft_exponent,
                 f"dft_over_fft_at_{largest_common}": slowdown,
                 f"fft_over_numpy_at_{fft_sizes[-1]}":
                     best["fft"][fft_sizes[-1]] / best["numpy"][fft_sizes[-1]]},
        notes=[T("Wall-clock times from this machine; they vary from run to run. The DFT is "
                 f"timed up to n = {2**DFT_MAX_LOG2N}.",
                 f"耗时是本机实测值，每次运行都会略有不同。DFT 只计时到 n = {2**DFT_MAX_LOG2N}。")],
    )


EXPERIMENTS = [fft_vs_dft, butterfly, cost_growth]
