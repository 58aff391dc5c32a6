"""Memory traffic, counted from the executors' access logs: coalescing and data reuse.

* ``coalescing``: 32-byte sectors per warp request for a strided read, against the
  closed form of the prose (and against the wrong one that counts 128-byte lines);
* ``matmul-reuse``: global loads per output element for the naive and the
  shared-memory SIMT matmul and for the tile matmul, against 2n, 2⌈n/b⌉ and
  ⌈n/b_n⌉ + ⌈n/b_m⌉ (≈ n(1/b_m + 1/b_n)).
"""

from __future__ import annotations

import numpy as np

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
from whylab.gpu import simt, simt_kernels, tile, tile_kernels
from whylab.gpu.access import SECTOR_BYTES, WARP_SIZE, AccessLog, place
from whylab.topics.shared import relative_error

LINE_BYTES = 128
STRIDES = tuple(range(0, 33))
WARPS = 8
PRODUCT_TOLERANCE = 1e-5  # float32 products against a float64 reference


def sectors_per_request(stride: int, offset: int, itemsize: int, lanes: int = WARP_SIZE,
                        unit_bytes: int = SECTOR_BYTES) -> int:
    """Distinct ``unit_bytes`` units that ``lanes`` lanes reading ``a[offset + lane·stride]``
    touch, for an array starting on a unit boundary.

    When consecutive lanes are less than a unit apart, no unit between the first and
    the last byte is skipped; otherwise each lane has a unit of its own.
    """
    if stride * itemsize >= unit_bytes:
        return lanes
    first = offset * itemsize // unit_bytes
    last = ((offset + (lanes - 1) * stride) * itemsize + itemsize - 1) // unit_bytes
    return last - first + 1


def strided_run(stride: int, offset: int, dtype) -> AccessLog:
    threads = WARPS * WARP_SIZE
    source = np.zeros(offset + threads * max(stride, 1) + 1, dtype)
    memory = place({"a": source, "out": np.zeros(threads, dtype)})
    run = simt.launch(simt_kernels.strided_copy, 2, threads // 2, memory["a"], memory["out"],
                      threads, stride, offset)
    return run.log


SECTOR_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def sector_map(log: AccessLog) -> str:
    """Warp 0's load, lane by lane: which of the request's sectors (0 the lowest, 1 the
    next it touches, ...) each lane reads."""
    request = next(r for r in log.requests if r.kind == "load" and r.unit == 0)
    _, rank = np.unique(request.lane_sectors, return_inverse=True)
    return "".join(SECTOR_DIGITS[s] for s in rank)


def expected_sectors(stride: int, offset: int, itemsize: int) -> int:
    if control_active("assumes-4-byte-elements"):
        itemsize = 4
    if control_active("128-byte-lines"):
        return sectors_per_request(stride, offset, itemsize, unit_bytes=LINE_BYTES)
    return sectors_per_request(stride, offset, itemsize)


