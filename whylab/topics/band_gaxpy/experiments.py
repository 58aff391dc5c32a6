"""Experiments for "band storage GAXPY": the layout, the product against BLAS, the work
counted while the loops run, how the time grows, and the constant against dgbmv.

Everything runs :mod:`whylab.numerics.banded`. The layout diagram is read back from
the arrays ``to_band`` and ``from_band`` really produce; the operation counts are
tallied by ``band_gaxpy``'s loops as they run and compared with the number of band
positions counted from a dense mask (NumPy's ``tril``/``triu``), not with our own
formula; the references are SciPy's BLAS ``dgbmv`` and NumPy's dense ``A @ x``.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from scipy.linalg import blas
from threadpoolctl import threadpool_limits

from whylab.bench import compare, fastest_per_call
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
from whylab.numerics.banded import BandWork, band_gaxpy, from_band, to_band
from whylab.topics.band_gaxpy.refusals import band_refusals
from whylab.topics.shared import (
    AGREEMENT_TOLERANCE,
    agreement_check,
    growth_exponent,
    relative_error,
    timing_check,
    timing_rows,
)

DENSE_SIZES = (256, 512, 1024, 2048)  # a 2048 x 2048 float64 matrix is 32 MiB
BAND_MIN_LOG2N = 12  # below ~4096, a few fixed NumPy call costs hide the growth
TIMING_BANDWIDTH = 2  # p = q = 2: five stored diagonals
BAND_EXPONENT_AT_MOST = 1.4  # linear is 1; leaving out a cache's edge would be cherry-picking
# And it does grow: a time that stays flat is no linear cost. Not 0.7: a quiet 2-core
# machine fitted 0.64 on 2026-12-01, the fixed cost per call flattening the small sizes;
# a flat time (the control) fits about 0, and dense A @ x fits about 2.
BAND_EXPONENT_AT_LEAST = 0.5
DENSE_EXPONENT_AT_LEAST = 1.6
# The claim "the diagonal loop is at least as fast as dgbmv" is for narrow, long bands: each of
# its w NumPy calls has a fixed cost of about a microsecond, paid back only by long diagonals.
NARROW_WIDTH_AT_MOST = 11
LENGTH_PER_DIAGONAL_AT_LEAST = 2000  # n / w
COPY_SLOWER_AT_LEAST = 1.2
COLUMN_LOOP_MAX_N = 10_000  # the column loop is n Python iterations: timed up to 10^4


# ---------------------------------------------------------------- helpers


def random_band_matrix(m: int, n: int, p: int, q: int, seed: int) -> np.ndarray:
    """A dense m-by-n matrix with Gaussian entries inside bandwidths (p, q), zeros outside."""
    A = np.random.default_rng(seed).standard_normal((m, n))
    return A * band_mask(m, n, p, q)


def band_mask(m: int, n: int, p: int, q: int) -> np.ndarray:
    """1 where -p <= j - i <= q, built from NumPy's tril/triu (independent of banded.py)."""
    return np.triu(np.tril(np.ones((m, n)), q), -p)




def work_check(check_id: str, name, counted: BandWork, entries: int, dense: int) -> Check:
    return Check(name, counted.flops == 2 * entries,
                 T(f"{counted.flops} operations counted", f"统计到 {counted.flops} 次运算"),
                 T(f"2 × {entries} band entries = {2 * entries} (dense: {dense})",
                   f"2 × {entries} 个带内元素 = {2 * entries}（稠密：{dense}）"),
                 id=check_id)






def fortran(ab: np.ndarray) -> np.ndarray:
    """The column-major copy dgbmv wants; made once, outside any timing."""
    return np.asfortranarray(ab)


# ---------------------------------------------------------------- the layout


