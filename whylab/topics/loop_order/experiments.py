"""Experiments for "loop order and blocking": simulated cache misses, measured speed.

Everything runs :mod:`whylab.numerics.loops`: the miss counts come from its cache
simulator replaying the loops' real address trace, the timings from its
numba-compiled loops, and the expected values from the independent pencil model
in :mod:`whylab.topics.loop_order.model` (CS:APP's stride argument), NumPy's
``A @ B``, and plain-Python reference code.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from threadpoolctl import threadpool_limits

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
from whylab.numerics.loops import (
    LOOP_ORDERS,
    MR,
    NR,
    WorkCount,
    access_trace,
    block_schedule,
    matmul_blocked,
    matmul_interpreted,
    matmul_loop,
    matmul_packed,
    pack_b,
    simulate_matmul,
)
from whylab.numerics.loops.reference import reference_misses
from whylab.topics.loop_order.model import (
    CLASSES,
    CSAPP_32_BYTE_LINES,
    DOUBLE_BYTES,
    book_misses,
    fits_misses,
    inner_loops_lines,
    inner_stride,
    most_lines_in_one_set,
)
from whylab.topics.shared import relative_error, timing_check

ARRAYS = ("A", "B", "C")
SMALLEST_CACHE = 256
SWEEP_CACHES = tuple(256 * 2**k for k in range(8))  # 256 B .. 32 KiB
REFERENCE_N = 8  # the plain-Python reference replays n = 8 (about 2000 accesses)
# "secretly runs another order": each order swapped for one of another miss class
SECRET_SWAP = {"ijk": "jki", "jik": "kji", "ikj": "ijk", "kij": "jik", "jki": "ikj", "kji": "kij"}
PRODUCT_TOLERANCE = 1e-10  # relative max error against NumPy's A @ B
TIMING_BUDGET_S = 0.01
CLASS_MARGIN = 1.2  # each miss class must run at least this much faster than the next
LADDER_MARGIN = 1.2
PACKED_MARGIN = 1.15  # packing against naive blocking: a smaller gap (our micro-kernel is scalar)
BLOCKING_ROUNDS = 9
TIMING_ROUNDS = 9  # interleaved rounds of every timing claim: 9 trim one outlier each side
COMPILE_FACTOR = 20
PYTHON_N = 40  # the interpreted loop is timed at a smaller n (about 30 ms)
BLOCKING_SIM = {"n": 100, "block": 20, "line_bytes": 32, "cache_bytes": 8192, "ways": 8}


SEED = Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
             seed=True)


def _class_name(order: str) -> str:
    return {0: "0.5", 1: "1.25", 2: "2.0"}[next(c for c, members in enumerate(CLASSES)
                                                 if order in members)]


def simulated_order(order: str) -> str:
    """The order whose loops are really replayed (another one under the secret-order control)."""
    return SECRET_SWAP[order] if control_active("secret-order") else order




def gflops(n_flops: int, time_s: float) -> float:
    return n_flops / time_s / 1e9


def _operands(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)), rng.standard_normal((n, n))


# ---------------------------------------------------------------- simulated misses


@experiment(
    name="misses-by-order",
    title=T("Cache misses per iteration, loop order by loop order",
            "每种循环顺序在每次内层迭代中的缓存缺失"),
    description=T(
        "Replays the real address trace of all six loop orders through a set-associative LRU "
        "cache of growing size, and compares the misses with Bryant and O'Hallaron's pencil "
        "model when a row does not fit, and with the one-miss-per-line model when the inner "
        "loops do.",
        "把六种循环顺序的真实访存地址序列依次送进容量逐步增大的组相联 LRU 缓存，"
        "统计缺失次数：缓存装不下矩阵的一行时与 Bryant 和 O'Hallaron 的手算模型对照，"
        "装得下内两层循环的数据时与“每条缓存行缺失一次”的模型对照。",
    ),
    params=[
        Param("n", "int", 60, T("matrix size n", "矩阵阶数 n"), minimum=32, maximum=100,
              step=4),
        Param("line_bytes", "choice", "32", T("cache line (bytes)", "缓存行大小（字节）"),
              choices=("16", "32", "64")),
        Param("ways", "choice", "4", T("associativity (ways per set)", "相联度（每组路数）"),
              choices=("2", "4", "8")),
    ],
    controls=[
        Control("wrong-line-size",
                T("the simulator is told the cache line is half its real length",
                  "模拟器用的缓存行长度只有真实值的一半"),
                breaks=("csapp-table", "inner-loops-fit", "matches-reference")),
        Control("no-associativity",
                T("the simulated cache is direct-mapped instead of set-associative",
                  "模拟的缓存是直接映射的，而不是组相联的"),
                breaks=("inner-loops-fit", "matches-reference")),
        Control("secret-order",
                T("the simulator replays another loop order than the one named",
                  "模拟器重放的是另一种循环顺序，而不是所标的那种"),
                breaks=("csapp-table", "matches-reference")),
    ],
    metrics=[
        Metric("small_cache_bytes", T("cache smaller than one row", "比矩阵的一行还小的缓存"), "B"),
        Metric(
            "fitting_cache_bytes",
            T(
                "cache that holds the working set (0: none tried)",
                "能装下工作集的缓存（0 表示没有）",
            ),
            "B",
        ),
    ],
)
def misses_by_order(n: int, line_bytes: str, ways: str) -> Result:
    line, ways_n = int(line_bytes), int(ways)
    sim_line = line // 2 if control_active("wrong-line-size") else line
    sim_ways = 1 if control_active("no-associativity") else ways_n
    caches = [c for c in SWEEP_CACHES if c % (ways_n * line) == 0]
    small = caches[0]
    needed_lines = 2 * inner_loops_lines(n, line)  # twice: room for uneven sets
    matrix_bytes = n * n * DOUBLE_BYTES
    fitting = next((c for c in caches if c // line >= needed_lines and c < matrix_bytes), None)

    def simulate(order: str, cache: int):
        return simulate_matmul(n, simulated_order(order), sim_line, cache, sim_ways)

    sweep = {order: [simulate(order, c).total_per_iteration for c in caches]
             for order in LOOP_ORDERS}
    at_small = {order: simulate(order, small) for order in LOOP_ORDERS}
    at_fit = {order: simulate(order, fitting) for order in LOOP_ORDERS} if fitting else None
    slack = 2 / n  # the register load (and C's store) once per middle iteration

    crowded = (max(most_lines_in_one_set(o, n, line, fitting // (ways_n * line))
                   for o in LOOP_ORDERS) if fitting else 0)
    checks = [csapp_check(n, line, small, at_small, slack),
              fit_check(n, line, fitting, at_fit, slack, crowded, ways_n),
              reference_check(line, small, ways_n, sim_line, sim_ways)]
    chart = LineChart(
        title=T(f"Misses per inner-loop iteration, n = {n}, {line}-byte lines, {ways_n}-way LRU",
                f"每次内层迭代的缺失次数：n = {n}，{line} 字节缓存行，{ways_n} 路 LRU"),
        x_label=T("cache size (bytes)", "缓存容量（字节）"),
        y_label=T("misses per iteration", "每次迭代的缺失次数"),
        series=[Series(T(order, order), caches, sweep[order]) for order in LOOP_ORDERS],
        log_x=True,
    )
    rows = []
    for order in LOOP_ORDERS:
        per = at_small[order].per_iteration
        book = CSAPP_32_BYTE_LINES[order]
        rows.append([order, _class_name(order), *(f"{per[a]:.3f}" for a in ARRAYS),
                     f"{at_small[order].total_per_iteration:.3f}",
                     f"{sum(book):.2f}" if line == 32 else "—",
                     f"{at_fit[order].total_per_iteration:.3f}" if at_fit else "—"])
    table = Table(
        title=T(f"Misses per iteration: {small}-byte cache (a row is {8 * n} bytes) and "
                f"{fitting or '—'}-byte cache",
                f"每次迭代的缺失次数：{small} 字节缓存（矩阵的一行占 {8 * n} 字节）与 "
                f"{fitting or '—'} 字节缓存"),
        columns=[T("order", "顺序"), T("CS:APP class", "CS:APP 分类"), T("A", "A"), T("B", "B"),
                 T("C", "C"), T("total, small cache", "小缓存合计"),
                 T("CS:APP (32-byte lines)", "CS:APP（32 字节行）"),
                 T("total, inner loops fit", "内层装得下时合计")],
        rows=rows,
    )
    return Result(checks=checks, figures=[chart], tables=[table],
                  metrics={"small_cache_bytes": small, "fitting_cache_bytes": fitting or 0})


def csapp_check(n, line, small, at_small, slack) -> Check:
    model = "1.25 / 0.5 / 2.0" if line == 32 else f"the stride rule for {line}-byte lines"
    model_zh = "1.25 / 0.5 / 2.0" if line == 32 else f"{line} 字节缓存行下的步幅规则"
    expected = T(f"CS:APP ({model}), each array within [book, book + 2/n = {slack:.3f}]",
                 f"CS:APP（{model_zh}），每个数组落在 [书中值, 书中值 + 2/n = {slack:.3f}] 之内")
    name = T("With a cache smaller than one row, the misses are CS:APP's",
             "缓存比矩阵的一行还小时，缺失次数与 CS:APP 的表一致")
    if small >= DOUBLE_BYTES * n:
        return Check.not_applicable(
            id="csapp-table", name=name, expected=expected,
            why=T(f"needs a row (8n = {8 * n} bytes) larger than the {small}-byte cache: "
                  "a larger n",
                  f"需要矩阵的一行（8n = {8 * n} 字节）大于 {small} 字节的缓存：请增大 n"))
    worst = 0.0
    for order, stats in at_small.items():
        for array in ARRAYS:
            book = book_misses(order, array, line, n)
            worst = max(worst, stats.per_iteration[array] - book,
                        book - stats.per_iteration[array] + slack)
    totals = " / ".join(f"{at_small[o].total_per_iteration:.2f}" for o in ("ijk", "kij", "jki"))
    return Check(name, worst <= slack + 1e-12,
                 T(f"ijk / kij / jki: {totals}", f"ijk / kij / jki：{totals}"), expected,
                 id="csapp-table")


def fit_check(n, line, fitting, at_fit, slack, crowded, ways) -> Check:
    per_line = DOUBLE_BYTES / line
    expected = f"{per_line:.4g} ± {slack:.3f}"
    name = T("Once the inner loops' data fits, every order misses once per line",
             "内两层循环的数据装得下时，每种顺序都只在每条缓存行上缺失一次")
    if at_fit is None:
        return Check.not_applicable(
            id="inner-loops-fit", name=name, expected=expected,
            why=T("needs a simulated cache that holds the inner loops but not a whole matrix: "
                  "a smaller n or shorter lines",
                  "需要一个装得下内两层循环、却装不下整个矩阵的缓存：请减小 n 或缩短缓存行"))
    # LRU needs room beside the resident lines for the lines that stream through a set:
    # over n = 32..100 (step 8), every line size, 4 and 8 ways, each case with more resident
    # lines in one set than half its ways broke the model, and none at or below half did.
    if 2 * crowded > ways:
        return Check.not_applicable(
            id="inner-loops-fit", name=name, expected=expected,
            why=T(f"the inner loops' data fits the {fitting}-byte cache by capacity, but "
                  f"{crowded} of its lines fall in one set of {ways} ways (more than half the "
                  "ways: LRU evicts them for the lines streaming through), so conflict misses "
                  "remain: more ways, another n or other lines",
                  f"内两层循环的数据按容量装得下 {fitting} 字节的缓存，但其中 {crowded} 条"
                  f"缓存行落在同一组，超过了每组 {ways} 路的一半（LRU 会为流过的缓存行"
                  "把它们逐出），冲突缺失仍会发生：请增加路数、换一个 n 或换一种缓存行大小"))
    model = {o: sum(fits_misses(o, a, line) for a in ARRAYS) for o in LOOP_ORDERS}
    deviation = max(abs(at_fit[o].total_per_iteration - model[o]) for o in LOOP_ORDERS)
    spread = ", ".join(f"{at_fit[o].total_per_iteration:.3f}" for o in LOOP_ORDERS)
    return Check(name, deviation <= slack, spread, expected, id="inner-loops-fit")


def reference_check(line, cache, ways, sim_line, sim_ways) -> Check:
    """The compiled simulator against the plain-Python LRU on a small n, all six orders."""
    mismatched = [
        order for order in LOOP_ORDERS
        if simulate_matmul(REFERENCE_N, simulated_order(order), sim_line, cache,
                           sim_ways).misses
        != reference_misses(REFERENCE_N, order, line, cache, ways)
    ]
    return Check(
        T(f"The compiled simulator equals a plain-Python LRU cache (n = {REFERENCE_N})",
          f"编译后的模拟器与纯 Python 写的 LRU 缓存结果相同（n = {REFERENCE_N}）"),
        not mismatched,
        T("all six orders equal" if not mismatched else f"differs for {', '.join(mismatched)}",
          "六种顺序全部相同" if not mismatched else f"{'、'.join(mismatched)} 不同"),
        T("the same misses per array", "每个数组的缺失次数相同"),
        id="matches-reference",
    )


# ---------------------------------------------------------------- access pattern


@experiment(
    name="access-pattern",
    title=T("Which elements and cache lines each loop order touches",
            "每种循环顺序依次访问哪些元素和缓存行"),
    description=T(
        "The first accesses of the chosen loop order, from the same trace the simulator "
        "replays: the cache line of A, B and C touched at each step, and the stride of each "
        "array in the inner loop.",
        "取模拟器重放的同一份访存序列，画出所选循环顺序最初若干步：每一步访问的 A、B、C "
        "的缓存行，以及每个数组在内层循环中的步幅。",
    ),
    params=[
        Param("order", "choice", "ijk", T("loop order", "循环顺序"), choices=LOOP_ORDERS),
        Param("n", "int", 8, T("matrix size n", "矩阵阶数 n"), minimum=4, maximum=16, step=1),
    ],
    controls=[
        Control("secret-order",
                T("the trace comes from another loop order than the one named",
                  "访存序列来自另一种循环顺序，而不是所标的那种"),
                breaks=("inner-strides", "lines-per-inner-loop")),
    ],
)
def access_pattern(order: str, n: int) -> Result:
    line = 32
    per_line = line // DOUBLE_BYTES
    trace = access_trace(n, simulated_order(order), 3 * (3 * n + 2))
    by_array = {a: [(r, c) for name, r, c in trace if name == a] for a in ARRAYS}
    first_inner = _first_inner_loop(trace, order, n)
    measured_strides = {a: _stride(first_inner[a], n) for a in ARRAYS}
    expected_strides = {a: inner_stride(order, a, n) for a in ARRAYS}
    lines_touched = {a: len({(r * n + c) // per_line for r, c in first_inner[a]})
                     for a in ARRAYS}
    # in a register: no line inside the loop; stride 1: n / (doubles per line); stride n: n
    expected_lines = {a: {0: 0, 1: -(-n // per_line)}.get(expected_strides[a], n)
                      for a in ARRAYS}
    checks = [
        Check(T("Each array's stride in the inner loop follows from its subscripts",
                "每个数组在内层循环中的步幅由它的下标决定"),
              measured_strides == expected_strides,
              " / ".join(f"{a}: {measured_strides[a]}" for a in ARRAYS),
              " / ".join(f"{a}: {expected_strides[a]}" for a in ARRAYS), id="inner-strides"),
        Check(T(f"Cache lines one inner loop touches: n/{per_line} at stride 1, n at stride n",
                f"一趟内层循环碰到的缓存行：步幅 1 时 n/{per_line} 条，步幅 n 时 n 条"),
              lines_touched == expected_lines,
              " / ".join(f"{a}: {lines_touched[a]}" for a in ARRAYS),
              " / ".join(f"{a}: {expected_lines[a]}" for a in ARRAYS),
              id="lines-per-inner-loop"),
    ]
    steps = list(range(len(trace)))
    series = []
    for a in ARRAYS:
        xs = [s for s, (name, _, _) in enumerate(trace) if name == a]
        ys = [(r * n + c) // per_line for name, r, c in trace if name == a]
        series.append(Series(T(f"{a}: line touched", f"{a}：访问的缓存行"), xs, ys,
                             draw="points"))
    chart = LineChart(
        title=T(f"Cache line of each access, loop order {order}, n = {n}, 32-byte lines",
                f"每次访问落在哪条缓存行：循环顺序 {order}，n = {n}，32 字节缓存行"),
        x_label=T("access number (program order)", "访问序号（按程序顺序）"),
        y_label=T("cache line within the array", "数组内的缓存行号"),
        series=series,
    )
    table = Table(
        title=T(f"First touch of each element of A, B and C in the first {len(steps)} accesses",
                f"前 {len(steps)} 次访问中 A、B、C 各元素第一次被访问的序号"),
        columns=[T("array", "数组"), T("row", "行"),
                 *(T(f"col {c}", f"第 {c} 列") for c in range(n))],
        rows=_first_touch_rows(trace, n, by_array),
        grid=True,
    )
    return Result(checks=checks, figures=[chart], tables=[table],
                  notes=[T("Stride 1 climbs one line every 4 accesses; stride n jumps a line "
                           "at every access; a flat line is the operand held in a register.",
                           "步幅为 1 时每 4 次访问才换一条缓存行；步幅为 n 时每次访问都换行；"
                           "水平线是放在寄存器里的那个操作数。")])


def _first_inner_loop(trace, order, n):
    """Per array, the elements read in the first run of the inner loop.

    The trace starts with the register load; then each of the n inner
    iterations makes 2 accesses (A and B, when the inner index is k) or 3 (one
    operand, and C read and written back). C's write-back touches the element
    just read, so it is not counted again.
    """
    per_iteration = 2 if order[2] == "k" else 3
    body = trace[1:1 + per_iteration * n]
    elements = {a: [] for a in ARRAYS}
    for name, r, c in body:
        if name == "C" and elements["C"] and elements["C"][-1] == (r, c):
            continue
        elements[name].append((r, c))
    return elements


def _stride(elements, n):
    if len(elements) < 2:
        return 0
    (r0, c0), (r1, c1) = elements[0], elements[1]
    return (r1 * n + c1) - (r0 * n + c0)


def _first_touch_rows(trace, n, by_array):
    first = {}
    for step, (name, r, c) in enumerate(trace):
        first.setdefault((name, r, c), step)
    rows = []
    for a in ARRAYS:
        touched_rows = sorted({r for r, _ in by_array[a]})
        for r in touched_rows:
            rows.append([a, r, *(str(first[(a, r, c)]) if (a, r, c) in first else "·"
                                 for c in range(n))])
    return rows


# ---------------------------------------------------------------- measured speed


def timed_order(order: str) -> str:
    """The order whose compiled loop really runs (another under the secret-order control)."""
    return SECRET_SWAP[order] if control_active("secret-order") else order


@experiment(
    name="order-timing",
    title=T("Wall-clock speed of the six compiled loop orders", "六种编译后循环顺序的实测速度"),
    description=T(
        "Times the six numba-compiled loop orders on this machine and ranks them against the "
        "miss classes of the cache model (0.5 < 1.25 < 2.0 misses per iteration).",
        "在本机上对六种用 numba 编译的循环顺序计时，并把速度排名与缓存模型的缺失分类"
        "（每次迭代 0.5 < 1.25 < 2.0 次缺失）对照。",
    ),
    params=[
        Param("n", "int", 256, T("matrix size n", "矩阵阶数 n"), minimum=128, maximum=512,
              step=32),
        SEED,
    ],
    timing=True,
    time_limit_s=60.0,
    controls=[
        Control("secret-order",
                T("each named loop order secretly runs an order of another miss class",
                  "每个所标的循环顺序暗中运行了另一类缺失的顺序"),
                breaks=("ranking-matches-misses",)),
        Control("c-not-reset",
                T("C is not reset between timing runs, so the products pile up",
                  "两次计时之间没有把 C 清零，乘积一次次累加上去"),
                breaks=("orders-equal-numpy",)),
        Control("one-order-is-blas",
                T("one loop order secretly returns BLAS's A @ B, which adds each C_ij's terms "
                  "in another order",
                  "有一种循环顺序暗中返回 BLAS 的 A @ B，它以另一种次序累加每个 C_ij 的各项"),
                breaks=("orders-bitwise-equal",)),
    ],
    metrics=[
        Metric("gflops_ijk", T("speed, ijk", "速度，ijk"), "GFLOP/s"),
        Metric("gflops_ikj", T("speed, ikj", "速度，ikj"), "GFLOP/s"),
        Metric("gflops_jik", T("speed, jik", "速度，jik"), "GFLOP/s"),
        Metric("gflops_jki", T("speed, jki", "速度，jki"), "GFLOP/s"),
        Metric("gflops_kij", T("speed, kij", "速度，kij"), "GFLOP/s"),
        Metric("gflops_kji", T("speed, kji", "速度，kji"), "GFLOP/s"),
    ],
)
def order_timing(n: int, seed: int) -> Result:
    A, B = _operands(n, seed)
    reference = A @ B
    flops = 2 * n**3
    runs, results, accumulators = {}, {}, {}
    for order in LOOP_ORDERS:
        running = timed_order(order)
        accumulators[order] = np.zeros((n, n))
        if control_active("c-not-reset"):
            run = partial(matmul_loop, A, B, running, accumulators[order])
        else:
            run = partial(matmul_loop, A, B, running)
        results[order] = run()
        runs[order] = run
    timed = compare(runs, TIMING_ROUNDS, TIMING_BUDGET_S, warmup=0, repeats=2, max_calls=256)
    if control_active("c-not-reset"):  # what C holds after the timing runs piled up in it
        results = accumulators
    if control_active("one-order-is-blas"):
        results["kji"] = A @ B
    # Every order adds the n products of each C_ij in the same order (k = 0, 1, ...), so the
    # six results must agree to the last bit, not merely to a tolerance.
    differing = [o for o in LOOP_ORDERS if not np.array_equal(results[o], results["ijk"])]
    errors = {order: relative_error(results[order], reference) for order in LOOP_ORDERS}
    rate = {order: gflops(flops, timed.median(order)) for order in LOOP_ORDERS}
    # Per round: the slowest of each class against the fastest of the class after it (times
    # of one round, so a slow spell hits both sides); the claim holds when both gaps do.
    round_gaps = []
    for r in range(TIMING_ROUNDS):
        times = [[timed.times[o][r] for o in members] for members in CLASSES]
        round_gaps.append(min(min(slower) / max(faster)
                              for faster, slower in zip(times, times[1:], strict=False)))
    class_rates = [[rate[o] for o in members] for members in CLASSES]
    gaps = [min(faster) / max(slower) for faster, slower in zip(class_rates, class_rates[1:],
                                                                  strict=False)]
    worst_error = max(errors.values())
    checks = [
        Check(T("Every loop order computes A·B (against NumPy)",
                "每种循环顺序算出的都是 A·B（与 NumPy 对照）"),
              worst_error <= PRODUCT_TOLERANCE, f"{worst_error:.1e}",
              f"≤ {PRODUCT_TOLERANCE:.0e}", id="orders-equal-numpy"),
        Check(T("The six orders give bitwise the same C: each adds the terms of every C_ij in "
                "the same order, k = 0, 1, …, n − 1",
                "六种顺序得到逐位相同的 C：每种都按同样的次序 k = 0, 1, …, n − 1 "
                "累加每个 C_ij 的各项"),
              not differing,
              T("all six identical" if not differing
                else f"differ from ijk: {', '.join(differing)}",
                "六种完全相同" if not differing else f"与 ijk 不同：{'、'.join(differing)}"),
              T("identical bits", "逐位相同"), id="orders-bitwise-equal"),
        timing_check("ranking-matches-misses",
                     T("The speed ranking is the miss ranking: class 0.5 beats 1.25 beats 2.0 "
                       f"by at least {CLASS_MARGIN}× (per round, the smaller of the two gaps "
                       f"between a class's slowest and the next class's fastest; medians: "
                       f"{gaps[0]:.1f}×, {gaps[1]:.1f}×)",
                       f"速度排名与缺失排名一致：0.5 类快于 1.25 类，1.25 类快于 2.0 类，"
                       f"至少快 {CLASS_MARGIN} 倍（每轮取两处差距中较小的一个，即每类最慢者与下一类"
                       f"最快者之比；中位数：{gaps[0]:.1f} 倍、{gaps[1]:.1f} 倍）"),
                     round_gaps, at_least=CLASS_MARGIN),
    ]
    table = Table(
        title=T("Measured speed per loop order (one thread, compiled by numba)",
                "各循环顺序的实测速度（单线程，numba 编译）"),
        columns=[T("order", "顺序"), T("misses / iteration (CS:APP)", "每次迭代缺失（CS:APP）"),
                 T("GFLOP/s", "GFLOP/s"), T("time per product", "每次乘法耗时")],
        rows=[[o, _class_name(o), f"{rate[o]:.2f}", f"{flops / rate[o] / 1e6:.1f} ms"]
              for o in LOOP_ORDERS],
    )
    return Result(checks=checks, tables=[table],
                  metrics={f"gflops_{o}": rate[o] for o in LOOP_ORDERS})


@experiment(
    name="blocking",
    title=T("Blocking and packing: the same arithmetic, less data moved",
            "分块与打包：运算量不变，搬运的数据更少"),
    description=T(
        "Runs the blocked loops, the Goto / van de Geijn packed form and BLAS dgemm on the same "
        "matrices; counts the multiply-adds each really did, simulates the cache misses with "
        "and without blocking, and times them.",
        "对同一组矩阵运行分块循环、Goto / van de Geijn 打包算法和 BLAS 的 dgemm；"
        "统计每种做了多少次乘加，模拟分块前后的缓存缺失，并计时。",
    ),
    params=[
        Param("n", "int", 384, T("matrix size n", "矩阵阶数 n"), minimum=64, maximum=768,
              step=64),
        Param("block", "choice", "32", T("block size b", "块大小 b"),
              choices=("16", "32", "64", "128")),
        SEED,
    ],
    timing=True,
    time_limit_s=60.0,
    controls=[
        Control("skip-a-block",
                T("the block schedule leaves out one block", "分块顺序表漏掉了一个块"),
                breaks=("blocked-equals-numpy", "work-unchanged")),
        Control("block-is-whole-matrix",
                T("the simulated 'blocked' loops use one block as big as the matrix",
                  "模拟的“分块”循环只用一个和整个矩阵一样大的块"),
                breaks=("data-moved-reduced",)),
        Control("packing-skipped",
                T("the 'packed' buffer is a plain row-by-row copy, not micro-panels",
                  "所谓“打包”缓冲区只是逐行拷贝，没有排成微面板"),
                breaks=("packed-layout",)),
        Control("packed-runs-naive",
                T("the packed timing really runs the naive blocked loops",
                  "打包算法的计时实际跑的是朴素分块循环"),
                breaks=("packed-beats-blocked",)),
    ],
    metrics=[
        Metric("gflops_blocked", T("speed, blocked loops", "速度，分块循环"), "GFLOP/s"),
        Metric("gflops_packed", T("speed, packed micro-kernel", "速度，打包 + 微内核"), "GFLOP/s"),
        Metric(
            "gflops_dgemm",
            T("speed, BLAS dgemm (one thread)", "速度，BLAS dgemm（单线程）"),
            "GFLOP/s",
        ),
    ],
)
def blocking(n: int, block: str, seed: int) -> Result:
    b = int(block)
    A, B = _operands(n, seed)
    reference = A @ B
    schedule = block_schedule(n, n, n, b)
    if control_active("skip-a-block"):
        schedule = schedule[1:]
    blocked_work, packed_work = WorkCount(), WorkCount()
    blocked = matmul_blocked(A, B, b, schedule=schedule, count=blocked_work)
    packed = matmul_packed(A, B, count=packed_work)
    blocked_error = relative_error(blocked, reference)
    packed_error = relative_error(packed, reference)

    sim = BLOCKING_SIM
    sim_block = sim["n"] if control_active("block-is-whole-matrix") else sim["block"]
    plain = simulate_matmul(sim["n"], "ikj", sim["line_bytes"], sim["cache_bytes"], sim["ways"])
    tiled = simulate_matmul(sim["n"], "ikj", sim["line_bytes"], sim["cache_bytes"], sim["ways"],
                            block=sim_block)
    layout_ok = _packed_layout_matches(B)

    flops = 2 * n**3
    naive_run = partial(matmul_blocked, A, B, b)
    packed_run = naive_run if control_active("packed-runs-naive") else partial(matmul_packed, A, B)
    with threadpool_limits(limits=1, user_api="blas"):
        timed = compare({"blocked": naive_run, "packed": packed_run,
                         "dgemm": partial(np.matmul, A, B)}, BLOCKING_ROUNDS, TIMING_BUDGET_S,
                        repeats=2, max_calls=256)
    rates = {name: gflops(flops, timed.median(name)) for name in timed.times}
    checks = [
        Check(T("The blocked loops compute A·B", "分块循环算出的是 A·B"),
              blocked_error <= PRODUCT_TOLERANCE and packed_error <= PRODUCT_TOLERANCE,
              f"{max(blocked_error, packed_error):.1e}", f"≤ {PRODUCT_TOLERANCE:.0e}",
              id="blocked-equals-numpy"),
        Check(T("Blocking and packing leave the arithmetic unchanged: n³ multiply-adds, counted",
                "分块和打包不改变运算量：实测乘加次数都是 n³"),
              blocked_work.multiply_adds == n**3 == packed_work.multiply_adds,
              f"{blocked_work.multiply_adds:,} / {packed_work.multiply_adds:,}", f"{n**3:,}",
              id="work-unchanged"),
        Check(T(f"Blocking ({sim['block']}×{sim['block']}) cuts the simulated misses at least "
                f"in half", f"分块（{sim['block']}×{sim['block']}）让模拟的缺失至少减半"),
              tiled.total_misses * 2 <= plain.total_misses,
              f"{tiled.total_per_iteration:.3f} / {plain.total_per_iteration:.3f}",
              "≤ 1/2", id="data-moved-reduced"),
        Check(T(f"The packed buffer holds B's panel as {NR}-column micro-panels, row by row",
                f"打包缓冲区把 B 的面板存成一列列宽 {NR} 的微面板，逐行排列"),
              layout_ok, T("as np.reshape builds it" if layout_ok else "differs",
                           "与 np.reshape 的结果相同" if layout_ok else "不同"),
              T("same as np.reshape", "与 np.reshape 的结果相同"), id="packed-layout"),
        timing_check("packed-beats-blocked",
                     T("Packing beats the naive blocked loops", "打包算法快于朴素分块循环"),
                     timed.ratios("blocked", "packed"), at_least=PACKED_MARGIN),
    ]
    table = Table(
        title=T(f"n = {n}: work, data moved and speed", f"n = {n}：运算量、数据搬运与速度"),
        columns=[T("form", "形式"), T("multiply-adds (counted)", "乘加次数（实测）"),
                 T("GFLOP/s", "GFLOP/s"), T("fraction of dgemm", "相对 dgemm 的比例")],
        rows=[
            [T(f"blocked {b}×{b}", f"分块 {b}×{b}"), f"{blocked_work.multiply_adds:,}",
             f"{rates['blocked']:.2f}", f"{rates['blocked'] / rates['dgemm']:.1%}"],
            [T(f"packed ({MR}×{NR} micro-kernel)", f"打包（{MR}×{NR} 微内核）"),
             f"{packed_work.multiply_adds:,}", f"{rates['packed']:.2f}",
             f"{rates['packed'] / rates['dgemm']:.1%}"],
            [T("BLAS dgemm (1 thread)", "BLAS dgemm（单线程）"), f"{n**3:,}",
             f"{rates['dgemm']:.2f}", "100%"],
        ],
    )
    sim_table = Table(
        title=T(f"Simulated misses per iteration (n = {sim['n']}, {sim['cache_bytes']}-byte "
                f"{sim['ways']}-way cache, 32-byte lines)",
                f"模拟的每次迭代缺失（n = {sim['n']}，{sim['cache_bytes']} 字节 "
                f"{sim['ways']} 路缓存，32 字节缓存行）"),
        columns=[T("loops", "循环"), T("A", "A"), T("B", "B"), T("C", "C"),
                 T("total", "合计"), T("inner iterations", "内层迭代次数")],
        rows=[[T(name, zh), *(f"{stats.per_iteration[a]:.3f}" for a in ARRAYS),
               f"{stats.total_per_iteration:.3f}", f"{stats.iterations:,}"]
              for name, zh, stats in (("ikj", "ikj", plain),
                                      (f"ikj in {sim_block}×{sim_block} blocks",
                                       f"ikj，{sim_block}×{sim_block} 分块", tiled))],
    )
    return Result(checks=checks, tables=[table, sim_table],
                  metrics={"gflops_blocked": rates["blocked"], "gflops_packed": rates["packed"],
                           "gflops_dgemm": rates["dgemm"]})


def _packed_layout_matches(B: np.ndarray) -> bool:
    """pack_b's buffer for an edge-straddling panel of B against NumPy's reshape."""
    rows, cols = min(5, B.shape[0]), min(NR + 3, B.shape[1])
    panel = B[:rows, :cols]
    slivers = -(-cols // NR)
    padded = np.zeros((rows, slivers * NR))
    padded[:, :cols] = panel
    expected = padded.reshape(rows, slivers, NR).transpose(1, 0, 2).ravel()
    if control_active("packing-skipped"):
        buffer = np.ascontiguousarray(padded).ravel()
    else:
        buffer = pack_b(B, 0, 0, rows, cols)
    return bool(buffer.shape == expected.shape and np.array_equal(buffer, expected))


@experiment(
    name="speed-ladder",
    title=T("The speed ladder: from interpreted Python to BLAS",
            "速度阶梯：从解释执行的 Python 到 BLAS"),
    description=T(
        "One matrix product, climbed rung by rung: the Python interpreter, the compiled loop "
        "orders from worst to best with our packed blocks where they land, and BLAS dgemm "
        "(one thread), each as GFLOP/s and as a fraction of dgemm, the practical ceiling of "
        "this machine.",
        "同一个矩阵乘法，一级一级往上爬：Python 解释器、从最差到最好的编译循环顺序"
        "（我们的打包分块按实测速度排在其间）、BLAS 的 dgemm（单线程）；每一级给出 GFLOP/s，"
        "以及相对 dgemm——本机实际能达到的上限——的比例。",
    ),
    params=[
        Param("n", "int", 256, T("matrix size n", "矩阵阶数 n"), minimum=128, maximum=512,
              step=64),
        SEED,
    ],
    timing=True,
    time_limit_s=60.0,
    controls=[
        Control("compiled-as-interpreted",
                T("the 'interpreted' rung really runs a compiled loop",
                  "“解释执行”这一级实际跑的是编译后的循环"),
                breaks=("compiled-beats-python",)),
        Control("ceiling-is-a-loop",
                T("the 'dgemm' rung really runs our packed loops",
                  "“dgemm”这一级实际跑的是我们自己的打包循环"),
                breaks=("dgemm-is-ceiling",)),
        Control("best-is-worst",
                T("the 'best order' rung really runs jki", "“最好的顺序”这一级实际跑的是 jki"),
                breaks=("loop-orders-climb",)),
    ],
    metrics=[
        Metric(
            "dgemm_gflops",
            T("speed, BLAS dgemm (one thread)", "速度，BLAS dgemm（单线程）"),
            "GFLOP/s",
        ),
        Metric(
            "python_gflops",
            T("speed, interpreted Python", "速度，解释执行的 Python"),
            "GFLOP/s",
        ),
    ],
)
def speed_ladder(n: int, seed: int) -> Result:
    A, B = _operands(n, seed)
    small_A, small_B = A[:PYTHON_N, :PYTHON_N], B[:PYTHON_N, :PYTHON_N]
    if control_active("compiled-as-interpreted"):
        python_run = partial(matmul_loop, small_A, small_B, "ikj")
    else:
        python_run = partial(matmul_interpreted, small_A, small_B)
    best = "jki" if control_active("best-is-worst") else "ikj"
    ceiling = (partial(matmul_packed, A, B) if control_active("ceiling-is-a-loop")
               else partial(np.matmul, A, B))
    flops = 2 * n**3
    rungs = {
        "python": python_run,
        "jki": partial(matmul_loop, A, B, "jki"),
        "ijk": partial(matmul_loop, A, B, "ijk"),
        "packed": partial(matmul_packed, A, B),
        "ikj": partial(matmul_loop, A, B, best),
        "dgemm": ceiling,
    }
    if control_active("best-is-worst"):  # the compile claim still needs the real ikj
        rungs["compiled-ikj"] = partial(matmul_loop, A, B, "ikj")
    work = {name: 2 * PYTHON_N**3 if name == "python" else flops for name in rungs}
    with threadpool_limits(limits=1, user_api="blas"):
        timed = compare(rungs, TIMING_ROUNDS, TIMING_BUDGET_S, repeats=2, max_calls=256)
    # Rates per round (flop per second), so every claim is decided round by round.
    round_rate = {name: [work[name] / t for t in timed.times[name]] for name in rungs}
    rate = {name: gflops(work[name], timed.median(name)) for name in rungs if name in work}
    rate.pop("compiled-ikj", None)
    ikj_name = "compiled-ikj" if "compiled-ikj" in rungs else "ikj"
    rounds = range(TIMING_ROUNDS)
    compile_gains = [round_rate[ikj_name][r] / round_rate["python"][r] for r in rounds]
    climbs = [min(round_rate["ijk"][r] / round_rate["jki"][r],
                  round_rate["ikj"][r] / round_rate["ijk"][r]) for r in rounds]
    ceilings = [round_rate["dgemm"][r] / max(round_rate[name][r] for name in rate
                                              if name != "dgemm") for r in rounds]
    labels = {
        "python": T(f"interpreted Python, ikj (n = {PYTHON_N})",
                    f"解释执行的 Python，ikj（n = {PYTHON_N}）"),
        "jki": T("compiled jki (2.0 misses / iteration)", "编译的 jki（每次迭代 2.0 次缺失）"),
        "ijk": T("compiled ijk (1.25)", "编译的 ijk（1.25）"),
        "packed": T(f"packed blocks, {MR}×{NR} scalar micro-kernel",
                    f"打包分块，{MR}×{NR} 标量微内核"),
        "ikj": T("compiled ikj (0.5)", "编译的 ikj（0.5）"),
        "dgemm": T("BLAS dgemm, 1 thread", "BLAS dgemm，单线程"),
    }
    rates = list(rate.values())
    dgemm = rate["dgemm"]
    checks = [
        timing_check("compiled-beats-python",
                     T("Compiling is the first big step: the same ikj loop runs at least "
                       f"{COMPILE_FACTOR}× faster compiled than interpreted (flop per second, "
                       "round by round)",
                       f"编译是第一大步：同一个 ikj 循环，编译后至少比解释执行快 {COMPILE_FACTOR} "
                       "倍（逐轮比较每秒浮点运算次数）"),
                     compile_gains, at_least=COMPILE_FACTOR, number_format=".0f"),
        timing_check("loop-orders-climb",
                     T(f"Each better loop order is faster: jki < ijk < ikj, each step at least "
                       f"{LADDER_MARGIN}× (per round, the smaller of the two steps)",
                       f"循环顺序越好越快：jki < ijk < ikj，每一步至少 {LADDER_MARGIN} 倍"
                       "（每轮取两步中较小的一步）"),
                     climbs, at_least=LADDER_MARGIN),
        timing_check("dgemm-is-ceiling",
                     T(f"dgemm is the ceiling: at least {LADDER_MARGIN}× faster than every loop "
                       "here (per round, against the fastest loop)",
                       f"dgemm 是上限：比这里的每个循环都快至少 {LADDER_MARGIN} 倍"
                       "（每轮与最快的循环相比）"),
                     ceilings, at_least=LADDER_MARGIN),
    ]
    rows = []
    for index, (name, value) in enumerate(rate.items()):
        factor = "—" if index == 0 else f"{value / rates[index - 1]:.2f}x"
        rows.append([labels[name], f"{value:.3g}", factor, f"{value / dgemm:.2%}"])
    table = Table(
        title=T(f"The ladder at n = {n} (GFLOP/s on this machine, now)",
                f"n = {n} 时的速度阶梯（本机此刻的 GFLOP/s）"),
        columns=[T("rung", "级"), T("GFLOP/s", "GFLOP/s"),
                 T("step over the rung below", "比下一级快"),
                 T("fraction of dgemm", "相对 dgemm 的比例")],
        rows=rows,
    )
    chart = LineChart(
        title=T("GFLOP/s rung by rung", "逐级的 GFLOP/s"),
        x_label=T("rung (0 = interpreted Python, 5 = dgemm)",
                  "级（0 = 解释执行的 Python，5 = dgemm）"),
        y_label=T("GFLOP/s", "GFLOP/s"),
        series=[Series(T("this machine", "本机"), list(range(len(rates))), rates)],
        log_y=True,
    )
    return Result(checks=checks, figures=[chart], tables=[table],
                  metrics={"dgemm_gflops": dgemm, "python_gflops": rate["python"]})


EXPERIMENTS = [misses_by_order, access_pattern, order_timing, blocking, speed_ladder]