@experiment(
    name="coalescing",
    metrics=[
        Metric("sectors_stride_1", T("sectors per request, stride 1", "步幅 1 时每个请求的扇区数")),
        Metric("sectors_stride_32",
               T("sectors per request, stride 32", "步幅 32 时每个请求的扇区数")),
    ],
    title=T("Sectors per warp request: contiguous against strided",
            "每个线程束请求的扇区数：连续与跨步"),
    description=T(
        "Thread i of each warp reads a[offset + i·stride]; the SIMT executor counts the distinct "
        "32-byte sectors each warp's request touches, for every stride from 0 to 32, and the "
        "tile executor does the same for a program's block.",
        "每个线程束里第 i 个线程读 a[offset + i·stride]；SIMT 执行器对 0 到 32 的每个步幅统计"
        "每个线程束请求触及的不同 32 字节扇区数，分块执行器对一个程序的整块做同样的统计。",
    ),
    params=[
        Param("offset", "int", 0, T("first element offset", "起始元素偏移"), minimum=0,
              maximum=31),
        Param("dtype", "choice", "float32", T("element type", "元素类型"),
              choices=("float32", "float64")),
    ],
    controls=[
        Control("128-byte-lines", T("the formula counts 128-byte cache lines, not 32-byte sectors",
                                    "公式数的是 128 字节的缓存行，而不是 32 字节的扇区"),
                breaks=("sectors-match-closed-form", "tile-block-sectors")),
        Control("assumes-4-byte-elements",
                T("the formula assumes 4-byte elements whatever the type",
                  "公式不管元素类型，一律按 4 字节算"),
                params={"dtype": "float64"},
                breaks=("sectors-match-closed-form", "tile-block-sectors")),
    ],
)
def coalescing(offset, dtype):
    dtype = np.dtype(dtype)
    logs = [strided_run(s, offset, dtype) for s in STRIDES]
    measured = [log.sectors_per_request("load", "a") for log in logs]
    expected = [expected_sectors(s, offset, dtype.itemsize) for s in STRIDES]
    lines = [sectors_per_request(s, offset, dtype.itemsize, unit_bytes=LINE_BYTES)
             for s in STRIDES]
    mismatches = [s for s, m, e in zip(STRIDES, measured, expected, strict=True) if m != e]
    block = 128
    memory = place({"a": np.zeros(4 * block, dtype), "b": np.zeros(4 * block, dtype),
                    "out": np.zeros(4 * block, dtype), "writes": np.zeros(4 * block, np.int64)})
    log = tile.launch(tile_kernels.vector_add, 4, memory["a"], memory["b"], memory["out"],
                      memory["writes"], 4 * block, BLOCK=block)
    tile_measured = log.sectors_per_request("load", "a")
    tile_expected = expected_sectors(1, 0, dtype.itemsize) * block // WARP_SIZE
    checks = [
        Check(T("sectors per warp request equal the closed form at every stride 0–32",
                "在 0 到 32 的每个步幅上，每个线程束请求的扇区数都等于解析式"),
              not mismatches,
              T(f"{len(STRIDES) - len(mismatches)} of {len(STRIDES)} strides agree",
                f"{len(STRIDES)} 个步幅中 {len(STRIDES) - len(mismatches)} 个一致"),
              T("all agree", "全部一致"), id="sectors-match-closed-form"),
        Check(T("a tile program's contiguous block touches BLOCK·size/32 sectors",
                "分块程序读取连续的一整块，触及 BLOCK·元素字节数/32 个扇区"),
              tile_measured == tile_expected, f"{tile_measured:g}", f"{tile_expected}",
              id="tile-block-sectors"),
    ]
    chart = LineChart(
        T("Sectors per warp request against stride", "每个线程束请求的扇区数与步幅"),
        T("stride (elements)", "步幅（元素）"),
        T("32-byte sectors per request", "每个请求的 32 字节扇区数"),
        [Series(T("SIMT executor, counted", "SIMT 执行器计数"), STRIDES, measured),
         Series(T("closed form (sectors)", "解析式（扇区）"), STRIDES, expected),
         Series(T("128-byte lines touched", "触及的 128 字节缓存行"), STRIDES, lines)],
    )
    useful = WARP_SIZE * dtype.itemsize
    table = Table(
        T("Bytes moved per useful byte", "每个有用字节搬运的字节数"),
        [T("stride", "步幅"), T("sectors", "扇区数"),
         T("bytes moved / bytes used", "搬运字节 / 使用字节")],
        [[s, measured[s], round(measured[s] * SECTOR_BYTES / useful, 2)] for s in (1, 2, 4, 8, 32)],
    )
    map_table = Table(
        T("Sector map: which of its request's sectors each lane of warp 0 reads",
          "扇区图：线程束 0 的每个线程读的是这次请求的第几个扇区"),
        [T("stride", "步幅"), T("lanes 0 … 31", "线程 0 … 31"), T("sectors", "扇区数")],
        [[s, sector_map(logs[s]), measured[s]] for s in (0, 1, 2, 4, 8, 32)],
    )
    return Result(checks=checks, figures=[chart], tables=[map_table, table],
                  metrics={"sectors_stride_1": measured[1], "sectors_stride_32": measured[32]})


# ---------------------------------------------------------------- data reuse


