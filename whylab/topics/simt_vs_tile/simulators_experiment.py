"""The executors against real kernel source on real simulators.

The SIMT kernels' numba twins run under numba's CUDA simulator, and the very
tile kernels the tile executor runs are handed to Triton's interpreter
(:mod:`whylab.gpu.simulators`); their outputs and the write counts the kernels
record themselves are compared with the executors' results and write maps.
"""

from __future__ import annotations

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    Result,
    T,
    Table,
    Text,
    control_active,
    experiment,
)
from whylab.gpu import simt, simt_kernels, tile, tile_kernels
from whylab.gpu.access import place
from whylab.gpu.simulators import Case, SimulatorUnavailable, available, simulate
from whylab.topics.shared import relative_error

VECTOR_N, VECTOR_BLOCK = 50, 16
MATMUL_N, SIMT_TILE, TILE_BLOCK = 20, 8, 16  # numba_kernels.TILE is 8
PRODUCT_TOLERANCE = 1e-5


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(VECTOR_N).astype(np.float32),
            rng.standard_normal(VECTOR_N).astype(np.float32),
            rng.standard_normal((MATMUL_N, MATMUL_N)).astype(np.float32),
            rng.standard_normal((MATMUL_N, MATMUL_N)).astype(np.float32))


def _grid(n: int, block: int) -> int:
    return n // block if control_active("skip-partial-block") else -(-n // block)


def _counts(log) -> np.ndarray:
    record = log.arrays["out"] if "out" in log.arrays else log.arrays["c"]
    if control_active("coverage-from-last-writer"):
        return (record.last_writer >= 0).astype(np.int64)
    return record.write_count


def executor_runs(x, y, a, b) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Our executors' (output, write counts) for each kernel the simulators also run."""
    if control_active("b-read-transposed"):
        b = np.ascontiguousarray(b.T)
    vector_grid = _grid(VECTOR_N, VECTOR_BLOCK)
    runs = {}
    for name, kernel in [("vector_add", simt_kernels.vector_add),
                         ("vector_add_clamped", simt_kernels.vector_add_clamped)]:
        memory = place({"a": x, "b": y, "out": np.zeros(VECTOR_N, np.float32)})
        run = simt.launch(kernel, vector_grid, VECTOR_BLOCK, memory["a"], memory["b"],
                          memory["out"], VECTOR_N)
        runs[f"simt {name}"] = (memory["out"].result(), _counts(run.log))
        memory = place({"a": x, "b": y, "out": np.zeros(VECTOR_N, np.float32),
                        "writes": np.zeros(VECTOR_N, np.int64)})
        log = tile.launch(getattr(tile_kernels, name), vector_grid, memory["a"], memory["b"],
                          memory["out"], memory["writes"], VECTOR_N, BLOCK=VECTOR_BLOCK)
        runs[f"tile {name}"] = (memory["out"].result(), _counts(log))
    grid = (_grid(MATMUL_N, SIMT_TILE),) * 2
    for name, kernel, extra in [("matmul_naive", simt_kernels.matmul_naive, ()),
                                ("matmul_tiled", simt_kernels.matmul_tiled, (SIMT_TILE,))]:
        memory = place({"a": a, "b": b, "c": np.zeros((MATMUL_N, MATMUL_N), np.float32)})
        run = simt.launch(kernel, grid, (SIMT_TILE, SIMT_TILE), memory["a"], memory["b"],
                          memory["c"], MATMUL_N, *extra)
        runs[f"simt {name}"] = (memory["c"].result().ravel(), _counts(run.log))
    memory = place({"a": a, "b": b, "c": np.zeros((MATMUL_N, MATMUL_N), np.float32),
                    "writes": np.zeros(MATMUL_N ** 2, np.int64)})
    tile_grid = (_grid(MATMUL_N, TILE_BLOCK),) * 2
    log = tile.launch(tile_kernels.matmul, tile_grid, memory["a"], memory["b"], memory["c"],
                      memory["writes"], MATMUL_N, MATMUL_N, BLOCK_M=TILE_BLOCK,
                      BLOCK_N=TILE_BLOCK, BLOCK_K=TILE_BLOCK)
    runs["tile matmul"] = (memory["c"].result().ravel(), _counts(log))
    return runs