@experiment(
    name="band-layout",
    title=T("Which diagonal goes where", "每条对角线存在哪里"),
    description=T(
        "Stores a small band matrix with to_band and reads the result back: which row of "
        "ab holds each entry of A, and which entry of A each slot of ab holds.",
        "用 to_band 存储一个小带状矩阵，再把结果读回来：A 的每个元素存放在 ab 的哪一行，"
        "ab 的每个位置又存放着 A 的哪个元素。",
    ),
    params=[
        Param("n", "int", 8, T("order n", "阶数 n"), minimum=6, maximum=12, step=1),
        Param("p", "int", 2, T("lower bandwidth p", "下带宽 p"), minimum=0, maximum=5, step=1),
        Param("q", "int", 1, T("upper bandwidth q", "上带宽 q"), minimum=0, maximum=5, step=1),
    ],
    controls=[
        Control("rows-reversed", T("the stored diagonals are put in ab in reverse order "
                                   "(lowest subdiagonal first)",
                                   "存储时把对角线按相反顺序放进 ab（最低的次对角线在最前）"),
                breaks=("rows-are-diagonals", "round-trip")),
        Control("diagonals-left-justified",
                T("each diagonal is stored from column 0 of its row, as numpy.diagonal returns "
                  "it, losing its column offset",
                  "每条对角线都从所在行的第 0 列开始存放（与 numpy.diagonal 的返回值一样），"
                  "丢掉了它的列偏移"),
                breaks=("rows-are-diagonals", "round-trip")),
        Control("full-bandwidth", T("the matrix is stored with the full bandwidths "
                                    "p = q = n − 1, i.e. densely",
                                    "按满带宽 p = q = n − 1 存储，也就是按稠密方式存储"),
                breaks=("storage-count",)),
    ],
    metrics=[
        Metric("stored", T("numbers stored in ab", "ab 中存放的数")),
        Metric("dense", T("numbers in dense A (n²)", "稠密 A 的数（n²）")),
        Metric("corner_slots", T("corner slots never read", "从不读取的角落位置")),
    ],
)
def band_layout(n: int, p: int, q: int) -> Result:
    # Entry A[i, j] = i·n + j + 1 inside the band: every stored value names its position.
    A = (np.arange(n * n, dtype=float).reshape(n, n) + 1) * band_mask(n, n, p, q)
    stored_p, stored_q = (n - 1, n - 1) if control_active("full-bandwidth") else (p, q)
    ab = to_band(A, stored_p, stored_q)
    if control_active("rows-reversed"):
        ab = ab[::-1].copy()
    if control_active("diagonals-left-justified"):
        ab = np.zeros_like(ab)
        for d in range(p + q + 1):
            diagonal = np.diagonal(A, offset=q - d)
            ab[d, :diagonal.size] = diagonal

    # LAPACK's layout (dgbmv's documentation, 1-based): AB(ku + 1 + i - j, j) = A(i, j) for
    # max(1, j - ku) <= i <= min(n, j + kl). Zero-based with ku = q: ab[q + i - j, j].
    # Every slot is pinned to its entry, so a layout that loses a column offset fails.
    in_band = [(i, j) for j in range(n) for i in range(max(0, j - q), min(n, j + p + 1))]
    diagonals_hold = ab.shape == (p + q + 1, n) and all(
        ab[q + i - j, j] == A[i, j] for i, j in in_band) and int(
        np.count_nonzero(ab)) == len(in_band)
    restored = from_band(ab, p, q, n) if ab.shape[0] == p + q + 1 else None
    checks = [
        Check(T("Slot ab[q + i − j, j] holds A[i, j] for every entry of the band (LAPACK's "
                "layout, as dgbmv reads it: row d of ab is the diagonal j − i = q − d, each "
                "entry in its own column), and no other slot holds anything",
                "对带内的每个元素，ab[q + i − j, j] 存放的都是 A[i, j]（LAPACK 的排布，"
                "也就是 dgbmv 读取的方式：ab 的第 d 行是 j − i = q − d 的那条对角线，"
                "每个元素在它自己的列上），其余位置都不存放任何数"),
              diagonals_hold, T("every slot" if diagonals_hold else "a slot differs",
                                "每个位置都相符" if diagonals_hold else "有位置不符"),
              T(f"{len(in_band)} slots, one per band entry", f"{len(in_band)} 个位置，"
                "每个带内元素一个"),
              id="rows-are-diagonals"),
        Check(T("from_band(to_band(A)) gives back A exactly", "from_band(to_band(A)) 精确还原 A"),
              restored is not None and np.array_equal(restored, A),
              T("identical" if restored is not None and np.array_equal(restored, A)
                else "differs", "完全相同" if restored is not None
                and np.array_equal(restored, A) else "不同"),
              T("identical", "完全相同"), id="round-trip"),
        Check(T(f"ab stores (p + q + 1)·n = {(p + q + 1) * n} numbers instead of n² = {n * n}",
                f"ab 存储 (p + q + 1)·n = {(p + q + 1) * n} 个数，而不是 n² = {n * n} 个"),
              ab.size == (p + q + 1) * n, f"{ab.size}", f"{(p + q + 1) * n}",
              id="storage-count"),
    ]

    def entry_name(value: float) -> str:
        if value == 0:
            return "·"
        i, j = divmod(int(value) - 1, n)
        return f"a{i},{j}"

    # Where did each entry of A end up? Look its (unique) value up in the stored array.
    stored_at = {ab[d, j]: d for d, j in zip(*np.nonzero(ab), strict=True)}
    matrix_rows = [[T(f"row {i}", f"第 {i} 行")] + [
        f"ab[{stored_at[A[i, j]]}]" if A[i, j] in stored_at else "·" for j in range(n)]
        for i in range(n)]
    def offset(d: int) -> str:
        return f"j − i = {q - d}".replace("-", "−")  # a minus sign, as in the prose

    stored_rows = [[f"ab[{d}]", T(offset(d), offset(d))]
                   + [entry_name(v) for v in ab[d]] for d in range(ab.shape[0])]
    columns = [T(f"j={j}", f"j={j}") for j in range(n)]
    return Result(
        checks=checks,
        tables=[
            Table(T("The matrix A: the row of ab where each entry is stored (· = zero, not stored)",
                    "矩阵 A：每个元素存放在 ab 的哪一行（· 表示零，不存储）"),
                  [T("A", "A")] + columns, matrix_rows, grid=True),
            Table(T("The band array ab, read back: the entry of A in each slot "
                    "(· = corner slot outside the matrix, never read)",
                    "读回的带状数组 ab：每个位置存放的 A 的元素（· 表示落在矩阵之外的角落位置，"
                    "从不读取）"),
                  [T("row of ab", "ab 的行"), T("diagonal", "对角线")] + columns, stored_rows,
                  grid=True),
        ],
        metrics={"stored": int(ab.size), "dense": n * n,
                 "corner_slots": int(ab.size - np.count_nonzero(ab))},
    )


