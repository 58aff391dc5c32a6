"""Experiments for "the radix-2 FFT": correctness against the DFT, the butterfly
network, accuracy, and how the cost grows with n.

Everything shown runs :mod:`whylab.numerics.fft`: the butterfly diagram is drawn
from the index pairs and intermediate values of the same iterative FFT that the
other experiments time and compare, and the operation counts are read off the
arrays that code multiplies. The transforms come from :mod:`.under_test`, where
the negative controls perturb them; the comparisons are in :mod:`.checks`.
"""

from __future__ import annotations

import math

import numpy as np

from whylab.explorer.experiment import (
    Check,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    Table,
    experiment,
)
from whylab.numerics.fft import OperationCount, fft, ifft
from whylab.topics.fft.accuracy import accuracy
from whylab.topics.fft.butterfly import butterfly
from whylab.topics.fft.checks import count_check
from whylab.topics.fft.cost import cost_growth
from whylab.topics.fft.signals import make_signal, thin
from whylab.topics.fft.under_test import (
    DFT_BY_FFT,
    NO_BIT_REVERSAL,
    ONLY_BIT_REVERSAL,
    RECURSION_SWAPS_HALVES,
    TWIDDLE_OFF_BY_ONE,
    control,
    plan_under_test,
    recursive_under_test,
    reference_dft,
)
from whylab.topics.shared import agreement_check


def nontrivial_twiddles(n: int) -> int:
    """Twiddle multiplies of the radix-2 FFT by a factor other than 1 or -i (n >= 2).

    Of the (n/2) log2 n twiddles, stage by stage: every block of a stage has one
    w^0 = 1 (n - 1 blocks in all stages together) and, from span 4 on, one
    w^(span/4) = -i (n/2 - 1 blocks). What is left: (n/2) log2 n - 3n/2 + 2.
    """
    return n // 2 * int(math.log2(n)) - 3 * n // 2 + 2


