"""Experiment ``same-answer``: a comparison is only fair on the same input and the same answer.

The sum of squares of one float64 vector is computed by a Python loop (the reference)
and by NumPy's ``x @ x``. ``whylab.bench.compare(..., check_equal=True)`` first calls
both on the same input and compares the results within a relative tolerance, and only
then times them in interleaved rounds. Two negative controls swap in a tempting
"optimisation": one that skips every other element (fast and wrong), and one handed a
different input. The comparison must refuse to time either.
"""

from __future__ import annotations

import hashlib

import numpy as np

from whylab.bench import ResultsDiffer, compare
from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.topics.shared import timing_check

RTOL = 1e-9
FASTER_AT_LEAST = 5.0  # NumPy's dot against a Python loop, per round


def fingerprint(values: np.ndarray) -> str:
    """Shape, dtype and a hash of the bytes: what "the same input" means here."""
    digest = hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()[:12]
    return f"{values.shape} {values.dtype} {digest}"


@experiment(
    name="same-answer",
    title=T("Same input, same answer, then time", "同样的输入、同样的答案，然后才计时"),
    description=T(
        "Checks that a Python loop and NumPy's x @ x get the same input and give the same sum "
        "of squares (relative tolerance 1e-9) before timing them against each other.",
        "先确认 Python 循环与 NumPy 的 x @ x 拿到同样的输入、算出同样的平方和"
        "（相对容差 1e-9），然后才对两者计时比较。",
    ),
    params=[
        Param("n", "int", 2000, T("vector length", "向量长度"), minimum=10, maximum=100_000,
              step=10),
        Param("rounds", "int", 9, T("timing rounds", "计时轮数"), minimum=3, maximum=15, step=1),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("faster-but-wrong",
                T("the NumPy candidate skips every other element (twice as fast, wrong)",
                  "NumPy 候选每隔一个元素跳过一个（快一倍，但结果错）"),
                breaks=("results-equal",)),
        Control("different-input",
                T("the NumPy candidate is handed a different vector than the loop",
                  "NumPy 候选拿到的向量与循环的不同"),
                breaks=("same-input", "results-equal")),
        Control("numpy-element-by-element",
                T("the NumPy candidate walks the array element by element in Python",
                  "NumPy 候选在 Python 里逐个元素遍历数组"),
                breaks=("numpy-faster",)),
    ],
    timing=True,
    metrics=[
        Metric(
            "relative_difference",
            T("relative difference of the two answers", "两个结果的相对差"),
        ),
        Metric(
            "speedup",
            T("NumPy's speed-up over the loop (median)", "NumPy 相对循环的加速比（中位数）"),
            "×",
        ),
    ],
)
def same_answer(n: int, rounds: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    given = {"loop": x, "numpy": x}
    if control_active("different-input"):
        given["numpy"] = rng.standard_normal(n)
    skip = control_active("faster-but-wrong")
    element_by_element = control_active("numpy-element-by-element")

    as_floats = given["loop"].tolist()

    def python_loop(values=as_floats):
        total = 0.0
        for v in values:
            total += v * v
        return total

    def numpy_dot(values=given["numpy"]):
        if skip:
            half = values[::2]
            return float(half @ half) * 2.0  # "the other half is about the same"
        if element_by_element:
            return float(sum(v * v for v in values))
        return float(values @ values)

    prints = {name: fingerprint(values) for name, values in given.items()}
    refused = None
    try:
        # the fastest of 3 batches per round: other work on the machine only adds time
        comparison = compare({"loop": python_loop, "numpy": numpy_dot}, rounds, 0.002,
                             repeats=3, check_equal=True, rtol=RTOL)
    except ResultsDiffer as error:
        refused = error
    loop_value, numpy_value = python_loop(), numpy_dot()
    difference = abs(numpy_value - loop_value) / abs(loop_value)

    checks = [
        Check(id="same-input",
              name=T("Both candidates receive the same input (shape, dtype and bytes)",
                     "两个候选拿到同样的输入（形状、数据类型和字节）"),
              passed=prints["loop"] == prints["numpy"],
              measured=T(f"loop {prints['loop']}, numpy {prints['numpy']}",
                         f"循环 {prints['loop']}，NumPy {prints['numpy']}"),
              expected=T("identical", "完全相同")),
        Check(id="results-equal",
              name=T(f"compare(..., check_equal=True) accepts the pair: results agree within "
                     f"rtol = {RTOL:g}",
                     f"compare(..., check_equal=True) 接受这一对：结果在 rtol = {RTOL:g} 内一致"),
              passed=refused is None,
              measured=(T(f"relative difference {difference:.1e}", f"相对差 {difference:.1e}")
                        if refused is None else
                        T(f"refused to time: relative difference {difference:.1e}",
                          f"拒绝计时：相对差 {difference:.1e}")),
              expected=f"≤ {RTOL:g}"),
    ]
    rows = [[T("loop", "循环"), prints["loop"], f"{loop_value:.12g}"],
            [T("numpy", "numpy"), prints["numpy"], f"{numpy_value:.12g}"]]
    metrics: dict[str, float | int | str] = {"relative_difference": difference}
    if refused is None:
        speedup = comparison.ratio_quartiles("loop", "numpy").median
        checks.append(timing_check(
            "numpy-faster",
            T(f"Once both agree, NumPy is at least {FASTER_AT_LEAST:g}× faster than the loop "
              f"(per call: loop {comparison.median('loop') * 1e6:.1f} µs, numpy "
              f"{comparison.median('numpy') * 1e6:.2f} µs; loop ÷ numpy, round by round)",
              f"两者结果一致之后，NumPy 比循环至少快 {FASTER_AT_LEAST:g} 倍（每次调用：循环 "
              f"{comparison.median('loop') * 1e6:.1f} 微秒，NumPy "
              f"{comparison.median('numpy') * 1e6:.2f} 微秒；逐轮计算循环 ÷ NumPy）"),
            comparison.ratios("loop", "numpy"), at_least=FASTER_AT_LEAST, number_format=".0f"))
        metrics["speedup"] = speedup
    else:
        checks.append(Check(
            id="numpy-faster",
            name=T(f"Once both agree, NumPy is at least {FASTER_AT_LEAST:g}× faster than the loop",
                   f"两者结果一致之后，NumPy 比循环至少快 {FASTER_AT_LEAST:g} 倍"),
            passed=False,
            measured=T("not timed: the results differ", "未计时：结果不一致"),
            expected=f"≥ {FASTER_AT_LEAST:g}×"))
    table = Table(
        title=T("What each candidate was given and returned", "每个候选拿到了什么、返回了什么"),
        columns=[T("candidate", "候选"),
                 T("input (shape, dtype, sha256)", "输入（形状、类型、sha256）"),
                 T("sum of squares", "平方和")],
        rows=rows,
    )
    return Result(checks=checks, tables=[table], metrics=metrics)
