"""Experiment ``overhead``: what one trip through the dispatcher costs.

The same elementwise ``add`` of two n×n float64 matrices is timed five ways:
raw ``np.add``; whylab's ``add`` on tensors that do not require grad (Tracer
absent, so the dispatcher sees there is nothing to record and skips the Autograd
kernel; see ``whylab/dispatch/README.md``); with an input that
requires grad (a graph node per call); the same under ``no_grad``; and under
``inference_mode`` (the Autograd key excluded, and ``add`` has no
ADInplaceOrView kernel, so the call goes straight to the CPU kernel). Each
time is the fastest of many short loops in interleaved rounds: on a shared
machine other work only ever adds time, and a short loop has a good chance of
running without being interrupted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np

import whylab
from whylab.bench import autorange, best_of, per_round_ratios, warm_up
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
    report_progress,
)
from whylab.topics.shared import timing_check

SMALL_SIZES = (4, 16, 64, 256)
LOOPS_PER_SAMPLE = 3  # a round's sample: the fastest of 3 loops (a preempted loop sways a round)
SMALL_RATIO_AT_LEAST = 2.0  # whylab / NumPy at 4×4: fixed Python overhead dominates
LARGE_RATIO_AT_MOST = 1.5  # whylab / NumPy at the largest size: the arithmetic dominates
RECORDING_RATIO_AT_LEAST = 1.2  # recording / not recording at 4×4
LOOP_BUDGET_S = 0.001  # short loops: more of them escape a time slice given to others

VARIANTS = {
    "numpy": T("np.add", "np.add"),
    "plain": T("whylab add, no grad needed", "whylab add，无需梯度"),
    "recording": T("whylab add, recording a node", "whylab add，记录节点"),
    "no_grad": T("whylab add under no_grad", "no_grad 下的 whylab add"),
    "inference": T("whylab add under inference_mode", "inference_mode 下的 whylab add"),
}


def calls_for_budget(call: Callable[[], object], budget_s: float = LOOP_BUDGET_S) -> int:
    """How many calls make a loop last about ``budget_s`` (after one warm-up call)."""
    warm_up(call)
    calls, _ = autorange(call, budget_s, max_calls=1 << 14)
    return calls


def placed_copy(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``values`` at a random offset inside a fresh buffer.

    How two operands and the result happen to line up in memory can change the
    time of a large add by 2x (cache-set conflicts). Moving the operands every
    round, and keeping the fastest round, keeps that accident out of the ratios.
    """
    offset = int(rng.integers(0, 512))
    array = np.empty(values.size + offset)[offset:].reshape(values.shape)
    array[...] = values
    return array


def variant_call(variant: str, x_values: np.ndarray, y_values: np.ndarray):
    """The context to time in and the zero-argument call to time, for one variant.

    Every variant adds the very same memory: the whylab tensors share it with the
    NumPy arrays (``from_numpy``). Four negative controls change one variant each:
    ``bypasses-dispatcher`` and ``kernel-copies-operands`` the plain whylab add,
    ``recording-records-nothing`` the recording one, ``no-grad-ignored`` the no_grad one.
    """
    if variant == "numpy" or (variant == "plain" and control_active("bypasses-dispatcher")):
        return contextlib.nullcontext(), lambda: np.add(x_values, y_values)
    records = variant in ("recording", "no_grad")
    if variant == "recording" and control_active("recording-records-nothing"):
        records = False
    x = whylab.from_numpy(x_values).requires_grad_(records)
    y = whylab.from_numpy(y_values)
    guards = {"no_grad": whylab.no_grad, "inference": whylab.inference_mode}
    if control_active("no-grad-ignored"):
        guards.pop("no_grad")
    context = guards.get(variant, contextlib.nullcontext)()
    if variant == "plain" and control_active("kernel-copies-operands"):
        return context, lambda: whylab.add(x.clone(), y.clone())
    return context, lambda: whylab.add(x, y)


def records_node(variant: str) -> bool:
    """Whether one call of the variant leaves a graph node on its result."""
    context, call = variant_call(variant, np.ones((2, 2)), np.ones((2, 2)))
    with context:
        result = call()
    return getattr(result, "grad_fn", None) is not None