# ---------------------------------------------------------------- the product


@experiment(
    name="gaxpy-vs-blas",
    title=T("Both loop orders against BLAS, and the work they do",
            "两种循环次序与 BLAS 对照，以及它们做了多少运算"),
    description=T(
        "Computes y + A·x for a random m×n band matrix with the column loop and the "
        "diagonal loop, compares both with SciPy's dgbmv and with dense A @ x, and counts "
        "the multiplies and additions the loops really ran.",
        "对随机的 m×n 带状矩阵，用按列循环和按对角线循环分别计算 y + A·x，与 SciPy 的 "
        "dgbmv 以及稠密的 A @ x 对照，并统计循环实际执行的乘法和加法次数。",
    ),
    params=[
        Param("m", "int", 200, T("rows m", "行数 m"), minimum=21, maximum=500, step=1),
        Param("n", "int", 150, T("columns n", "列数 n"), minimum=21, maximum=500, step=1),
        Param("p", "int", 3, T("lower bandwidth p", "下带宽 p"), minimum=0, maximum=10, step=1),
        Param("q", "int", 2, T("upper bandwidth q", "上带宽 q"), minimum=0, maximum=10, step=1),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("bandwidths-swapped", T("p and q are swapped in the call (a classic kl/ku mix-up)",
                                        "调用时把 p 和 q 对调了（经典的 kl/ku 混淆）"),
                breaks=("column-matches-dgbmv", "diagonal-matches-dgbmv", "orders-match-dense")),
        Control("full-bandwidth", T("the loops run over the whole matrix stored as a band of "
                                    "full width (p = m − 1, q = n − 1)",
                                    "循环在按满带宽（p = m − 1，q = n − 1）存储的整个矩阵上运行"),
                breaks=("work-column", "work-diagonal", "storage")),
    ],
    metrics=[
        Metric("band_entries", T("entries in the band", "带内元素个数")),
        Metric(
            "dense_over_band_work",
            T("operations: dense A @ x / diagonal loop", "运算次数：稠密 A @ x / 按对角线循环"),
            "×",
        ),
    ],
)
def gaxpy_vs_blas(m: int, n: int, p: int, q: int, seed: int) -> Result:
    A = random_band_matrix(m, n, p, q, seed)
    rng = np.random.default_rng(seed + 1)
    x, y = rng.standard_normal(n), rng.standard_normal(m)
    ab = to_band(A, p, q)
    reference = blas.dgbmv(m, n, p, q, 1.0, fortran(ab), x, beta=1.0, y=y)
    dense = y + A @ x

    run_p, run_q, stored = p, q, ab
    if control_active("bandwidths-swapped"):
        run_p, run_q = q, p  # the same array, read with the bandwidths mixed up
    if control_active("full-bandwidth"):
        run_p, run_q = m - 1, n - 1
        stored = to_band(A, run_p, run_q)
    column_work, diagonal_work = BandWork(), BandWork()
    column = band_gaxpy(stored, run_p, run_q, x, y, "column", count=column_work)
    diagonal = band_gaxpy(stored, run_p, run_q, x, y, "diagonal", count=diagonal_work)

    entries = int(np.count_nonzero(band_mask(m, n, p, q)))
    dense_flops = 2 * m * n
    worst_dense = max(relative_error(column, dense), relative_error(diagonal, dense))
    checks = [
        agreement_check("column-matches-dgbmv",
                        T("Column loop (Golub & Van Loan) equals scipy dgbmv",
                          "按列循环（Golub 与 Van Loan）与 scipy 的 dgbmv 结果相同"),
                        column, reference),
        agreement_check("diagonal-matches-dgbmv",
                        T("Diagonal loop equals scipy dgbmv",
                          "按对角线循环与 scipy 的 dgbmv 结果相同"),
                        diagonal, reference),
        Check(T("Both loops equal dense y + A @ x", "两种循环都与稠密的 y + A @ x 结果相同"),
              bool(worst_dense <= AGREEMENT_TOLERANCE),
              T(f"relative max error {worst_dense:.1e}", f"最大相对误差 {worst_dense:.1e}"),
              f"≤ {AGREEMENT_TOLERANCE:.0e}", id="orders-match-dense"),
        work_check("work-column", T("Operations run by the column loop = 2 × (entries in the band)",
                                    "按列循环实际执行的运算次数 = 2 ×（带内元素个数）"),
                   column_work, entries, dense_flops),
        work_check("work-diagonal",
                   T("Operations run by the diagonal loop = 2 × (entries in the band)",
                     "按对角线循环实际执行的运算次数 = 2 ×（带内元素个数）"),
                   diagonal_work, entries, dense_flops),
        Check(T(f"Band storage holds (p + q + 1)·n = {(p + q + 1) * n} numbers, dense m·n = "
                f"{m * n}",
                f"带状存储保存 (p + q + 1)·n = {(p + q + 1) * n} 个数，"
                f"稠密存储为 m·n = {m * n} 个"),
              stored.size == (p + q + 1) * n, f"{stored.size}", f"{(p + q + 1) * n}",
              id="storage"),
    ]
    table = Table(
        T("Work and storage counted in this run", "本次运行中统计到的运算量与存储量"),
        [T("what", "项目"), T("count", "数量")],
        [
            [T("entries in the band (dense mask)", "带内元素（由稠密掩码数出）"), entries],
            [T("operations, column loop", "运算次数，按列循环"), column_work.flops],
            [T("operations, diagonal loop", "运算次数，按对角线循环"), diagonal_work.flops],
            [T("operations, dense A @ x (2mn)", "运算次数，稠密 A @ x（2mn）"), dense_flops],
            [T("numbers stored, band", "存储的数，带状"), int(stored.size)],
            [T("numbers stored, dense", "存储的数，稠密"), m * n],
        ],
    )
    return Result(checks=checks, tables=[table],
                  metrics={"band_entries": entries, "dense_over_band_work":
                           dense_flops / max(1, diagonal_work.flops)})


