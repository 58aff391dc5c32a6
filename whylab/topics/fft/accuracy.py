"""The accuracy experiment: rounding error of the FFT and of the direct sum as n grows.

Both are measured against numpy.fft.fft run in long double precision (numpy
2's pocketfft computes natively in the input's precision: 64-bit mantissa on
x86, about 1e-19), far below the float64 errors being measured, and an
implementation independent of ours.
"""

from __future__ import annotations

import dataclasses
import math

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
from whylab.numerics.fft import dft, fft
from whylab.topics.fft.checks import exponent_check
from whylab.topics.fft.signals import make_signal
from whylab.topics.fft.under_test import plan_under_test
from whylab.topics.shared import growth_exponent, ratio_check

EPS = float(np.finfo(np.float64).eps)
SMALLEST_LOG2N = 4
FIT_FROM_LOG2N = 7  # below ~128 points the error of the twiddles (about ε) hides the growth
SINGLE_PRECISION_TWIDDLES = "single-precision-twiddles"
PAIRWISE_DIRECT_SUM = "pairwise-direct-sum"
IN_ORDER_EXPONENT = (0.3, 0.7)  # √n, the typical size of an ε·n worst case
FFT_ADVANTAGE_AT_LEAST = 2.0


def long_double_is_wider() -> bool:
    """Whether numpy's long double carries more digits than float64 (x86: yes; many ARMs: no)."""
    return float(np.finfo(np.longdouble).eps) < EPS / 100


def rms_relative_error(values: np.ndarray, reference: np.ndarray) -> float:
    """‖values − reference‖₂ / ‖reference‖₂, computed in the reference's precision."""
    difference = values.astype(reference.dtype) - reference
    return float(np.sqrt(np.sum(np.abs(difference) ** 2) / np.sum(np.abs(reference) ** 2)))


def fft_under_test(x: np.ndarray) -> np.ndarray:
    """Our FFT; under its control, with twiddle factors rounded to single precision."""
    plan = plan_under_test(x.shape[0])
    if control_active(SINGLE_PRECISION_TWIDDLES):
        stages = tuple(dataclasses.replace(
            stage, twiddles=stage.twiddles.astype(np.complex64).astype(np.complex128))
            for stage in plan.stages)
        plan = dataclasses.replace(plan, stages=stages)
    return fft(x, plan=plan)


def direct_sum_in_order(x: np.ndarray) -> np.ndarray:
    """The DFT summed term after term; under its control, summed pairwise instead."""
    return dft(x, summation="pairwise" if control_active(PAIRWISE_DIRECT_SUM) else "in-order")