def simulator_cases(x, y, a, b) -> tuple:
    vector = dict(n=VECTOR_N, block=VECTOR_BLOCK, out_size=VECTOR_N,
                  grid=-(-VECTOR_N // VECTOR_BLOCK))
    numba_cases = (Case.of("vector_add", x, y, **vector),
                   Case.of("vector_add_clamped", x, y, **vector),
                   Case.of("matmul_naive", a, b, n=MATMUL_N, block=SIMT_TILE,
                           out_size=MATMUL_N ** 2),
                   Case.of("matmul_tiled", a, b, n=MATMUL_N, block=SIMT_TILE,
                           out_size=MATMUL_N ** 2))
    triton_cases = (Case.of("vector_add", x, y, **vector),
                    Case.of("vector_add_clamped", x, y, **vector),
                    Case.of("matmul", a, b, n=MATMUL_N, block=TILE_BLOCK,
                            out_size=MATMUL_N ** 2))
    cases = [("numba", numba_cases)]
    if available("triton"):
        cases.append(("triton", triton_cases))
    return tuple(cases)


SIMULATOR_NAME = {"numba": T("numba's CUDA simulator", "numba 的 CUDA 模拟器"),
                  "triton": T("Triton's interpreter", "triton 的解释器")}
PAIRS = {"numba": [("vector_add", "simt vector_add"),
                   ("vector_add_clamped", "simt vector_add_clamped"),
                   ("matmul_naive", "simt matmul_naive"),
                   ("matmul_tiled", "simt matmul_tiled")],
         "triton": [("vector_add", "tile vector_add"),
                    ("vector_add_clamped", "tile vector_add_clamped"),
                    ("matmul", "tile matmul")]}


@experiment(
    name="simulators-agree",
    title=T("The executors against numba's simulator and Triton's interpreter",
            "执行器对照 numba 的模拟器和 Triton 的解释器"),
    description=T(
        "Runs the vector add (bounds-checked and clamped) and the matmuls under numba's CUDA "
        "simulator (the numba twins of the SIMT kernels) and under Triton's interpreter (the "
        "tile kernels' own source), and compares outputs and write counts with the executors'.",
        "在 numba 的 CUDA 模拟器（SIMT 核函数的 numba 版）"
        "和 Triton 的解释器（分块核函数的原样源代码）"
        "上运行向量加法（带边界检查与截断下标两种）和矩阵乘法，把输出和写入次数与执行器的结果比较。",
    ),
    time_limit_s=240.0,
    controls=[
        Control("skip-partial-block",
                T("the executors' grid is n // block, skipping the last partial block",
                  "执行器的网格取 n // block，跳过最后不满的块"),
                breaks=("numba-outputs-agree", "numba-write-maps-agree", "triton-outputs-agree",
                        "triton-write-maps-agree")),
        Control("coverage-from-last-writer",
                T("the executors' maps mark elements written instead of counting stores",
                  "执行器的覆盖图只标记“写过”，不计次数"),
                breaks=("numba-write-maps-agree", "triton-write-maps-agree")),
        Control("b-read-transposed", T("the executors read B transposed", "执行器把 B 转置着读"),
                breaks=("numba-outputs-agree", "triton-outputs-agree")),
    ],
)
def simulators_agree():
    x, y, a, b = _inputs()
    ours = executor_runs(x, y, a, b)
    try:
        theirs = simulate(simulator_cases(x, y, a, b))
    except SimulatorUnavailable as error:
        theirs = {}
        failure = str(error)[:300]
    else:
        failure = ""
    checks, rows = [], []
    for simulator in ("numba", "triton"):
        name = SIMULATOR_NAME[simulator]
        if simulator not in theirs:
            why = T(f"needs {simulator} installed and running here ({failure or 'not installed'})",
                    f"需要本机安装并能运行 {simulator}（{failure or '未安装'}）")
            for what in ("outputs", "write-maps"):
                checks.append(Check.not_applicable(
                    id=f"{simulator}-{what}-agree", name=_check_name(name, what),
                    expected="—", why=why))
            continue
        output_errors, map_differences = [], 0
        for (kernel, our_key), result in zip(PAIRS[simulator], theirs[simulator], strict=True):
            our_out, our_counts = ours[our_key]
            error = relative_error(our_out, result["out"])
            differing = int(np.count_nonzero(our_counts != result["writes"]))
            output_errors.append(error)
            map_differences += differing
            rows.append([name, kernel, f"{error:.1e}", differing])
        worst = max(output_errors)
        checks.append(Check(_check_name(name, "outputs"), worst <= PRODUCT_TOLERANCE,
                            f"max {worst:.1e}", f"≤ {PRODUCT_TOLERANCE:.0e}",
                            id=f"{simulator}-outputs-agree"))
        checks.append(Check(_check_name(name, "write-maps"), map_differences == 0,
                            T(f"{map_differences} elements differ",
                              f"{map_differences} 个元素不同"),
                            "0", id=f"{simulator}-write-maps-agree"))
    table = Table(T("Executor against simulator, kernel by kernel", "逐个核函数：执行器对照模拟器"),
                  [T("simulator", "模拟器"), T("kernel", "核函数"),
                   T("output relative error", "输出相对误差"),
                   T("elements whose store count differs", "写入次数不同的元素数")], rows)
    return Result(checks=checks, tables=[table])


def _check_name(simulator: Text, what: str) -> Text:
    if what == "outputs":
        return T(f"outputs equal those under {simulator.en}", f"输出与{simulator.zh}上的一致")
    return T(f"write counts equal those the kernels record under {simulator.en}",
             f"写入次数与核函数在{simulator.zh}上自己记下的一致")
