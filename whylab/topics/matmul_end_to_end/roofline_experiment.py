"""Experiment ``roofline``: how fast the BLAS call runs, against this machine's own ceilings.

Two ceilings are measured in the same interleaved rounds as the products: the
dgemm peak (``np.dot`` of two 1024×1024 C-ordered matrices, one dgemm call) and
the memory bandwidth (``np.dot`` of two 4M-element vectors, a ddot that reads
64 MB and does 2 flops per 16 bytes), all with one BLAS thread (threadpoolctl).
The roofline model then predicts each product's speed from its arithmetic
intensity I = 2mkn / 8(mk + kn + mn) flop per byte: min(peak, I × bandwidth).
A square product sits under the flat roof;
a matrix times one column (a dgemv, I ≈ 0.25) sits on the slope, where time is
the bytes read over the bandwidth.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

import whylab
from whylab.bench import compare
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

PEAK_SIZE = 1024
STREAM_ELEMENTS = 1 << 22  # two vectors of 32 MB: far beyond any cache here
THIN_ROWS, THIN_COLS = 4096, 1024  # a 32 MB matrix times one column
PEAK_SHARE = 0.5  # a large square product reaches at least this share of the peak
NEAR_PEAK_SIZE = 256  # ... once n is at least this
MODEL_BAND = (0.5, 2.5)  # measured / bandwidth-predicted time of the thin product
THIN_SHARE = 0.3  # the thin product stays below this share of the peak
BUDGET_S = 0.02


def intensity(m: int, k: int, n: int) -> float:
    """Flops per byte of compulsory traffic: each operand read once, the result written once."""
    return 2 * m * k * n / (8 * (m * k + k * n + m * n))


def roof(peak: float, bandwidth: float, flops_per_byte: float) -> float:
    return min(peak, flops_per_byte * bandwidth)


def square_product(n: int, rng):
    """whylab's ``a @ b`` on n×n operands, or (control) the same product one row at a time."""
    a = whylab.tensor(rng.standard_normal((n, n)))
    b = whylab.tensor(rng.standard_normal((n, n)))
    if control_active("multiply-row-by-row"):
        rows = [a[i:i + 1] for i in range(n)]
        return lambda: whylab.cat([row @ b for row in rows])
    return lambda: a @ b


