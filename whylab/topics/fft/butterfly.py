"""The butterfly-network experiment: the iterative FFT's data flow, drawn from its real plan.

The diagram's wires are read from the plan's stages and its node values from
the arrays :func:`fft_stages` holds after each stage, so one check can
recompute every drawn value from the drawn wires alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    GraphDiagram,
    GraphNode,
    Metric,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.numerics.fft import ButterflyStage, Plan, dft, fft_stages
from whylab.topics.fft.under_test import (
    LAST_STAGE_MISSING,
    NO_BIT_REVERSAL,
    TWIDDLE_OFF_BY_ONE,
    control,
    plan_under_test,
)
from whylab.topics.shared import AGREEMENT_TOLERANCE, agreement_check, relative_error

SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
WIRE_SIGN_FLIPPED = "wire-sign-flipped"


@dataclass(frozen=True)
class Wire:
    """One edge of the butterfly diagram: ``target += factor * source``."""

    source: str  # node id "s{stage}p{position}"
    target: str
    label: str
    factor: complex


def butterfly_wires(stages: tuple[ButterflyStage, ...]) -> list[Wire]:
    """The four wires of every butterfly of these stages (those :func:`fft` runs)."""
    wires = []
    for s, stage in enumerate(stages, start=1):
        for top, bottom, k, w in zip(stage.top, stage.bottom, stage.twiddle_exponent,
                                     stage.twiddles, strict=True):
            twiddle = f"W{str(stage.span).translate(SUBSCRIPT)}{str(k).translate(SUPERSCRIPT)}"
            wires += [
                Wire(f"s{s - 1}p{top}", f"s{s}p{top}", "", 1.0),
                Wire(f"s{s - 1}p{bottom}", f"s{s}p{top}", f"+{twiddle}", complex(w)),
                Wire(f"s{s - 1}p{top}", f"s{s}p{bottom}", "", 1.0),
                Wire(f"s{s - 1}p{bottom}", f"s{s}p{bottom}", f"−{twiddle}", -complex(w)),
            ]
    return wires


def wiring_check(wires: list[Wire], snapshots: list[np.ndarray]) -> Check:
    """Every node after the first column is the sum of its incoming wires' contributions.

    This ties the picture to the numbers: recomputing each value from the drawn
    wires alone must reproduce what :func:`fft` held after each stage.
    """
    def value(node_id: str) -> complex:
        stage, position = node_id[1:].split("p")
        return complex(snapshots[int(stage)][int(position)])

    recomputed: dict[str, complex] = {}
    for wire in wires:
        recomputed[wire.target] = recomputed.get(wire.target, 0) + wire.factor * value(wire.source)
    expected_nodes = (len(snapshots) - 1) * snapshots[0].shape[0]
    scale = max((abs(value(node)) for node in recomputed), default=0.0) or 1.0
    worst = max((abs(total - value(node)) for node, total in recomputed.items()), default=0.0)
    passed = len(recomputed) == expected_nodes and worst <= AGREEMENT_TOLERANCE * scale
    return Check(
        id="wires-compute-values",
        name=T("Each value in the diagram is the sum of its incoming wires times their factors",
               "图中每个数值都等于所有输入连线的数值乘以各自系数之和"),
        passed=bool(passed),
        measured=T(f"{len(recomputed)} nodes, largest difference {worst:.1e}",
                   f"{len(recomputed)} 个节点，最大差 {worst:.1e}"),
        expected=T(f"{expected_nodes} nodes, ≤ {AGREEMENT_TOLERANCE:.0e} relative",
                   f"{expected_nodes} 个节点，相对差 ≤ {AGREEMENT_TOLERANCE:.0e}"),
    )


def stage_structure_check(n: int, stages: tuple[ButterflyStage, ...]) -> Check:
    """There are log2 n stages, each of n/2 butterflies touching every position exactly once."""
    good = all(
        stage.top.shape[0] == n // 2
        and sorted(np.concatenate([stage.top, stage.bottom]).tolist()) == list(range(n))
        for stage in stages
    )
    per_stage = stages[0].top.shape[0] if stages else 0
    return Check(
        id="stage-structure",
        name=T("Each of the log₂ n stages has n/2 butterflies touching every position once",
               "log₂ n 级中每一级都有 n/2 个蝶形运算，且每个位置恰好参与一次"),
        passed=bool(good and len(stages) == int(math.log2(n))),
        measured=T(f"{len(stages)} stages × {per_stage} butterflies",
                   f"{len(stages)} 级 × {per_stage} 个蝶形"),
        expected=f"{int(math.log2(n))} × {n // 2}",
    )


def subtransform_check(x: np.ndarray, plan: Plan) -> Check:
    """After stage s, each block of 2^s positions holds the DFT of one sub-sequence.

    The block starting at position b holds the 2^s-point DFT of
    x[r], x[r + n/2^s], x[r + 2n/2^s], ... with r = perm[b]: exactly the
    sub-problem the recursive version solves at that depth. The expected
    sub-sequences use the true bit-reversal order (index bits read backwards),
    computed here, not the plan's.
    """
    n = x.shape[0]
    bits = int(math.log2(n))
    reversed_bits = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n)]
    snapshots = fft_stages(x, plan)
    worst = 0.0 if len(snapshots) == bits + 1 else math.inf
    for s, values in enumerate(snapshots):
        block = 2**s
        for start in range(0, n, block):
            sub_sequence = x[reversed_bits[start]::n // block]
            worst = max(worst, relative_error(values[start:start + block], dft(sub_sequence)))
    return Check(
        id="stages-are-subtransforms",
        name=T("After stage s, every block of 2ˢ values is the DFT of one sub-sequence "
               "x[r], x[r + n/2ˢ], …",
               "第 s 级之后，每一块 2ˢ 个数都是某个子序列 x[r], x[r + n/2ˢ], … 的 DFT"),
        passed=bool(worst <= AGREEMENT_TOLERANCE),
        measured=T(f"relative max error {worst:.1e}", f"最大相对误差 {worst:.1e}"),
        expected=f"≤ {AGREEMENT_TOLERANCE:.0e}",
    )


def even_odd_check(order: np.ndarray) -> Check:
    """The reorder puts the even-indexed samples in the first half, the odd in the second."""
    perm = [int(i) for i in order]
    n = len(perm)
    half = n // 2
    good = sorted(perm[:half]) == list(range(0, n, 2)) and sorted(perm[half:]) == list(
        range(1, n, 2))
    return Check(
        id="even-samples-first",
        name=T("Bit reversal puts the even-indexed samples in the first half, the odd in "
               "the second",
               "位反转把偶数下标的样本放在前一半，奇数下标的放在后一半"),
        passed=bool(good),
        measured=T(f"first half: {perm[:half]}", f"前一半：{perm[:half]}"),
        expected=T(f"{list(range(0, n, 2))} in some order", f"{list(range(0, n, 2))}，顺序不限"),
    )


def _format_complex(value: complex) -> str:
    real, imag = value.real, value.imag
    if abs(imag) < 5e-13:
        return f"{real:.3g}"
    return f"{real:.3g}{imag:+.3g}i"


def _flip_one_wire(wires: list[Wire]) -> list[Wire]:
    """The drawing with the sign of the first labelled wire flipped (a control)."""
    index = next(i for i, wire in enumerate(wires) if wire.label.startswith("+"))
    wrong = wires[index]
    flipped = Wire(wrong.source, wrong.target, "−" + wrong.label[1:], -wrong.factor)
    return wires[:index] + [flipped] + wires[index + 1:]


@experiment(
    name="butterfly",
    title=T("The butterfly network", "蝶形网络"),
    description=T(
        "The data flow of the iterative FFT, drawn from the index pairs it actually uses, with "
        "the values that flow through it for the input x[j] = j.",
        "迭代版 FFT 的数据流图，由它实际使用的下标对画出，"
        "节点上标出输入 x[j] = j 时流经的真实数值。",
    ),
    params=[
        Param("n", "choice", "8", T("points n", "点数 n"), choices=("4", "8", "16")),
    ],
    controls=[
        control(TWIDDLE_OFF_BY_ONE, ("network-equals-numpy", "stages-are-subtransforms")),
        control(NO_BIT_REVERSAL, ("even-samples-first", "network-equals-numpy",
                                  "stages-are-subtransforms")),
        control(LAST_STAGE_MISSING, ("stage-structure", "network-equals-numpy")),
        Control(WIRE_SIGN_FLIPPED, T("one wire of the drawing carries the wrong sign",
                                     "图中有一条连线的符号画反了"),
                breaks=("wires-compute-values",)),
    ],
    metrics=[
        Metric("stages", T("stages (log₂ n)", "级数（log₂ n）")),
        Metric("butterflies", T("butterflies", "蝶形运算个数")),
    ],
)
def butterfly(n: str) -> Result:
    size = int(n)
    x = np.arange(size, dtype=float)
    plan = plan_under_test(size)
    snapshots = fft_stages(x, plan)
    last = len(plan.stages)
    wires = butterfly_wires(plan.stages)
    if control_active(WIRE_SIGN_FLIPPED):
        wires = _flip_one_wire(wires)

    nodes = []
    for s, values in enumerate(snapshots):
        for p in range(size):
            if s == 0:
                label = f"x[{plan.order[p]}]"
            elif s == last:
                label = f"X[{p}]"
            else:
                label = f"{p}"
            # Pinned: stage s is column s, position p is row p, so the wires of each
            # butterfly cross as in the textbook picture.
            nodes.append(GraphNode(id=f"s{s}p{p}", label=label,
                                   detail=_format_complex(values[p]), group=f"s = {s}",
                                   layer=s, order=p))

    checks = [
        wiring_check(wires, snapshots),
        agreement_check("network-equals-numpy",
                        T("The network's last column equals numpy.fft.fft(x)",
                          "网络最后一列等于 numpy.fft.fft(x)"), snapshots[-1], np.fft.fft(x)),
        stage_structure_check(size, plan.stages),
        subtransform_check(x, plan),
        even_odd_check(plan.order),
    ]
    bits = int(math.log2(size))
    table = Table(
        title=T("Bit reversal: where each input sample starts", "位反转：每个输入样本的起始位置"),
        columns=[T("position i", "位置 i"), T("i in binary", "i 的二进制"),
                 T("reversed", "反转后"), T("sample placed there", "放在此处的样本")],
        rows=[[i, format(i, f"0{bits}b"), format(int(plan.order[i]), f"0{bits}b"),
               f"x[{plan.order[i]}]"] for i in range(size)],
    )
    return Result(
        checks=checks,
        figures=[GraphDiagram(title=T(f"Radix-2 butterflies for n = {size}",
                                      f"n = {size} 的基 2 蝶形网络"),
                              nodes=nodes,
                              edges=[(w.source, w.target, w.label) for w in wires],
                              direction="LR")],
        tables=[table],
        metrics={"stages": last, "butterflies": sum(s.top.shape[0] for s in plan.stages)},
        notes=[T(f"Column s = 0 holds the input in bit-reversed order; column s = 1 … {last} "
                 "the array after stage s.",
                 f"s = 0 列是按位反转顺序排好的输入；s = 1 … {last} 列是第 s 级之后的数组。"),
               T("An edge labelled +Wₘᵏ or −Wₘᵏ multiplies by ±exp(−2πik/m) on the way, "
                 "where m is the block length the stage produces; an unlabelled edge adds the "
                 "value unchanged.",
                 "标注为 +Wₘᵏ 或 −Wₘᵏ 的边表示沿途乘以 ±exp(−2πik/m)，m 是该级合并后的块长；"
                 "没有标注的边把数值原样加过去。")],
    )