@experiment(
    name="accuracy",
    title=T("Rounding error: the FFT against the direct sum", "舍入误差：FFT 与直接求和"),
    description=T(
        "Measures the rounding error of the radix-2 FFT and of the O(n²) sum, added term after "
        "term and added pairwise, against a long-double reference, for n from 16 up.",
        "以长双精度结果为基准，测量基 2 FFT 与 O(n²) 直接求和（逐项累加、两两累加）"
        "的舍入误差，n 从 16 起逐步增大。",
    ),
    params=[
        Param("max_log2n", "int", 11, T("largest log₂ n", "最大 log₂ n"), minimum=11,
              maximum=12, step=1),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control(SINGLE_PRECISION_TWIDDLES,
                T("the FFT's twiddle factors are stored in single precision",
                  "FFT 的旋转因子只以单精度保存"),
                breaks=("fft-error-eps-log-n",)),
        Control(PAIRWISE_DIRECT_SUM,
                T("the direct sum adds its terms pairwise, as numpy.sum does, not in order",
                  "直接求和像 numpy.sum 那样两两相加，而不是逐项累加"),
                breaks=("in-order-error-grows", "fft-beats-in-order-sum")),
    ],
    metrics=[
        Metric(
            "in_order_exponent",
            T(
                "growth of the in-order sum's error: exponent p in nᵖ",
                "逐项累加误差的增长指数 p（误差 ∝ nᵖ）",
            ),
        ),
        Metric(
            "fft_error_per_eps_log2n",
            T("largest FFT error / (ε·log₂ n)", "FFT 最大误差 / (ε·log₂ n)"),
        ),
        Metric(
            "in_order_over_fft_error",
            T("error at the largest n: in-order sum / FFT", "最大 n 处的误差之比：逐项累加 / FFT"),
            "×",
        ),
    ],
)
def accuracy(max_log2n: int, seed: int) -> Result:
    sizes = [2**k for k in range(SMALLEST_LOG2N, max_log2n + 1)]
    errors: dict[str, list[float]] = {"fft": [], "in-order": [], "pairwise": []}
    for n in sizes:
        x = make_signal(n, "random", seed + n)
        reference = np.fft.fft(x.astype(np.clongdouble))
        errors["fft"].append(rms_relative_error(fft_under_test(x), reference))
        errors["in-order"].append(rms_relative_error(direct_sum_in_order(x), reference))
        errors["pairwise"].append(rms_relative_error(dft(x), reference))

    per_eps_log_n = [e / (EPS * math.log2(n)) for n, e in zip(sizes, errors["fft"], strict=True)]
    fitted = [i for i, n in enumerate(sizes) if n >= 2**FIT_FROM_LOG2N]
    in_order_exponent = growth_exponent([sizes[i] for i in fitted],
                                        [errors["in-order"][i] for i in fitted])
    advantage = errors["in-order"][-1] / errors["fft"][-1]
    names = {
        "fft": T("FFT error is at most ε·log₂ n at every n (ε = 2.2e-16)",
                 "每个 n 上 FFT 的误差都不超过 ε·log₂ n（ε = 2.2e-16）"),
        "grows": T(f"The direct sum added in order has error growing like √n (the typical "
                   f"size of its ε·n worst case): fitted exponent over n = {sizes[fitted[0]]}–"
                   f"{sizes[-1]} in [{IN_ORDER_EXPONENT[0]}, {IN_ORDER_EXPONENT[1]}]",
                   f"逐项累加的直接求和，误差按 √n 增长（即其最坏情形 ε·n 的典型大小）："
                   f"在 n = {sizes[fitted[0]]}–{sizes[-1]} 上拟合的指数落在 "
                   f"[{IN_ORDER_EXPONENT[0]}, {IN_ORDER_EXPONENT[1]}] 内"),
        "beats": T(f"At n = {sizes[-1]} the in-order sum's error is at least "
                   f"{FFT_ADVANTAGE_AT_LEAST:g}× the FFT's",
                   f"n = {sizes[-1]} 时逐项累加的误差至少是 FFT 的 {FFT_ADVANTAGE_AT_LEAST:g} 倍"),
    }
    if long_double_is_wider():
        worst = max(per_eps_log_n)
        checks = [
            Check(id="fft-error-eps-log-n", name=names["fft"], passed=bool(worst <= 1.0),
                  measured=T(f"largest error / (ε·log₂ n) = {worst:.2f}",
                             f"误差 / (ε·log₂ n) 的最大值 = {worst:.2f}"),
                  expected="≤ 1"),
            exponent_check("in-order-error-grows", names["grows"], in_order_exponent,
                           at_least=IN_ORDER_EXPONENT[0], at_most=IN_ORDER_EXPONENT[1]),
            ratio_check("fft-beats-in-order-sum", names["beats"], advantage,
                        at_least=FFT_ADVANTAGE_AT_LEAST, number_format=".3g"),
        ]
    else:
        why = T("needs a long double wider than float64 for the reference (x86 has one)",
                "需要比 float64 更宽的长双精度作基准（x86 上有）")
        checks = [Check.not_applicable(id=check_id, name=names[key], expected="—", why=why)
                  for check_id, key in (("fft-error-eps-log-n", "fft"),
                                        ("in-order-error-grows", "grows"),
                                        ("fft-beats-in-order-sum", "beats"))]
    chart = LineChart(
        title=T("Relative rounding error against n", "相对舍入误差与 n"),
        x_label=T("n (points)", "n（点数）"),
        y_label=T("‖error‖ / ‖X‖", "‖误差‖ / ‖X‖"),
        series=[
            Series(T("radix-2 FFT", "基 2 FFT"), sizes, errors["fft"]),
            Series(T("direct sum, added in order", "直接求和，逐项累加"), sizes,
                   errors["in-order"]),
            Series(T("direct sum, added pairwise (numpy.sum)", "直接求和，两两累加（numpy.sum）"),
                   sizes, errors["pairwise"]),
            Series(T("ε·log₂ n", "ε·log₂ n"), sizes, [EPS * math.log2(n) for n in sizes]),
        ],
        log_x=True, log_y=True,
    )
    table = Table(
        title=T("Relative error in units of ε", "以 ε 为单位的相对误差"),
        columns=[T("n", "n"), T("FFT", "FFT"), T("in order", "逐项累加"),
                 T("pairwise", "两两累加")],
        rows=[[n, f"{f / EPS:.2f}", f"{o / EPS:.2f}", f"{p / EPS:.2f}"]
              for n, f, o, p in zip(sizes, errors["fft"], errors["in-order"],
                                    errors["pairwise"], strict=True)],
    )
    return Result(
        checks=checks, figures=[chart], tables=[table],
        metrics={"in_order_exponent": in_order_exponent,
                 "fft_error_per_eps_log2n": max(per_eps_log_n),
                 "in_order_over_fft_error": advantage},
        notes=[T("Errors are ‖computed − reference‖₂ / ‖reference‖₂ for one complex Gaussian "
                 "signal per n; the reference is numpy.fft.fft in long double precision.",
                 "误差定义为 ‖计算值 − 基准‖₂ / ‖基准‖₂，每个 n 用一个复高斯随机信号；"
                 "基准是长双精度下的 numpy.fft.fft。")],
    )