@experiment(
    name="overhead",
    title=T("What the dispatcher costs per call", "调度器每次调用的开销"),
    description=T(
        "Times one elementwise add of two n×n float64 matrices in raw NumPy and through "
        "whylab's dispatcher with and without autograd recording, under no_grad and under "
        "inference_mode, for several n. Each time is the fastest of the rounds.",
        "对两个 n×n 的 float64 矩阵做一次逐元素加法并计时：直接用 NumPy，以及经过 whylab "
        "调度器（记录或不记录计算图、no_grad 下、inference_mode 下），取多个 n。"
        "每个耗时取各轮中最快的一次。",
    ),
    params=[
        Param("largest", "choice", "512", T("largest n", "最大的 n"), choices=("512", "1024")),
        Param("rounds", "int", 15, T("timing rounds (fastest kept)", "计时轮数（取最快一次）"),
              minimum=1, maximum=25, step=1),
    ],
    timing=True,
    controls=[
        Control("bypasses-dispatcher",
                T("the whylab call skips the dispatcher (it is np.add itself)",
                  "whylab 的调用绕过了调度器（其实就是 np.add 本身）"),
                breaks=("small-overhead-dominates",)),
        Control("kernel-copies-operands",
                T("whylab's add copies both operands before adding, work that grows with n²",
                  "whylab 的 add 在相加之前先复制两个操作数，这份工作随 n² 增长"),
                breaks=("large-arithmetic-dominates",)),
        Control("recording-records-nothing",
                T("the 'recording' variant records nothing (no input requires grad)",
                  "“记录节点”这一做法其实什么也没记录（没有输入需要梯度）"),
                breaks=("recording-costs",)),
        Control("no-grad-ignored",
                T("no_grad() is left out, so the no_grad variant records a node",
                  "漏掉了 no_grad()，于是 no_grad 这一做法也记录了节点"),
                breaks=("only-recording-leaves-grad-fn",)),
    ],
    metrics=[
        Metric(
            "whylab_over_numpy_at_4",
            T("time: whylab add / np.add, n = 4", "耗时：whylab add / np.add，n = 4"),
            "×",
        ),
        Metric(
            "whylab_over_numpy_at_16",
            T("time: whylab add / np.add, n = 16", "耗时：whylab add / np.add，n = 16"),
            "×",
        ),
        Metric(
            "whylab_over_numpy_at_64",
            T("time: whylab add / np.add, n = 64", "耗时：whylab add / np.add，n = 64"),
            "×",
        ),
        Metric(
            "whylab_over_numpy_at_256",
            T("time: whylab add / np.add, n = 256", "耗时：whylab add / np.add，n = 256"),
            "×",
        ),
        Metric("largest_n", T("largest n", "最大的 n")),
        Metric(
            "whylab_over_numpy_at_largest",
            T("time: whylab add / np.add, largest n", "耗时：whylab add / np.add，最大的 n"),
            "×",
        ),
        Metric(
            "dispatch_overhead_us_at_4",
            T("whylab's extra time per call at n = 4", "n = 4 时 whylab 每次调用多花的时间"),
            "µs",
        ),
        Metric(
            "recording_over_plain_at_4",
            T(
                "time at n = 4: recording a node / no grad needed",
                "n = 4 时的耗时：记录节点 / 无需梯度",
            ),
            "×",
        ),
        Metric(
            "plain_over_inference_at_4",
            T(
                "time at n = 4: no grad needed / inference_mode",
                "n = 4 时的耗时：无需梯度 / inference_mode",
            ),
            "×",
        ),
    ],
)
def overhead(largest: str, rounds: int) -> Result:
    sizes = [*SMALL_SIZES, int(largest)]
    rng = np.random.default_rng(0)
    operands = {n: (rng.standard_normal((n, n)), rng.standard_normal((n, n))) for n in sizes}
    samples: dict[tuple[str, int], list[float]] = {(v, n): [] for n in sizes for v in VARIANTS}
    loop_lengths: dict[tuple[str, int], int] = {}
    for round_index in range(rounds):
        # The variants of one size are timed side by side, on the same operands, so
        # a slow spell of the machine hits the times a ratio compares alike.
        for n in sizes:
            x_values, y_values = (placed_copy(values, rng) for values in operands[n])
            order = list(VARIANTS) if round_index % 2 == 0 else list(reversed(VARIANTS))
            for variant in order:
                context, call = variant_call(variant, x_values, y_values)
                with context:
                    if (variant, n) not in loop_lengths:
                        loop_lengths[(variant, n)] = calls_for_budget(call)
                    samples[(variant, n)].append(
                        best_of(call, loop_lengths[(variant, n)], LOOPS_PER_SAMPLE))
        report_progress((round_index + 1) / rounds)
    best = {key: min(times) for key, times in samples.items()}

    def ratio(top: str, bottom: str, n: int) -> float:
        return best[(top, n)] / best[(bottom, n)]

    def round_ratios(top: str, bottom: str, n: int) -> list[float]:
        return per_round_ratios(samples[(top, n)], samples[(bottom, n)])

    small, large = sizes[0], sizes[-1]
    checks = [
        timing_check("small-overhead-dominates",
                    T(f"At {small}×{small}, the dispatcher costs more than the arithmetic: "
                      f"whylab / NumPy > {SMALL_RATIO_AT_LEAST:g}",
                      f"{small}×{small} 时调度的开销超过运算本身：whylab / NumPy > "
                      f"{SMALL_RATIO_AT_LEAST:g}"),
                    round_ratios("plain", "numpy", small), at_least=SMALL_RATIO_AT_LEAST,
                     strict=True),
        timing_check("large-arithmetic-dominates",
                    T(f"At {large}×{large}, the arithmetic dominates: whylab / NumPy < "
                      f"{LARGE_RATIO_AT_MOST:g}",
                      f"{large}×{large} 时运算本身占主导：whylab / NumPy < "
                      f"{LARGE_RATIO_AT_MOST:g}"),
                    round_ratios("plain", "numpy", large), at_most=LARGE_RATIO_AT_MOST,
                     strict=True),
        timing_check("recording-costs",
                    T(f"Recording a graph node makes a {small}×{small} add slower: "
                      f"recording / not recording > {RECORDING_RATIO_AT_LEAST:g}",
                      f"记录计算图节点使 {small}×{small} 的加法变慢：记录 / 不记录 > "
                      f"{RECORDING_RATIO_AT_LEAST:g}"),
                    round_ratios("recording", "plain", small), at_least=RECORDING_RATIO_AT_LEAST,
                    strict=True),
    ]
    recorded = {v: records_node(v) for v in VARIANTS if v != "numpy"}
    checks.append(Check(
        id="only-recording-leaves-grad-fn",
        name=T("Only the recording variant leaves a grad_fn on its result",
               "只有“记录节点”这一种做法会在结果上留下 grad_fn"),
        passed=recorded == {v: v == "recording" for v in recorded},
        measured=T("; ".join(VARIANTS[v].en for v, r in recorded.items() if r) or "none",
                   "；".join(VARIANTS[v].zh for v, r in recorded.items() if r) or "无"),
        expected=VARIANTS["recording"]))

    per_call = LineChart(
        title=T("Time per add (fastest of the rounds)", "每次加法的耗时（各轮最快）"),
        x_label=T("n (n×n matrices)", "n（n×n 矩阵）"), y_label=T("µs per call", "每次调用 µs"),
        series=[Series(label, sizes, [best[(v, n)] * 1e6 for n in sizes])
                for v, label in VARIANTS.items()],
        log_x=True, log_y=True,
    )
    ratios = LineChart(
        title=T("Time relative to np.add", "相对 np.add 的耗时"),
        x_label=T("n (n×n matrices)", "n（n×n 矩阵）"), y_label=T("× np.add", "× np.add"),
        series=[Series(label, sizes, [ratio(v, "numpy", n) for n in sizes])
                for v, label in VARIANTS.items()],
        log_x=True, log_y=True,
    )
    table = Table(
        title=T("Microseconds per call, fastest of the rounds", "每次调用的微秒数，各轮最快"),
        columns=[T("n", "n"), *VARIANTS.values(), T("whylab / NumPy", "whylab / NumPy")],
        rows=[[n, *(f"{best[(v, n)] * 1e6:.2f}" for v in VARIANTS),
               f"{ratio('plain', 'numpy', n):.2f}"] for n in sizes],
    )
    metrics: dict[str, float] = {
        f"whylab_over_numpy_at_{n}": ratio("plain", "numpy", n) for n in SMALL_SIZES
    }
    metrics["largest_n"] = large
    metrics["whylab_over_numpy_at_largest"] = ratio("plain", "numpy", large)
    metrics["dispatch_overhead_us_at_4"] = (best[("plain", small)] - best[("numpy", small)]) * 1e6
    metrics["recording_over_plain_at_4"] = ratio("recording", "plain", small)
    metrics["plain_over_inference_at_4"] = ratio("plain", "inference", small)
    return Result(
        checks=checks, figures=[per_call, ratios], tables=[table], metrics=metrics,
        notes=[T("Wall-clock times on this machine; they vary from run to run. The checks "
                 "use wide bounds that hold on a busy shared machine.",
                 "耗时是本机实测值，每次运行都会不同。检查使用的界限很宽，"
                 "在繁忙的共享机器上也成立。")],
    )