# ---------------------------------------------------------------- how time grows


@experiment(
    name="time-growth",
    title=T("Time grows like n for the band, like n² dense", "带状按 n 增长，稠密按 n² 增长"),
    description=T(
        "Times the diagonal band loop (p = q = 2) and the dense product A @ x of the same "
        "matrix across n on this machine and fits the growth exponent of each.",
        "在本机上对按对角线的带状循环（p = q = 2）和同一矩阵的稠密乘积 A @ x 在不同 n 下计时，"
        "分别拟合增长指数。",
    ),
    params=[
        Param("max_log2n", "int", 16, T("largest log₂ n for the band", "带状的最大 log₂ n"),
              minimum=14, maximum=18, step=1),
        Param("rounds", "int", 15, T("timing rounds (interleaved)", "计时轮数（交替进行）"),
              minimum=1, maximum=15, step=1),
    ],
    controls=[
        Control("band-time-never-grows", T("the band loop is timed at the smallest n whatever n "
                                           "the chart says (a time that never grows)",
                                           "无论图上标的 n 是多少，计时的都是最小 n 的带状循环"
                                           "（耗时从不增长）"),
                breaks=("band-time-linear",)),
        Control("band-on-dense-storage", T("the band product multiplies the matrix stored "
                                           "densely (sizes capped at 2048 to fit in memory)",
                                           "带状乘积实际乘的是稠密存储的矩阵（规模上限 2048，"
                                           "以免内存不够）"),
                breaks=("band-time-linear",)),
        Control("dense-skips-zeros", T("the \"dense\" timing secretly runs the band loop",
                                       "“稠密”计时其实跑的是带状循环"),
                breaks=("dense-time-quadratic",)),
    ],
    timing=True,
    metrics=[
        Metric(
            "band_exponent",
            T("band gaxpy time grows as n^p: exponent p", "带状 gaxpy 耗时按 n^p 增长：指数 p"),
        ),
        Metric(
            "dense_exponent",
            T("dense A @ x time grows as n^p: exponent p", "稠密 A @ x 耗时按 n^p 增长：指数 p"),
        ),
    ],
)
def time_growth(max_log2n: int, rounds: int) -> Result:
    p = q = TIMING_BANDWIDTH
    band_sizes = [2**k for k in range(BAND_MIN_LOG2N, max_log2n + 1)]
    if control_active("band-on-dense-storage"):
        band_sizes = list(DENSE_SIZES)

    def band_call(n: int):
        if control_active("band-time-never-grows"):
            n = band_sizes[0]
        x = np.ones(n)
        if control_active("band-on-dense-storage"):
            return partial(np.matmul, from_band(np.ones((p + q + 1, n)), p, q, n), x)
        return partial(band_gaxpy, np.ones((p + q + 1, n)), p, q, x, None, "diagonal")

    def dense_call(n: int):
        x = np.ones(n)
        if control_active("dense-skips-zeros"):
            return partial(band_gaxpy, np.ones((p + q + 1, n)), p, q, x, None, "diagonal")
        return partial(np.matmul, from_band(np.ones((p + q + 1, n)), p, q, n), x)

    band_calls = {n: band_call(n) for n in band_sizes}
    dense_calls = {n: dense_call(n) for n in DENSE_SIZES}
    band_times: dict[int, list[float]] = {n: [] for n in band_sizes}
    dense_times: dict[int, list[float]] = {n: [] for n in DENSE_SIZES}
    with threadpool_limits(limits=1, user_api="blas"):  # dense A @ x on one core, like the band
        for _ in range(rounds):  # interleaved: a slow spell of the machine hits every size alike
            for n, call in band_calls.items():
                band_times[n].append(fastest_per_call(call, 0.002, 2, max_calls=4096))
            for n, call in dense_calls.items():
                dense_times[n].append(fastest_per_call(call, 0.002, 2, max_calls=4096))
    band_best = {n: min(times) for n, times in band_times.items()}
    dense_best = {n: min(times) for n, times in dense_times.items()}
    band_exponent = growth_exponent(band_sizes, list(band_best.values()))
    dense_exponent = growth_exponent(list(DENSE_SIZES), list(dense_best.values()))
    # One fitted exponent per round; the claims are decided on their confidence interval.
    band_exponents = [growth_exponent(band_sizes, [band_times[n][r] for n in band_sizes])
                      for r in range(rounds)]
    dense_exponents = [growth_exponent(DENSE_SIZES, [dense_times[n][r] for n in DENSE_SIZES])
                       for r in range(rounds)]
    band_window = f"n = {band_sizes[0]}–{band_sizes[-1]}"
    dense_window = f"n = {DENSE_SIZES[0]}–{DENSE_SIZES[-1]}"
    checks = [
        timing_check("band-time-linear",
                     T(f"Band loop time grows about like n: the exponent fitted over "
                       f"{band_window} lies between {BAND_EXPONENT_AT_LEAST} and "
                       f"{BAND_EXPONENT_AT_MOST}",
                       f"带状循环的耗时约按 n 增长：在 {band_window} 上拟合的指数介于 "
                       f"{BAND_EXPONENT_AT_LEAST} 与 {BAND_EXPONENT_AT_MOST} 之间"),
                     band_exponents, at_least=BAND_EXPONENT_AT_LEAST,
                     at_most=BAND_EXPONENT_AT_MOST, unit=""),
        timing_check("dense-time-quadratic",
                     T(f"Dense A @ x time grows like n²: fitted exponent over {dense_window} is "
                       f"at least {DENSE_EXPONENT_AT_LEAST}",
                       f"稠密 A @ x 的耗时按 n² 增长：在 {dense_window} 上拟合的指数不小于 "
                       f"{DENSE_EXPONENT_AT_LEAST}"),
                     dense_exponents, at_least=DENSE_EXPONENT_AT_LEAST, unit=""),
    ]
    chart = LineChart(
        title=T("Time per product (fastest of the rounds)", "每次乘积的耗时（各轮中最快的一次）"),
        x_label=T("n", "n"), y_label=T("seconds", "秒"),
        series=[Series(T("band, diagonal loop (w = 5)", "带状，按对角线循环（w = 5）"),
                       band_sizes, list(band_best.values())),
                Series(T("dense A @ x", "稠密 A @ x"), list(DENSE_SIZES),
                       list(dense_best.values()))],
        log_x=True, log_y=True,
    )
    rows = [[n, f"{band_best[n] * 1e6:.1f}" if n in band_best else "—",
             f"{dense_best[n] * 1e6:.1f}" if n in dense_best else "—"]
            for n in sorted(set(band_sizes) | set(DENSE_SIZES))]
    return Result(
        checks=checks, figures=[chart],
        tables=[Table(T("Time per product, fastest of the rounds (µs)",
                        "每次乘积的耗时，各轮中最快的一次（微秒）"),
                      [T("n", "n"), T("band (w = 5)", "带状（w = 5）"), T("dense", "稠密")], rows)],
        metrics={"band_exponent": band_exponent, "dense_exponent": dense_exponent},
        notes=[T("Wall-clock times from this machine; they vary from run to run. Each size is "
                 "timed in several interleaved rounds; the chart shows the fastest, and each claim "
                 "is decided on the confidence interval of the exponents fitted round by round.",
                 "耗时是本机实测值，每次运行都会不同。每个规模在交替进行的多轮中计时；"
                 "图中是最快的一次，每条断言则按逐轮拟合出的指数的置信区间判定。")],
    )


