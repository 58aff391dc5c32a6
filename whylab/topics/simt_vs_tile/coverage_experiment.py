"""Who writes each output element: bounds checks and masks when n is not a multiple of the block.

The vector add of :mod:`whylab.gpu.simt_kernels` and :mod:`whylab.gpu.tile_kernels`
runs with a guard (a bounds check, a mask) and without one; the executors' write
maps say how often each element was stored to, and the expected counts are the
closed forms of the prose.
"""

from __future__ import annotations

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    Text,
    control_active,
    experiment,
)
from whylab.gpu import simt, simt_kernels, tile, tile_kernels
from whylab.gpu.access import AccessLog, place


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def launch_grid(n: int, block: int) -> int:
    """The number of blocks (programs) covering n elements: ⌈n / block⌉."""
    return n // block if control_active("skip-partial-block") else cdiv(n, block)


def operands(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(np.float32),
            rng.standard_normal(n).astype(np.float32))


def run_simt(kernel, a, b, n: int, block: int, grid: int, bound: int):
    memory = place({"a": a, "b": b, "out": np.zeros(n, np.float32)})
    if control_active("output-holds-old-answer"):
        memory["out"].data[:] = a + b  # memory reused from a previous run of the same sum
    if grid == 0:  # n < block rounded down: nothing to launch (CUDA refuses an empty grid)
        return memory["out"].result(), _nothing_launched(memory["out"])
    threads = simt.launch(kernel, grid, block, memory["a"], memory["b"], memory["out"], bound)
    return memory["out"].result(), threads.log


def _nothing_launched(out) -> AccessLog:
    log = AccessLog()
    log.record_for(out)
    return log


def run_tile(kernel, a, b, n: int, block: int, grid: int, bound: int):
    memory = place({"a": a, "b": b, "out": np.zeros(n, np.float32),
                    "writes": np.zeros(n, np.int64)})
    if grid == 0:
        return memory["out"].result(), _nothing_launched(memory["out"])
    log = tile.launch(kernel, grid, memory["a"], memory["b"], memory["out"], memory["writes"],
                      bound, BLOCK=block)
    return memory["out"].result(), log


def write_counts(log: AccessLog) -> np.ndarray:
    """How often each output element was stored to, as the coverage map shows it."""
    record = log.arrays["out"]
    if control_active("coverage-from-last-writer"):
        return (record.last_writer >= 0).astype(np.int64)  # marks "written", loses repeats
    return record.write_count


def coverage_map(counts: np.ndarray, out_of_bounds: int, block: int, label: Text) -> list:
    """One row per block: a character per element (· never, 1–9 times, + ten or more)."""
    rows = []
    for start in range(0, counts.size, block):
        cells = "".join("·" if c == 0 else str(c) if c < 10 else "+"
                        for c in counts[start:start + block])
        rows.append([label, start, cells])
    rows.append([label, T("past the end", "越过末尾"), f"{out_of_bounds} ×"])
    return rows