@experiment(
    name="roofline",
    title=T("GFLOP/s against this machine's ceilings", "GFLOP/s 与本机的上限"),
    description=T(
        "Times whylab's a @ b for a square n×n product and for a 4096×1024 matrix times one "
        "column, in interleaved rounds with the two ceilings: a 1024³ dgemm (the peak) and a "
        "64 MB ddot (the bandwidth), all on one BLAS thread. Each speed is the fastest round's.",
        "对 whylab 的 a @ b 计时：一个 n×n 的方阵乘积，以及一个 4096×1024 矩阵乘一列；"
        "与两个上限交替多轮测量：1024³ 的 dgemm（峰值）和 64 MB 的 ddot（带宽），"
        "全部只用一个 BLAS 线程。每个速度取最快一轮。"),
    params=[
        Param("n", "int", 512, T("square size n", "方阵大小 n"), minimum=32, maximum=1024,
              step=32),
        Param("rounds", "int", 5, T("timing rounds", "计时轮数"), minimum=3, maximum=15),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=10_000,
              seed=True),
    ],
    timing=True,
    time_limit_s=40.0,
    controls=[
        Control("multiply-row-by-row",
                T("the square product is computed one row at a time (n matrix-vector calls)",
                  "方阵乘积被拆成一行一行地算（n 次矩阵乘向量）"),
                breaks=("square-near-peak",)),
        Control("thin-matrix-strided",
                T("the thin product's matrix is every other column of a twice-as-wide one, "
                  "so NumPy copies it before the dgemv",
                  "细长乘积的矩阵取自一个宽一倍的矩阵的隔列，NumPy 要先复制它才能调用 dgemv"),
                breaks=("thin-at-memory-speed",)),
    ],
    metrics=[
        Metric("peak_gflops", T("dgemm peak (1024³)", "dgemm 峰值（1024³）"), "GFLOP/s"),
        Metric("bandwidth_gbs", T("memory bandwidth (np.dot of two vectors)",
                                  "内存带宽（两个向量的 np.dot）"), "GB/s"),
        Metric("square_gflops", T("whylab a @ b, n×n", "whylab a @ b，n×n"), "GFLOP/s"),
        Metric("thin_gflops", T("whylab a @ b, 4096×1024 · 1024×1",
                                "whylab a @ b，4096×1024 · 1024×1"), "GFLOP/s"),
    ],
)
def roofline(n: int, rounds: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    peak_a, peak_b = rng.standard_normal((PEAK_SIZE, PEAK_SIZE)), \
        rng.standard_normal((PEAK_SIZE, PEAK_SIZE))
    x, y = rng.standard_normal(STREAM_ELEMENTS), rng.standard_normal(STREAM_ELEMENTS)
    if control_active("thin-matrix-strided"):
        thin_a = whylab.tensor(rng.standard_normal((THIN_ROWS, 2 * THIN_COLS)))[:, ::2]
    else:
        thin_a = whylab.tensor(rng.standard_normal((THIN_ROWS, THIN_COLS)))
    thin_b = whylab.tensor(rng.standard_normal((THIN_COLS, 1)))
    candidates = {
        "peak": lambda: np.dot(peak_a, peak_b),
        "stream": lambda: np.dot(x, y),
        "square": square_product(n, rng),
        "thin": lambda: thin_a @ thin_b,
    }
    # One BLAS thread for every candidate: the peak and the products then share one core,
    # and a busy machine's other tenants disturb one thread less than a team of them.
    with whylab.no_grad(), threadpool_limits(limits=1, user_api="blas"):
        timed = compare(candidates, rounds, BUDGET_S, pause_s=0.05)
    best = {name: min(samples) for name, samples in timed.times.items()}
    peak = 2 * PEAK_SIZE ** 3 / best["peak"] / 1e9
    bandwidth = 2 * STREAM_ELEMENTS * 8 / best["stream"] / 1e9
    square = 2 * n ** 3 / best["square"] / 1e9
    thin = 2 * THIN_ROWS * THIN_COLS / best["thin"] / 1e9
    thin_bytes = 8 * (THIN_ROWS * THIN_COLS + THIN_COLS + THIN_ROWS)
    predicted = thin_bytes / (bandwidth * 1e9)
    model_ratio = best["thin"] / predicted

    checks = [square_check(n, square, peak), thin_check(model_ratio, thin, peak)]
    shapes = {"peak": (PEAK_SIZE,) * 3, "square": (n,) * 3, "thin": (THIN_ROWS, THIN_COLS, 1)}
    speeds = {"peak": peak, "square": square, "thin": thin}
    return Result(checks=checks, figures=[roofline_chart(peak, bandwidth, shapes, speeds)],
                  tables=[speed_table(shapes, speeds, peak, bandwidth, timed)],
                  metrics={"peak_gflops": peak, "bandwidth_gbs": bandwidth,
                           "square_gflops": square, "thin_gflops": thin})


def square_check(n: int, square: float, peak: float) -> Check:
    name = T(f"A square product of n ≥ {NEAR_PEAK_SIZE} through whylab reaches at least "
             f"{PEAK_SHARE:g} of the measured dgemm peak (one dgemm call; the dispatcher's "
             "microseconds vanish)",
             f"n ≥ {NEAR_PEAK_SIZE} 的方阵乘积经过 whylab 至少达到实测 dgemm 峰值的 "
             f"{PEAK_SHARE:g}（一次 dgemm 调用；调度器的几微秒可以忽略）")
    if n < NEAR_PEAK_SIZE:
        return Check.not_applicable(id="square-near-peak", name=name,
                                    expected=T(f"≥ {PEAK_SHARE:g} × peak",
                                               f"≥ 峰值的 {PEAK_SHARE:g}"),
                                    why=T(f"needs n ≥ {NEAR_PEAK_SIZE}",
                                          f"需要 n ≥ {NEAR_PEAK_SIZE}"))
    share = square / peak
    return Check(id="square-near-peak", name=name, passed=share >= PEAK_SHARE,
                 measured=f"{square:.1f} GFLOP/s = {share:.2f} × {peak:.1f}",
                 expected=T(f"≥ {PEAK_SHARE:g} × peak", f"≥ 峰值的 {PEAK_SHARE:g}"))


def thin_check(model_ratio: float, thin: float, peak: float) -> Check:
    low, high = MODEL_BAND
    share = thin / peak
    return Check(
        id="thin-at-memory-speed",
        name=T(f"The matrix times one column is memory-bound: it takes {low:g}–{high:g}× the "
               f"time the roofline predicts from its bytes and the measured bandwidth, and "
               f"stays below {THIN_SHARE:g} of the peak",
               f"矩阵乘一列受内存带宽限制：耗时是屋顶线模型按字节数和实测带宽预测值的 "
               f"{low:g}–{high:g} 倍，速度低于峰值的 {THIN_SHARE:g}"),
        passed=low <= model_ratio <= high and share < THIN_SHARE,
        measured=T(f"{model_ratio:.2f}× predicted; {share:.3f} × peak",
                   f"预测值的 {model_ratio:.2f} 倍；峰值的 {share:.3f}"),
        expected=T(f"{low:g}–{high:g}×; < {THIN_SHARE:g} × peak",
                   f"{low:g}–{high:g} 倍；< 峰值的 {THIN_SHARE:g}"))


def roofline_chart(peak, bandwidth, shapes, speeds) -> LineChart:
    grid = list(np.geomspace(0.05, 1000, 40))
    measured = sorted((intensity(*shapes[name]), speeds[name]) for name in speeds)
    return LineChart(
        title=T("Roofline: attainable GFLOP/s against flops per byte",
                "屋顶线：可达 GFLOP/s 与每字节浮点运算数"),
        x_label=T("arithmetic intensity (flop/byte)", "算术强度（flop/字节）"),
        y_label=T("GFLOP/s", "GFLOP/s"),
        series=[Series(T("roof: min(peak, I × bandwidth)", "屋顶：min(峰值, I × 带宽)"),
                       grid, [roof(peak, bandwidth, i) for i in grid]),
                Series(T("measured (thin, square, 1024³)", "实测（细长、方阵、1024³）"),
                       [i for i, _ in measured], [s for _, s in measured])],
        log_x=True, log_y=True)


def speed_table(shapes, speeds, peak, bandwidth, timed) -> Table:
    labels = {"peak": T("np.dot 1024³ (the peak)", "np.dot 1024³（峰值）"),
              "square": T("whylab a @ b, square", "whylab a @ b，方阵"),
              "thin": T("whylab a @ b, one column", "whylab a @ b，一列")}
    rows = []
    for name, label in labels.items():
        quart = timed.quartiles(name)
        m, k, n = shapes[name]
        rows.append([label, f"{m}×{k} · {k}×{n}", f"{intensity(m, k, n):.2f}",
                     f"{speeds[name]:.1f}", f"{roof(peak, bandwidth, intensity(m, k, n)):.1f}",
                     f"{quart.median * 1e3:.2f} [{quart.q1 * 1e3:.2f}, {quart.q3 * 1e3:.2f}]"])
    return Table(
        title=T("Products against the roofline", "各乘积与屋顶线"),
        columns=[T("product", "乘积"), T("shapes", "形状"), T("flop/byte", "flop/字节"),
                 T("GFLOP/s (fastest)", "GFLOP/s（最快）"), T("roof GFLOP/s", "屋顶 GFLOP/s"),
                 T("ms per call, median [q1, q3]", "每次毫秒，中位数 [q1, q3]")],
        rows=rows)