def fft_real_flops(n: int) -> tuple[int, int]:
    """Real flops of the radix-2 FFT: every twiddle multiplied, and with 1 and -i skipped.

    A butterfly is one complex multiply (4 real multiplies + 2 additions) and
    two complex additions (2 real additions each): 10 flops, so 5 n log2 n in
    all -- the figure textbooks quote for radix 2. Skipping the
    3n/2 - 2 trivial multiplies saves 6 flops each: 5 n log2 n - 9n + 12.
    """
    full = 5 * n * int(math.log2(n))
    return full, full - 6 * (3 * n // 2 - 2)


@experiment(
    name="fft-vs-dft",
    title=T("The FFT computes the DFT, up to rounding", "FFT 算出的就是 DFT（误差只在舍入级别）"),
    description=T(
        "Transforms one signal four ways -- the O(n²) DFT, the recursive and the iterative "
        "radix-2 FFT, and numpy.fft.fft -- compares them, inverts the spectrum, and counts "
        "the arithmetic each really did.",
        "用四种方法变换同一个信号——O(n²) 的 DFT、递归版与迭代版基 2 FFT、numpy.fft.fft——"
        "逐一比较结果，再把频谱逆变换回去，并统计各自实际做了多少次运算。",
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
    controls=[
        control(TWIDDLE_OFF_BY_ONE, ("fft-equals-dft", "fft-equals-numpy", "ifft-equals-numpy",
                                     "fft-nontrivial-multiplies", "fft-real-flops")),
        control(NO_BIT_REVERSAL, ("fft-equals-dft", "fft-equals-numpy")),
        control(ONLY_BIT_REVERSAL, ("fft-equals-dft", "ifft-equals-numpy", "fft-butterflies",
                                    "fft-nontrivial-multiplies", "fft-real-flops")),
        control(RECURSION_SWAPS_HALVES, ("recursive-equals-dft",)),
        control(DFT_BY_FFT, ("dft-multiplies",)),
    ],
    metrics=[
        Metric("n", T("length n", "长度 n")),
        Metric("max_abs_error_vs_dft", T("largest |FFT − DFT|", "最大偏差 |FFT − DFT|")),
        Metric(
            "dft_multiplies_per_fft_multiply",
            T("complex multiplies: DFT / FFT", "复数乘法次数：DFT / FFT"),
            "×",
        ),
    ],
)
def fft_vs_dft(log2n: int, signal: str, seed: int) -> Result:
    n = 2**log2n
    x = make_signal(n, signal, seed)
    fft_count, dft_count = OperationCount(), OperationCount()
    plan = plan_under_test(n)
    reference = reference_dft(x, dft_count)
    iterative = fft(x, fft_count, plan)
    recursive = recursive_under_test(x)
    # The inverse is judged against numpy's inverse of the reference spectrum, not
    # against our own forward transform: a "transform" that only reorders its input
    # would undo itself and pass a round trip.
    inverse = ifft(reference, plan=plan)

    checks = [
        agreement_check("fft-equals-dft", T("Iterative radix-2 FFT equals the O(n²) DFT",
                                            "迭代版基 2 FFT 与 O(n²) 的 DFT 结果相同"),
                        iterative, reference),
        agreement_check("recursive-equals-dft", T("Recursive (even/odd) FFT equals the DFT",
                                                  "递归（奇偶拆分）版 FFT 与 DFT 结果相同"),
                        recursive, reference),
        agreement_check("fft-equals-numpy", T("Iterative FFT equals numpy.fft.fft",
                                              "迭代版 FFT 与 numpy.fft.fft 结果相同"),
                        iterative, np.fft.fft(x)),
        agreement_check("ifft-equals-numpy",
                        T("The inverse FFT of the DFT's spectrum equals numpy.fft.ifft of it",
                          "对 DFT 得到的频谱做逆 FFT，结果与 numpy.fft.ifft 相同"),
                        inverse, np.fft.ifft(reference)),
        count_check("fft-butterflies", T("Butterflies done by the FFT = (n/2)·log₂ n",
                                         "FFT 实际执行的蝶形运算次数 = (n/2)·log₂ n"),
                    [fft_count.butterflies], [n // 2 * log2n], [n]),
        count_check("dft-multiplies", T("Complex products formed by the DFT = n²",
                                        "DFT 实际算出的复数乘积个数 = n²"),
                    [dft_count.complex_multiplies], [n * n], [n]),
    ]
    if n >= 2:
        full, skipped = fft_real_flops(n)
        checks += [
            count_check("fft-nontrivial-multiplies",
                        T("FFT multiplies by a twiddle other than 1 or −i = "
                          "(n/2)·log₂ n − 3n/2 + 2",
                          "FFT 中乘以 1 和 −i 以外的旋转因子的次数 = (n/2)·log₂ n − 3n/2 + 2"),
                        [fft_count.nontrivial_multiplies], [nontrivial_twiddles(n)], [n]),
            Check(id="fft-real-flops",
                  name=T("Real flops of the FFT: 5n·log₂ n with every twiddle multiplied, "
                         "5n·log₂ n − 9n + 12 with 1 and −i skipped",
                         "FFT 的实数浮点运算次数：每个旋转因子都乘时为 5n·log₂ n，"
                         "跳过 1 和 −i 时为 5n·log₂ n − 9n + 12"),
                  passed=(fft_count.real_flops(skip_trivial=False) == full
                          and fft_count.real_flops(skip_trivial=True) == skipped),
                  measured=(f"{fft_count.real_flops(skip_trivial=False)}, "
                            f"{fft_count.real_flops(skip_trivial=True)}"),
                  expected=f"{full}, {skipped}"),
        ]
    else:
        why = T("needs n ≥ 2: one sample has no butterflies", "需要 n ≥ 2：一个样本没有蝶形运算")
        checks += [
            Check.not_applicable(id="fft-nontrivial-multiplies",
                                 name=T("FFT multiplies by a twiddle other than 1 or −i",
                                        "FFT 中乘以 1 和 −i 以外的旋转因子的次数"),
                                 expected="(n/2)·log₂ n − 3n/2 + 2", why=why),
            Check.not_applicable(id="fft-real-flops", name=T("Real flops of the FFT",
                                                             "FFT 的实数浮点运算次数"),
                                 expected="5n·log₂ n − 9n + 12", why=why),
        ]
    bins = np.arange(n)
    figure = LineChart(
        title=T("Magnitude spectrum |X[k]|", "幅度谱 |X[k]|"),
        x_label=T("frequency bin k", "频率序号 k"),
        y_label=T("|X[k]|", "|X[k]|"),
        series=[
            Series(T("DFT (definition)", "DFT（定义）"), thin(bins), thin(np.abs(reference))),
            Series(T("radix-2 FFT", "基 2 FFT"), thin(bins), thin(np.abs(iterative))),
        ],
    )
    table = Table(
        title=T("Arithmetic counted during this run", "本次运行中统计到的运算次数"),
        columns=[T("method", "方法"), T("complex multiplies", "复数乘法"),
                 T("of them by 1 or −i", "其中乘以 1 或 −i"),
                 T("complex additions", "复数加法"), T("exponentials evaluated", "计算的复指数")],
        rows=[
            ["DFT", dft_count.complex_multiplies, dft_count.trivial_multiplies,
             dft_count.complex_additions, dft_count.exponentials],
            ["FFT", fft_count.complex_multiplies, fft_count.trivial_multiplies,
             fft_count.complex_additions, fft_count.exponentials],
        ],
    )
    multiplies = fft_count.complex_multiplies
    return Result(
        checks=checks,
        figures=[figure],
        tables=[table],
        metrics={"n": n, "max_abs_error_vs_dft": float(np.max(np.abs(iterative - reference))),
                 "dft_multiplies_per_fft_multiply":
                     dft_count.complex_multiplies / multiplies if multiplies else 1.0},
        notes=[T("The FFT's twiddle factors are computed once per length, when the plan is made, "
                 "so a call evaluates no exponentials; the DFT evaluates all n² of its matrix "
                 "entries on every call.",
                 "FFT 的旋转因子在为该长度制定计划时只算一次，所以每次调用不再计算复指数；"
                 "DFT 则在每次调用时都把矩阵的 n² 个元素重新算一遍。")],
    )


EXPERIMENTS = [fft_vs_dft, butterfly, accuracy, cost_growth]