# ---------------------------------------------------------------- the constant


@experiment(
    name="diagonal-vs-dgbmv",
    title=T("The constant: our diagonal loop against dgbmv", "常数因子：按对角线循环对 dgbmv"),
    description=T(
        "Times the diagonal loop, the column loop and SciPy's dgbmv on the same band matrix "
        "in interleaved rounds, with each array in the memory order its loop streams through.",
        "在交替进行的多轮计时中，对同一带状矩阵测量按对角线循环、按列循环和 SciPy 的 dgbmv，"
        "每个数组都按其循环顺序读取的内存次序存放。",
    ),
    params=[
        Param("n", "choice", "10000", T("order n", "阶数 n"), choices=("1000", "10000", "100000")),
        Param("w", "choice", "5", T("stored width w = p + q + 1", "存储宽度 w = p + q + 1"),
              choices=("3", "5", "11", "21", "41")),
        Param("rounds", "int", 15, T("interleaved rounds", "交替计时轮数"), minimum=3, maximum=25,
              step=1),
    ],
    controls=[
        Control("column-loop-timed", T("the column loop is timed in place of the diagonal loop",
                                       "计时的其实是按列循环，而不是按对角线循环"),
                breaks=("diagonal-at-least-dgbmv-speed",)),
        Control("fortran-for-both", T("dgbmv's \"C-ordered\" input is in fact Fortran-ordered, "
                                      "so no copy happens",
                                      "传给 dgbmv 的“C 顺序”输入其实是 Fortran 顺序，"
                                      "于是并没有复制"),
                breaks=("c-order-copy-costs",)),
        Control("rows-reversed", T("the diagonal loop reads ab with its rows in reverse order",
                                   "按对角线循环读取 ab 时把行的顺序弄反了"),
                breaks=("timed-results-agree",)),
    ],
    timing=True,
    metrics=[
        Metric(
            "diagonal_over_dgbmv",
            T("time: diagonal loop / dgbmv (median of the rounds)",
              "耗时：按对角线循环 / dgbmv（各轮中位数）"),
            "×",
        ),
        Metric(
            "c_order_over_fortran",
            T(
                "time: dgbmv handed C-ordered ab / Fortran-ordered ab",
                "耗时：dgbmv 接收 C 顺序 ab / Fortran 顺序 ab",
            ),
            "×",
        ),
    ],
)
def diagonal_vs_dgbmv(n: str, w: str, rounds: int) -> Result:
    size, width = int(n), int(w)
    q = (width - 1) // 2
    p = width - 1 - q  # w = p + q + 1 (p = q for odd w)
    # Random band storage, built directly: the dense matrix would not fit (10⁵ × 10⁵). Its
    # corner slots hold random numbers too, which no candidate ever reads.
    ab = np.random.default_rng(7).standard_normal((width, size))
    ab_fortran = fortran(ab)
    x = np.random.default_rng(8).standard_normal(size)
    diagonal_ab = ab[::-1].copy() if control_active("rows-reversed") else ab
    diagonal_order = "column" if control_active("column-loop-timed") else "diagonal"
    c_input = ab_fortran if control_active("fortran-for-both") else ab
    candidates = {
        "diagonal": partial(band_gaxpy, diagonal_ab, p, q, x, None, diagonal_order),
        "dgbmv": partial(blas.dgbmv, size, size, p, q, 1.0, ab_fortran, x),
        "dgbmv-c": partial(blas.dgbmv, size, size, p, q, 1.0, c_input, x),
        "diagonal-f": partial(band_gaxpy, ab_fortran, p, q, x, None, "diagonal"),
    }
    results = {name: func() for name, func in candidates.items()}
    with threadpool_limits(limits=1, user_api="blas"):  # our loops use one core; so does BLAS
        comparison = compare(candidates, rounds, 0.002, repeats=5, max_calls=1 << 14)
        column_s = (fastest_per_call(partial(band_gaxpy, ab, p, q, x, None, "column"), 0.01, 2)
                    if size <= COLUMN_LOOP_MAX_N else None)

    speed = comparison.ratio_quartiles("diagonal", "dgbmv").median
    copy_cost = comparison.ratio_quartiles("dgbmv-c", "dgbmv").median
    worst = max(relative_error(v, results["dgbmv"]) for v in results.values())
    if width <= NARROW_WIDTH_AT_MOST and size >= LENGTH_PER_DIAGONAL_AT_LEAST * width:
        beats = timing_check(
            "diagonal-at-least-dgbmv-speed",
            T(f"On this narrow, long band (w = {width}, n = {size}) the diagonal loop takes no "
              "longer than dgbmv (time per call, round by round)",
              f"在这条又窄又长的带上（w = {width}，n = {size}），按对角线循环的耗时不超过 dgbmv"
              "（逐轮比较每次调用的耗时）"),
            comparison.ratios("diagonal", "dgbmv"), at_most=1.0)
    else:
        beats = Check.not_applicable(
            id="diagonal-at-least-dgbmv-speed",
            name=T("On a narrow, long band the diagonal loop takes no longer than dgbmv",
                   "在又窄又长的带上，按对角线循环的耗时不超过 dgbmv"),
            expected="≤ 1×", measured=f"{speed:.2f}×",
            why=T(f"the claim is about narrow, long bands: needs w ≤ {NARROW_WIDTH_AT_MOST} and "
                  f"n ≥ {LENGTH_PER_DIAGONAL_AT_LEAST}·w",
                  f"这一断言只针对又窄又长的带：需要 w ≤ {NARROW_WIDTH_AT_MOST} 且 "
                  f"n ≥ {LENGTH_PER_DIAGONAL_AT_LEAST}·w"))
    checks = [
        beats,
        timing_check("c-order-copy-costs",
                     T("Handing dgbmv a C-ordered ab costs a copy on every call: at least "
                       f"{COPY_SLOWER_AT_LEAST}× the time with a Fortran-ordered one",
                       f"把 C 顺序的 ab 交给 dgbmv，每次调用都要复制一次：耗时至少是 Fortran "
                       f"顺序时的 {COPY_SLOWER_AT_LEAST} 倍"),
                     comparison.ratios("dgbmv-c", "dgbmv"), at_least=COPY_SLOWER_AT_LEAST),
        Check(T("All timed candidates computed the same A·x (so the race is fair)",
                "所有参与计时的实现算出的 A·x 都相同（比赛是公平的）"),
              bool(worst <= AGREEMENT_TOLERANCE),
              T(f"relative max error {worst:.1e}", f"最大相对误差 {worst:.1e}"),
              f"≤ {AGREEMENT_TOLERANCE:.0e}", id="timed-results-agree"),
    ]
    names = {
        "diagonal": T("diagonal loop, C-ordered ab (rows contiguous)",
                      "按对角线循环，C 顺序 ab（行连续）"),
        "dgbmv": T("dgbmv, Fortran-ordered ab (columns contiguous)",
                   "dgbmv，Fortran 顺序 ab（列连续）"),
        "dgbmv-c": T("dgbmv handed a C-ordered ab (f2py copies it each call)",
                     "dgbmv 接收 C 顺序 ab（f2py 每次调用都复制）"),
        "diagonal-f": T("diagonal loop, Fortran-ordered ab (rows strided)",
                        "按对角线循环，Fortran 顺序 ab（行按步幅跳读）"),
    }
    rows = timing_rows(comparison, names, "dgbmv")
    rows.append([T("column loop (Python loop over n columns), fastest of 2",
                   "按列循环（对 n 列的 Python 循环），两次中最快"),
                 f"{column_s * 1e6:.0f}" if column_s is not None else "—", "—"])
    return Result(
        checks=checks,
        tables=[Table(T(f"Time per product at n = {size}, w = {width}: median and quartiles of "
                        f"{rounds} rounds",
                        f"n = {size}、w = {width} 时每次乘积的耗时：{rounds} 轮的中位数与四分位数"),
                      [T("implementation", "实现"), T("µs per call (median, quartiles)",
                                                         "每次调用微秒数（中位数，四分位数）"),
                       T("time ÷ dgbmv's (median, quartiles)",
                         "耗时 ÷ dgbmv 的耗时（中位数，四分位数）")],
                      rows)],
        metrics={"diagonal_over_dgbmv": speed, "c_order_over_fortran": copy_cost},
        notes=[T("Live measurements on the shared machine serving this page; ratios are taken "
                 "round by round, so a slow spell affects both sides of a ratio alike.",
                 "这些是在为本页提供服务的共享机器上的实时测量；耗时比逐轮计算，"
                 "因此一段慢下来的时间会同样影响比值的两边。")],
    )


EXPERIMENTS = [band_layout, band_refusals, gaxpy_vs_blas, time_growth, diagonal_vs_dgbmv]