@experiment(
    name="write-coverage",
    metrics=[
        Metric("threads_past_end", T("stores past the end, no check", "不检查时的越界写入次数")),
    ],
    title=T("Every element written exactly once?", "每个元素都恰好写一次吗？"),
    description=T(
        "Runs the vector add with n elements on blocks of the chosen size, in SIMT with a "
        "bounds check, without one, with the index clamped, and with a grid rounded down; "
        "and as tiles with a mask and with clamped offsets. The maps count the stores each "
        "element received.",
        "用给定的块大小对 n 个元素做向量加法：SIMT 版分别带边界检查、不带检查、把下标截断、"
        "以及网格向下取整；分块版分别带掩码、把偏移截断。覆盖图统计每个元素被写了几次。",
    ),
    params=[
        Param("n", "int", 100, T("elements n", "元素个数 n"), minimum=2, maximum=2000),
        Param("block", "choice", "32",
              T("block size (threads / BLOCK)", "块大小（线程数 / BLOCK）"),
              choices=("8", "16", "32", "64", "128")),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("mask-off-by-one", T("the guard is i ≤ n instead of i < n",
                                     "边界写成了 i ≤ n 而不是 i < n"),
                breaks=("simt-bounds-check-once", "tile-mask-once")),
        Control("skip-partial-block",
                T("the grid is n // block: the last, partial block is skipped",
                  "网格取 n // block：最后那个不满的块被跳过"),
                breaks=("simt-bounds-check-once", "tile-mask-once", "no-check-out-of-bounds",
                        "clamp-duplicates")),
        Control("coverage-from-last-writer",
                T("the map marks elements written (last writer known) instead of counting stores",
                  "覆盖图只标记“写过”（知道最后的写者），而不是计数"),
                breaks=("clamp-duplicates",)),
        Control("output-holds-old-answer",
                T("the output memory already held the right answer from an earlier run",
                  "输出内存里本来就留着上一次运行的正确答案"),
                breaks=("floor-grid-omits",)),
    ],
)
def write_coverage(n, block, seed):
    block = int(block)
    a, b = operands(n, seed)
    expected = a + b
    guard = n + 1 if control_active("mask-off-by-one") else n
    grid = launch_grid(n, block)
    runs = {
        "simt-guarded": run_simt(simt_kernels.vector_add, a, b, n, block, grid, guard),
        "simt-unguarded": run_simt(simt_kernels.vector_add_unguarded, a, b, n, block, grid, n),
        "simt-clamped": run_simt(simt_kernels.vector_add_clamped, a, b, n, block, grid, n),
        "simt-floor": run_simt(simt_kernels.vector_add, a, b, n, block, n // block, n),
        "tile-masked": run_tile(tile_kernels.vector_add, a, b, n, block, grid, guard),
        "tile-clamped": run_tile(tile_kernels.vector_add_clamped, a, b, n, block, grid, n),
    }
    counts = {name: write_counts(log) for name, (_, log) in runs.items()}
    outside = {name: log.arrays["out"].out_of_bounds for name, (_, log) in runs.items()}

    def exactly_once(name: str) -> bool:
        out, _ = runs[name]
        return bool(np.all(counts[name] == 1) and outside[name] == 0
                    and np.array_equal(out, expected))

    threads = cdiv(n, block) * block  # closed forms: ⌈n/b⌉·b threads cover n elements
    extra = threads - n
    checks = [
        Check(T("SIMT with a bounds check: each element once, none past the end, equal to NumPy",
                "SIMT 带边界检查：每个元素一次、没有越界、结果等于 NumPy"),
              exactly_once("simt-guarded"),
              _summary(counts["simt-guarded"], outside["simt-guarded"]),
              T("all 1, 0 past the end", "全为 1，越界 0"), id="simt-bounds-check-once"),
        Check(T("tiles with a mask: each element once, none past the end, equal to NumPy",
                "分块带掩码：每个元素一次、没有越界、结果等于 NumPy"),
              exactly_once("tile-masked"), _summary(counts["tile-masked"], outside["tile-masked"]),
              T("all 1, 0 past the end", "全为 1，越界 0"), id="tile-mask-once"),
    ]
    premise = T("needs n not a multiple of the block", "需要 n 不是块大小的整数倍")
    if extra == 0:
        for check_id, name in [
            ("no-check-out-of-bounds", T("without a check, the spare threads store past the end",
                                         "不检查时，多出来的线程写到了末尾之外")),
            ("clamp-duplicates", T("clamping writes the last element again and again",
                                   "截断下标会把最后一个元素反复写")),
            ("floor-grid-omits", T("rounding the grid down leaves the tail unwritten",
                                   "网格向下取整，末尾没人写")),
        ]:
            checks.append(Check.not_applicable(id=check_id, name=name, expected="—", why=premise))
        return _result(checks, runs, counts, outside, block)
    unguarded_ok = outside["simt-unguarded"] == extra and np.all(counts["simt-unguarded"] == 1)
    clamp_ok = all(counts[k][-1] == extra + 1 and np.all(counts[k][:-1] == 1)
                   for k in ("simt-clamped", "tile-clamped"))
    floor_out, _ = runs["simt-floor"]
    tail = n % block
    unwritten = np.flatnonzero(counts["simt-floor"] == 0)
    wrong = np.flatnonzero(floor_out != expected)
    floor_ok = (np.array_equal(unwritten, np.arange(n - tail, n))
                and np.array_equal(wrong, unwritten))
    checks += [
        Check(T("without a check, the spare threads store past the end",
                "不检查时，多出来的线程写到了末尾之外"),
              bool(unguarded_ok), T(f"{outside['simt-unguarded']} stores past the end",
                                   f"越界写 {outside['simt-unguarded']} 次"),
              f"⌈n/b⌉·b − n = {extra}", id="no-check-out-of-bounds"),
        Check(T("clamping writes the last element again and again (SIMT and tiles)",
                "截断下标会把最后一个元素反复写（SIMT 与分块都如此）"),
              bool(clamp_ok),
              T(f"last element: {counts['simt-clamped'][-1]} and {counts['tile-clamped'][-1]} "
                "stores", f"最后一个元素：分别写了 {counts['simt-clamped'][-1]} 次和 "
                f"{counts['tile-clamped'][-1]} 次"),
              f"⌈n/b⌉·b − n + 1 = {extra + 1}", id="clamp-duplicates"),
        Check(T("rounding the grid down leaves the last n mod b elements unwritten, and wrong",
                "网格向下取整，最后 n mod b 个元素没人写，结果也错"),
              bool(floor_ok),
              T(f"{unwritten.size} unwritten, {wrong.size} wrong",
                f"{unwritten.size} 个没写，{wrong.size} 个错"),
              f"n mod b = {tail}", id="floor-grid-omits"),
    ]
    return _result(checks, runs, counts, outside, block)


VARIANT_TEXT = {
    "simt-guarded": T("SIMT, if (i < n)", "SIMT，if (i < n)"),
    "simt-unguarded": T("SIMT, no check", "SIMT，不检查"),
    "simt-clamped": T("SIMT, i = min(i, n − 1)", "SIMT，i = min(i, n − 1)"),
    "simt-floor": T("SIMT, grid n // b", "SIMT，网格 n // b"),
    "tile-masked": T("tile, mask = offsets < n", "分块，掩码：下标 < n"),
    "tile-clamped": T("tile, offsets clamped", "分块，偏移截断"),
}


def _summary(counts: np.ndarray, outside: int) -> Text:
    values, how_often = np.unique(counts, return_counts=True)
    parts = ", ".join(f"{v}×{c}" for v, c in zip(values, how_often, strict=True))
    return T(f"counts {parts}; {outside} past the end", f"次数 {parts}；越界 {outside}")


def _result(checks, runs, counts, outside, block) -> Result:
    rows = []
    for name in runs:
        rows += coverage_map(counts[name], outside[name], block, VARIANT_TEXT[name])
    table = Table(
        T("Coverage maps: stores per output element", "覆盖图：每个输出元素被写的次数"),
        [T("variant", "写法"), T("first element", "起始元素"),
         T("stores per element (· none)", "每个元素的写入次数（· 表示没有）")],
        rows,
    )
    return Result(checks=checks, tables=[table],
                  metrics={"threads_past_end": outside["simt-unguarded"]})