def matmul_operands(n: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def loads_per_output(log: AccessLog, n: int) -> float:
    """Element loads from A and B per element of C, from the recorded requests."""
    if control_active("count-requests-not-elements"):
        requests = sum(1 for r in log.requests if r.kind == "load" and r.array in ("a", "b"))
        return requests / (n * n)
    return log.loads("a", "b") / (n * n)


def run_simt_matmul(kind: str, a, b, n: int, tile_size: int):
    memory = place({"a": a, "b": b, "c": np.zeros((n, n), np.float32)})
    grid = (-(-n // tile_size),) * 2
    args = (memory["a"], memory["b"], memory["c"], n)
    if kind == "naive" or control_active("tiles-not-staged"):
        run = simt.launch(simt_kernels.matmul_naive, grid, (tile_size, tile_size), *args)
    else:
        run = simt.launch(simt_kernels.matmul_tiled, grid, (tile_size, tile_size), *args,
                          tile_size, not control_active("missing-barriers"))
    return memory["c"].result(), run


def run_tile_matmul(a, b, n: int, block: int):
    memory = place({"a": a, "b": b, "c": np.zeros((n, n), np.float32),
                    "writes": np.zeros(n * n, np.int64)})
    k_end = n // block * block if control_active("skip-partial-k-tile") else n
    grid = (-(-n // block),) * 2
    log = tile.launch(tile_kernels.matmul, grid, memory["a"], memory["b"], memory["c"],
                      memory["writes"], n, k_end, BLOCK_M=block, BLOCK_N=block, BLOCK_K=block)
    return memory["c"].result(), log


SWEEP_TILES = (2, 4, 8, 16)


@experiment(
    name="matmul-reuse",
    metrics=[
        Metric("naive_loads", T("loads per output, naive", "朴素写法每个输出的读取次数")),
        Metric("tiled_loads",
               T("loads per output, shared-memory tiles", "共享内存分块每个输出的读取次数")),
        Metric("tile_loads", T("loads per output, tile programs", "分块程序每个输出的读取次数")),
    ],
    title=T("Global loads per output: naive, shared-memory tiles, tile programs",
            "每个输出元素的全局内存读取次数：朴素、共享内存分块、分块程序"),
    description=T(
        "Multiplies two n × n float32 matrices three ways: one SIMT thread per output reading "
        "everything from global memory; SIMT blocks staging b × b tiles in shared memory; and "
        "tile programs of BLOCK × BLOCK outputs with tl.dot. Counts the loads from A and B in "
        "the access logs and compares each product with NumPy.",
        "用三种方式计算两个 n × n float32 矩阵的乘积：每个 SIMT 线程算一个输出、全部从全局内存读；"
        "SIMT 线程块把 b × b 的小块放进共享内存；"
        "以及每个程序算 BLOCK × BLOCK 个输出、用 tl.dot 的分块程序。"
        "从访存记录里数出对 A 和 B 的读取次数，并把每个乘积与 NumPy 比较。",
    ),
    params=[
        Param("n", "int", 40, T("matrix size n", "矩阵阶数 n"), minimum=4, maximum=64),
        Param("tile", "choice", "8",
              T("SIMT tile b (threads b × b)", "SIMT 分块 b（b × b 个线程）"),
              choices=("2", "4", "8", "16")),
        Param("block", "choice", "16", T("tile program BLOCK", "分块程序的 BLOCK"),
              choices=("16", "32")),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("count-requests-not-elements",
                T("the count is of warp requests, not of the elements loaded",
                  "数的是线程束请求的个数，而不是读取的元素个数"),
                breaks=("naive-loads", "tiled-loads", "tile-program-loads")),
        Control("tiles-not-staged",
                T("the tiled kernel reads A and B from global memory instead of shared tiles",
                  "分块核函数不经共享内存，直接从全局内存读 A 和 B"),
                breaks=("tiled-loads", "no-shared-races")),
        Control("missing-barriers", T("both __syncthreads() are left out",
                                      "两处 __syncthreads() 都被删掉"),
                breaks=("no-shared-races",)),
        Control("skip-partial-k-tile",
                T("the tile loop over k skips the last, partial tile",
                  "分块程序对 k 的循环跳过了最后那个不满的块"),
                breaks=("products-equal-numpy", "tile-program-loads")),
    ],
)
def matmul_reuse(n, tile, block, seed):
    tile_size, block = int(tile), int(block)
    a, b, reference = matmul_operands(n, seed)
    naive_c, naive_run = run_simt_matmul("naive", a, b, n, tile_size)
    tiled_c, tiled_run = run_simt_matmul("tiled", a, b, n, tile_size)
    tile_c, tile_log = run_tile_matmul(a, b, n, block)
    naive_loads = loads_per_output(naive_run.log, n)
    tiled_loads = loads_per_output(tiled_run.log, n)
    tile_loads = loads_per_output(tile_log, n)
    tiles_k = -(-n // tile_size)
    blocks_k = -(-n // block)
    errors = [relative_error(c, reference) for c in (naive_c, tiled_c, tile_c)]
    races = tiled_run.shared_races
    checks = [
        Check(T("naive: every output loads a row of A and a column of B",
                "朴素写法：每个输出读 A 的一行和 B 的一列"),
              naive_loads == 2 * n, f"{naive_loads:g}", f"2n = {2 * n}", id="naive-loads"),
        Check(T("shared-memory tiles: each element of A and B loaded once per tile of outputs",
                "共享内存分块：A 和 B 的每个元素对每个输出块只读一次"),
              tiled_loads == 2 * tiles_k, f"{tiled_loads:g}", f"2⌈n/b⌉ = {2 * tiles_k}",
              id="tiled-loads"),
        Check(T("tile programs: ⌈n/b_n⌉ + ⌈n/b_m⌉ loads per output, ≈ n(1/b_m + 1/b_n)",
                "分块程序：每个输出读 ⌈n/b_n⌉ + ⌈n/b_m⌉ 次，≈ n(1/b_m + 1/b_n)"),
              tile_loads == 2 * blocks_k, f"{tile_loads:g}",
              f"{2 * blocks_k} (n(1/b_m + 1/b_n) = {2 * n / block:g})", id="tile-program-loads"),
        Check(T("all three products equal NumPy's", "三个乘积都等于 NumPy 的结果"),
              max(errors) <= PRODUCT_TOLERANCE, f"max {max(errors):.1e}",
              f"≤ {PRODUCT_TOLERANCE:.0e}", id="products-equal-numpy"),
        Check(T("with both barriers, no two threads touch a shared element between barriers",
                "有两道屏障时，没有两个线程在同一屏障区间里碰同一个共享元素"),
              not races and tiled_run.barriers > 1,
              T(f"{len(races)} races over {tiled_run.barriers} barriers",
                f"{tiled_run.barriers} 道屏障之间 {len(races)} 处竞争"),
              T("0 races", "竞争 0"), id="no-shared-races"),
    ]
    sweep = []
    for size in SWEEP_TILES:
        _, run = run_simt_matmul("tiled", a, b, n, size)
        sweep.append(loads_per_output(run.log, n))
    chart = LineChart(
        T("Loads per output element against tile size", "每个输出元素的读取次数与分块大小"),
        T("tile b", "分块 b"), T("loads from A and B per output", "每个输出读 A 和 B 的次数"),
        [Series(T("SIMT shared-memory tiles, counted", "SIMT 共享内存分块，计数"), SWEEP_TILES,
                sweep),
         Series(T("closed form 2⌈n/b⌉", "解析式 2⌈n/b⌉"), SWEEP_TILES,
                [2 * -(-n // s) for s in SWEEP_TILES]),
         Series(T("n(1/b_m + 1/b_n)",
                  "n(1/b_m + 1/b_n)"), SWEEP_TILES, [2 * n / s for s in SWEEP_TILES]),
         Series(T("naive 2n", "朴素 2n"), SWEEP_TILES, [naive_loads] * len(SWEEP_TILES))],
        log_x=True, log_y=True,
    )
    return Result(checks=checks, figures=[chart],
                  metrics={"naive_loads": naive_loads, "tiled_loads": tiled_loads,
                           "tile_loads": tile_loads})
