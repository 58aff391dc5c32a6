"""Experiments for "strided tensors" that measure what a layout costs.

``copy-cost`` times header-only calls against copies and a kernel on a
transposed operand against the same kernel on a row-major copy; ``mm-operands``
counts the bytes a matrix product allocates for operands of different layouts.
Wall-clock claims compare ratios measured in the same run, with wide margins;
the claims that can be stated without a clock (nothing was copied) are checked
by counting bytes with :mod:`tracemalloc`, which sees NumPy's allocations.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from functools import partial

import numpy as np

import whylab
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
    Text,
    control_active,
    experiment,
    report_progress,
)
from whylab.topics.shared import relative_error, timing_check

# One operand t, nothing to agree with. Neither allocates an n × n result: a fresh one
# sometimes pays its page faults and sometimes not (1.2 ms or 13 ms for the same
# 1024 × 1024 t * 2 on these machines), noise that would swamp the comparison.
LONE_OPS: dict[str, tuple[Text, Callable]] = {
    "sum-rows": (T("t.sum(dim=1)", "t.sum(dim=1)"), lambda t: t.sum(dim=1)),
    "scale-in-place": (T("t.mul_(1)", "t.mul_(1)"), lambda t: t.mul_(1.0)),
}
SMALLEST_N = 128
CHEAPER_THAN_COPY_AT_LEAST = 10.0  # a header-only call vs. a real n × n copy, at the largest n
FLAT_GROWTH_AT_MOST = 4.0  # x.t()'s time, largest n over smallest n (elements grow ≥ 64×)
# A lone transposed operand: measured 0.3–1.3× (once 2.7× on a machine at load 9); a
# kernel that first copies it to row-major pays the transposing copy, 15–20× more.
LONE_SLOWDOWN_AT_MOST = 4.0
MIXED_SLOWDOWN_AT_LEAST = 2.0  # t.add_(y) with t transposed (measured 9–80× on these machines)
HEADER_BYTES_AT_MOST = 1024  # what a view may allocate: a Python object, no element storage
SAME_VALUES_TOLERANCE = 1e-12  # relative; a sum may add the same numbers in another order


LOOP_BUDGET_S = 0.002


def timed_side_by_side(calls: dict[str, Callable[[], object]], rounds: int):
    """Time every call in ``rounds`` interleaved rounds (one loop of about 2 ms per call and
    round), so a slow spell of a shared machine lands on all the calls of a round alike.

    Each round's sample is the fastest of three loops: a loop preempted by another
    process would otherwise sway that round's ratio. Returns the
    :class:`~whylab.bench.Comparison`. A call's cost is its fastest round
    (other work only ever adds time); two calls are compared by the median of their
    round-by-round ratios, which cancels slow spells longer than a round.
    """
    return compare(calls, rounds, LOOP_BUDGET_S, repeats=3, max_calls=1 << 12)


def bytes_allocated(func: Callable[[], object]) -> int:
    """Peak bytes allocated while ``func`` runs (after one untraced warm-up call).

    NumPy reports its data buffers to :mod:`tracemalloc`, so a copy of an n × n
    float64 matrix shows up as 8n² bytes and a view as a few hundred.
    """
    func()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        func()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return max(0, peak - before)


def storage_ptr(tensor: whylab.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


# ---------------------------------------------------------------- copy-cost: the code under test


def transpose_under_test(x: whylab.Tensor) -> whylab.Tensor:
    """``x.t()``, or under the control ``copying-transpose`` a transpose that copies."""
    if control_active("copying-transpose"):
        return x.t().contiguous()
    return x.t()


def contiguous_under_test(t: whylab.Tensor) -> whylab.Tensor:
    """``t.contiguous()``, or a wrong one under a control: one that always copies
    (``contiguous-always-copies``) or one that never does (``contiguous-never-copies``)."""
    if control_active("contiguous-always-copies"):
        return t.clone()
    if control_active("contiguous-never-copies"):
        return t
    return t.contiguous()


def lone_operand(t: whylab.Tensor) -> whylab.Tensor:
    """What a kernel with one operand reads: ``t`` itself, or under the control
    ``kernel-needs-row-major`` a row-major copy made first (a kernel that demands a layout)."""
    if control_active("kernel-needs-row-major"):
        return t.contiguous()
    return t


def apply_lone(op: Callable, t: whylab.Tensor) -> whylab.Tensor:
    """Run a one-operand kernel on ``t`` as the code under test reads it."""
    return op(lone_operand(t))


def all_sizes_check(check_id: str, name: Text, outcomes: list[bool]) -> Check:
    """A structural fact that must hold at every n of the run."""
    return Check(id=check_id, name=name, passed=bool(outcomes) and all(outcomes),
                 measured=T(f"{sum(outcomes)} of {len(outcomes)} sizes",
                            f"{len(outcomes)} 个尺寸中 {sum(outcomes)} 个"),
                 expected=T(f"{len(outcomes)} of {len(outcomes)} sizes",
                            f"{len(outcomes)} 个尺寸全部"))


SERIES = {
    "lone_row_major": "{op}, t row-major",
    "lone_transposed": "{op}, t = x.t()",
    "mixed_row_major": "t.add_(y), t row-major",
    "mixed_transposed": "t.add_(y), t = x.t()",
    "clone": "x.clone()",
    "contiguous_of_transposed": "x.t().contiguous()",
    "contiguous_of_contiguous": "x.contiguous()",
    "transpose_view": "x.t()",
}
SERIES_ZH = {"lone_row_major": "{op}，t 为行主序", "lone_transposed": "{op}，t = x.t()",
             "mixed_row_major": "t.add_(y)，t 为行主序", "mixed_transposed": "t + y，t = x.t()"}


def _series_name(key: str, op: Text) -> Text:
    return T(SERIES[key].format(op=op.en), SERIES_ZH.get(key, SERIES[key]).format(op=op.zh))


@experiment(
    name="copy-cost",
    title=T("What a view costs, what a copy costs, and what a layout costs",
            "视图的代价、复制的代价，以及布局的代价"),
    description=T(
        "For n × n float64 tensors x and y (n from 128 up), times the header-only calls x.t() "
        "and x.contiguous() against the copies x.clone() and x.t().contiguous(), counts the "
        "bytes x.t() allocates, and times a kernel on t = x.t() against the same kernel on a "
        "row-major copy of t: one with t as its only operand, and t.add_(y), where the two "
        "operands disagree in layout. The calls are timed side by side in interleaved rounds: "
        "a call's time is its fastest round, a ratio of two layouts the median of the "
        "round-by-round ratios.",
        "对 n × n 的 float64 张量 x 和 y（n 从 128 起），计时只建元数据的调用 x.t() 和 "
        "x.contiguous()，与复制 x.clone() 和 x.t().contiguous() 对比；统计 x.t() 分配的字节数；"
        "再对 t = x.t() 和 t 的行主序副本分别运行同一个内核并计时：一个只有 t 一个操作数，"
        "另一个是 t.add_(y)，两个操作数的布局不一致。各调用在交替进行的多轮中并排计时："
        "单个调用的耗时取最快的一轮，两种布局的耗时之比取逐轮之比的中位数。",
    ),
    params=[
        Param("op", "choice", "sum-rows",
              T("kernel with t as its only operand", "只有 t 一个操作数的内核"),
              choices=tuple(LONE_OPS), choice_labels=tuple(label for label, _ in
                                                           LONE_OPS.values())),
        Param("max_log2n", "int", 10, T("largest log₂ n", "最大的 log₂ n"),
              minimum=8, maximum=11, step=1),
        Param("rounds", "int", 9, T("timing rounds (interleaved)", "计时轮数（交替进行）"),
              minimum=1, maximum=15, step=1),
    ],
    timing=True,
    controls=[
        Control("copying-transpose",
                T("x.t() copies the data into new storage (a transpose that moves every number)",
                  "x.t() 把数据复制到新存储里（一个真的挪动每个数的转置）"),
                breaks=("transpose-allocates-nothing", "transpose-time-flat",
                        "view-cheaper-than-copy")),
        Control("contiguous-always-copies",
                T("contiguous() copies even a tensor that is already row-major",
                  "即使张量已经是行主序，contiguous() 也复制"),
                breaks=("contiguous-returns-self", "self-return-cheaper-than-copy")),
        Control("contiguous-never-copies",
                T("contiguous() returns the transposed view itself instead of a row-major copy",
                  "contiguous() 直接返回转置视图本身，而不是行主序副本"),
                breaks=("contiguous-copies-transposed",)),
        Control("view-read-untransposed",
                T("the kernels read the view's storage in memory order, ignoring its strides",
                  "内核无视视图的步幅，按存储里的先后顺序读取"),
                breaks=("same-values",)),
        Control("kernel-needs-row-major",
                T("the one-operand kernel first makes a row-major copy of a transposed operand",
                  "单操作数的内核先把转置的操作数复制成行主序"),
                breaks=("lone-transposed-not-slower",)),
        Control("layouts-agree",
                T("in t.add_(y), t is in fact row-major like y, so the layouts agree",
                  "t.add_(y) 中的 t 其实和 y 一样是行主序，两者布局一致"),
                breaks=("mixed-layouts-slower",)),
    ],
    metrics=[
        Metric(
            "largest_n",
            T("largest n (the ratios below are at this n)", "最大的 n（下面的比值都在这个 n 上）"),
        ),
        Metric(
            "lone_transposed_over_row_major",
            T(
                "one-operand kernel: time on x.t() / on a row-major copy (median)",
                "单操作数内核：x.t() 上的耗时 / 行主序副本上的耗时（中位数）",
            ),
            "×",
        ),
        Metric("lone_ratio_quartiles", T("… median [quartiles]", "……中位数 [四分位数]"), "×"),
        Metric(
            "mixed_transposed_over_row_major",
            T(
                "t.add_(y): time with t = x.t() / with t row-major (median)",
                "t.add_(y)：t = x.t() 时的耗时 / t 为行主序时的耗时（中位数）",
            ),
            "×",
        ),
        Metric("mixed_ratio_quartiles", T("… median [quartiles]", "……中位数 [四分位数]"), "×"),
        Metric(
            "transposing_copy_over_clone",
            T("time: x.t().contiguous() / x.clone()", "耗时：x.t().contiguous() / x.clone()"),
            "×",
        ),
        Metric(
            "clone_over_self_return",
            T(
                "time: x.clone() / x.contiguous() (which returns x itself)",
                "耗时：x.clone() / x.contiguous()（后者直接返回 x）",
            ),
            "×",
        ),
        Metric(
            "transposing_copy_over_view",
            T("time: x.t().contiguous() / x.t()", "耗时：x.t().contiguous() / x.t()"),
            "×",
        ),
        Metric(
            "view_seconds_largest_over_smallest",
            T("time of x.t(): largest n / smallest n", "x.t() 的耗时：最大 n / 最小 n"),
            "×",
        ),
        Metric(
            "view_bytes_at_most",
            T("bytes x.t() allocates, at most", "x.t() 分配的字节数（最多）"),
            "B",
        ),
    ],
)
def copy_cost(op: str, max_log2n: int, rounds: int) -> Result:
    label, lone_op = LONE_OPS[op]
    sizes = [2**k for k in range(SMALLEST_N.bit_length() - 1, max_log2n + 1)]
    timings: dict[str, list[float]] = {key: [] for key in SERIES}
    self_returns, copies_row_major, view_bytes, copy_bytes, bases = [], [], [], [], []
    worst_difference = 0.0
    generator = whylab.Generator().manual_seed(0)
    for step, n in enumerate(sizes):
        x = whylab.randn(n, n, generator=generator, dtype=whylab.float64)
        y = whylab.randn(n, n, generator=generator, dtype=whylab.float64)
        xt = transpose_under_test(x)
        # An independent row-major copy of xᵀ, made by NumPy, not by the code under test.
        row_major = whylab.tensor(np.ascontiguousarray(x.numpy().T))
        mixed_operand = row_major if control_active("layouts-agree") else xt

        same = contiguous_under_test(x)
        self_returns.append(same is x and storage_ptr(same) == storage_ptr(x))
        made = contiguous_under_test(xt)
        copies_row_major.append(storage_ptr(made) != storage_ptr(x)
                                and tuple(made.stride()) == (n, 1)
                                and np.array_equal(made.numpy(), x.numpy().T))
        read = x if control_active("view-read-untransposed") else xt
        worst_difference = max(
            worst_difference,
            relative_error(apply_lone(lone_op, read).numpy(), lone_op(row_major).numpy()),
            relative_error((read + y).numpy(), (row_major + y).numpy()))
        view_bytes.append(bytes_allocated(partial(transpose_under_test, x)))
        copy_bytes.append(bytes_allocated(x.clone))

        calls = {
            "lone_row_major": partial(lone_op, row_major),
            "lone_transposed": partial(apply_lone, lone_op, xt),
            # In place: an n × n result would add page-fault noise (see LONE_OPS).
            "mixed_row_major": partial(whylab.Tensor.add_, row_major, y),
            "mixed_transposed": partial(whylab.Tensor.add_, mixed_operand, y),
            "clone": x.clone,
            "contiguous_of_transposed": partial(contiguous_under_test, x.t()),
            "contiguous_of_contiguous": partial(contiguous_under_test, x),
            "transpose_view": partial(transpose_under_test, x),
        }
        measured = timed_side_by_side(calls, rounds)
        for key, times in measured.times.items():
            timings[key].append(min(times))
        bases.append(x)
        report_progress((step + 1) / len(sizes))
    # x.t() at every n once more, all sizes side by side in the same rounds: the growth
    # from the smallest to the largest n compares calls timed together.
    side_by_side = timed_side_by_side(
        {n: partial(transpose_under_test, base) for n, base in zip(sizes, bases, strict=True)},
        2 * rounds)
    timings["transpose_view"] = [min(side_by_side.times[n]) for n in sizes]
    # Layout against layout at the largest n: the median of the round-by-round ratios.
    layout_ratio = {key: measured.ratio_quartiles(f"{key}_transposed", f"{key}_row_major")
                    for key in ("lone", "mixed")}

    smallest, largest = sizes[0], sizes[-1]

    def at_largest(top: str, bottom: str) -> float:
        return timings[top][-1] / timings[bottom][-1]

    copy_over_kernel = at_largest("contiguous_of_transposed", "lone_row_major")
    view_growth = timings["transpose_view"][-1] / timings["transpose_view"][0]
    copy_growth = timings["contiguous_of_transposed"][-1] / timings["contiguous_of_transposed"][0]
    element_growth = (largest // smallest) ** 2
    header_only = [b <= HEADER_BYTES_AT_MOST for b in view_bytes]
    checks = [
        all_sizes_check("contiguous-returns-self",
                        T("contiguous() of a contiguous tensor returns the tensor itself: same "
                          "object, same storage, no copy",
                          "对连续张量调用 contiguous() 返回它自己：同一个对象、同一块存储，不复制"),
                        self_returns),
        all_sizes_check("contiguous-copies-transposed",
                        T("contiguous() of the transposed view makes a new row-major storage "
                          "(strides (n, 1)) holding xᵀ",
                          "对转置视图调用 contiguous() 会新建一块行主序存储（步幅 (n, 1)），"
                          "内容为 xᵀ"),
                        copies_row_major),
        Check(id="same-values",
              name=T(f"{label.en} and t + y give the same values whether t is the view or a "
                     "row-major copy",
                     f"无论 t 是视图还是行主序副本，{label.zh} 和 t + y 的结果都相同"),
              passed=worst_difference <= SAME_VALUES_TOLERANCE,
              measured=T(f"relative max difference {worst_difference:.1e}",
                         f"最大相对差 {worst_difference:.1e}"),
              expected=f"≤ {SAME_VALUES_TOLERANCE:.0e}"),
        Check(id="transpose-allocates-nothing",
              name=T(f"x.t() allocates no element storage at any n (at most "
                     f"{HEADER_BYTES_AT_MOST} bytes, for the header), while x.clone() "
                     "allocates 8n² bytes",
                     f"在每个 n 下 x.t() 都不分配元素存储（至多 {HEADER_BYTES_AT_MOST} 字节，"
                     "只是元数据），而 x.clone() 分配 8n² 字节"),
              passed=all(header_only) and all(c >= 8 * n * n for c, n in zip(copy_bytes, sizes,
                                                                            strict=True)),
              measured=T(f"x.t(): {max(view_bytes)} bytes at most; clone at n = {largest}: "
                         f"{copy_bytes[-1]} bytes",
                         f"x.t()：至多 {max(view_bytes)} 字节；n = {largest} 时 x.clone() 为 "
                         f"{copy_bytes[-1]} 字节"),
              expected=f"≤ {HEADER_BYTES_AT_MOST} B; ≥ 8n² B"),
        timing_check("transpose-time-flat",
                    T(f"x.t() costs the same at any size: from n = {smallest} to {largest} "
                      f"(×{element_growth} elements) its time grows at most "
                      f"{FLAT_GROWTH_AT_MOST:g}× (the transposing copy's grew "
                      f"{copy_growth:.0f}×)",
                      f"x.t() 的代价与尺寸无关：n 从 {smallest} 到 {largest}（元素数为 "
                      f"{element_growth} 倍）时，它的耗时至多增长到 {FLAT_GROWTH_AT_MOST:g} 倍"
                      f"（转置复制的耗时增长到 {copy_growth:.0f} 倍）"),
                    side_by_side.ratios(largest, smallest), at_most=FLAT_GROWTH_AT_MOST),
        timing_check("self-return-cheaper-than-copy",
                    T(f"At n = {largest}, copying (clone) costs at least "
                      f"{CHEAPER_THAN_COPY_AT_LEAST:g}× as much as contiguous() returning itself",
                      f"n = {largest} 时，返回自身的 contiguous() 耗时不到复制（clone）的 "
                      f"1/{CHEAPER_THAN_COPY_AT_LEAST:g}"),
                    measured.ratios("clone", "contiguous_of_contiguous"),
                    at_least=CHEAPER_THAN_COPY_AT_LEAST),
        timing_check("view-cheaper-than-copy",
                    T(f"At n = {largest}, the transposing copy x.t().contiguous() costs at least "
                      f"{CHEAPER_THAN_COPY_AT_LEAST:g}× as much as making the view x.t()",
                      f"n = {largest} 时，创建视图 x.t() 的耗时不到转置复制 x.t().contiguous() 的 "
                      f"1/{CHEAPER_THAN_COPY_AT_LEAST:g}"),
                    measured.ratios("contiguous_of_transposed", "transpose_view"),
                    at_least=CHEAPER_THAN_COPY_AT_LEAST),
        timing_check("lone-transposed-not-slower",
                    T(f"A lone transposed operand needs no copy: at n = {largest}, {label.en} on "
                      f"t = x.t() takes at most {LONE_SLOWDOWN_AT_MOST:g}× the time on a "
                      f"row-major t (a kernel that first copied t to row-major would add the "
                      f"transposing copy, {copy_over_kernel:.0f}× the kernel here)",
                      f"单独一个转置操作数无需复制：n = {largest} 时，对 t = x.t() 做 {label.zh} "
                      f"的耗时至多是对行主序 t 的 {LONE_SLOWDOWN_AT_MOST:g} 倍（若内核先把 t "
                      "复制成行主序，就要多花一次转置复制的时间，在这里是该内核的 "
                      f"{copy_over_kernel:.0f} 倍）"),
                    measured.ratios("lone_transposed", "lone_row_major"),
                    at_most=LONE_SLOWDOWN_AT_MOST),
        timing_check("mixed-layouts-slower",
                    T(f"Mixed layouts are slower: at n = {largest}, t.add_(y) with t = x.t() and "
                      f"y row-major takes at least {MIXED_SLOWDOWN_AT_LEAST:g}× the time of "
                      "t.add_(y) with both row-major",
                      f"布局混用会变慢：n = {largest} 时，t = x.t()、y 为行主序的 t.add_(y)，"
                      f"耗时至少是两者都为行主序时的 {MIXED_SLOWDOWN_AT_LEAST:g} 倍"),
                    measured.ratios("mixed_transposed", "mixed_row_major"),
                    at_least=MIXED_SLOWDOWN_AT_LEAST),
    ]
    names = {key: _series_name(key, label) for key in SERIES}
    chart = LineChart(
        title=T("Time per call (fastest of the rounds)", "每次调用的耗时（各轮中最快的一次）"),
        x_label=T("n (tensors are n × n, float64)", "n（张量为 n × n，float64）"),
        y_label=T("seconds", "秒"),
        series=[Series(names[key], sizes, values) for key, values in timings.items()],
        log_x=True, log_y=True,
    )
    table = Table(
        title=T("Time per call, fastest of the rounds (µs)",
                "每次调用的耗时，各轮中最快的一次（微秒）"),
        columns=[T("n", "n")] + [names[key] for key in timings],
        rows=[[n] + [f"{timings[key][i] * 1e6:.1f}" for key in timings]
              for i, n in enumerate(sizes)],
    )
    return Result(
        checks=checks, figures=[chart], tables=[table],
        metrics={
            "largest_n": largest,
            "lone_transposed_over_row_major": layout_ratio["lone"].median,
            "lone_ratio_quartiles": layout_ratio["lone"].format(),
            "mixed_transposed_over_row_major": layout_ratio["mixed"].median,
            "mixed_ratio_quartiles": layout_ratio["mixed"].format(),
            "transposing_copy_over_clone":
                at_largest("contiguous_of_transposed", "clone"),
            "clone_over_self_return":
                at_largest("clone", "contiguous_of_contiguous"),
            "transposing_copy_over_view":
                at_largest("contiguous_of_transposed", "transpose_view"),
            "view_seconds_largest_over_smallest": view_growth,
            "view_bytes_at_most": max(view_bytes),
        },
    )


# ---------------------------------------------------------------- mm-operands

OPERAND_LAYOUTS: dict[str, tuple[str, Callable]] = {  # n × n operands from x (n × n), w (n × 2n)
    "row-major": ("x", lambda x, w, n: x),
    "transposed": ("x.t()", lambda x, w, n: x.t()),
    "column-slice": ("w[:, :n]", lambda x, w, n: w[:, :n]),
    "every-2nd-column": ("w[:, ::2]", lambda x, w, n: w[:, ::2]),
}


def numpy_dot_copies(strides: tuple[int, ...], sizes: tuple[int, ...]) -> bool:
    """NumPy's dot (which whylab's mm calls) copies an operand that is neither C- nor
    F-contiguous; a transposed (F-contiguous) one goes to BLAS with a transpose flag."""
    n_rows, n_cols = sizes
    c_order = strides[1] == 1 and strides[0] == n_cols
    f_order = strides[0] == 1 and strides[1] == n_rows
    return not (c_order or f_order)


def torch_mm_copies(strides: tuple[int, ...], sizes: tuple[int, ...]) -> bool:
    """PyTorch's CPU mm (addmm_impl_cpu_ in ATen's LinearAlgebra.cpp) copies an operand
    only when neither stride is 1 with the other a valid leading dimension (lda)."""
    n_rows, n_cols = sizes
    column_major = strides[0] == 1 and strides[1] >= max(1, n_rows)
    row_major = strides[1] == 1 and strides[0] >= max(1, n_cols)
    return not (column_major or row_major)


def mm_under_test(a: whylab.Tensor, b: whylab.Tensor) -> whylab.Tensor:
    """``a @ b`` through whylab's mm, or a wrong one under a control: one that makes its
    operands contiguous first, or one that multiplies with np.matmul, which walks any
    strides without copying."""
    if control_active("mm-makes-operands-contiguous"):
        return a.contiguous() @ b.contiguous()
    if control_active("mm-walks-strides"):
        return whylab.from_numpy(np.matmul(a.numpy(), b.numpy()))
    return a @ b


@experiment(
    name="mm-operands",
    title=T("Does a matrix product copy a transposed operand?", "矩阵乘法会复制转置的操作数吗？"),
    description=T(
        "Multiplies a @ b for n × n float64 matrices, with a in four layouts (x, x.t(), and "
        "two slices of an n × 2n tensor w), and counts the bytes each product allocates: "
        "the result is 8n² bytes, and every operand copied first adds another 8n².",
        "对 n × n 的 float64 矩阵计算 a @ b，a 取四种布局（x、x.t()，以及 n × 2n 张量 w 的"
        "两种切片），"
        "统计每次乘法分配的字节数：结果占 8n² 字节，每复制一个操作数，再多 8n²。",
    ),
    params=[
        Param("n", "int", 128, T("matrix size n", "矩阵大小 n"), minimum=16, maximum=512,
              step=16),
    ],
    controls=[
        Control("mm-makes-operands-contiguous",
                T("mm calls contiguous() on its operands before the BLAS call",
                  "mm 在调用 BLAS 之前先对操作数调用 contiguous()"),
                breaks=("transposed-operand-not-copied", "copies-as-numpy-dot-rule")),
        Control("mm-walks-strides",
                T("the product is computed by np.matmul, which walks the strides without "
                  "copying",
                  "乘积改由 np.matmul 计算，它沿着步幅遍历，不复制"),
                breaks=("copies-as-numpy-dot-rule",)),
        Control("transposed-read-untransposed",
                T("the transposed operand is read as if it were not transposed",
                  "转置的操作数被当成没有转置来读"),
                breaks=("values-as-numpy",)),
    ],
    metrics=[
        Metric("operand_copies", T("operand copies in all", "操作数副本总数")),
        Metric("result_bytes", T("bytes of one result", "一个结果占的字节数"), "B"),
    ],
)
def mm_operands(n: int) -> Result:
    generator = whylab.Generator().manual_seed(0)
    x = whylab.randn(n, n, generator=generator, dtype=whylab.float64)
    w = whylab.randn(n, 2 * n, generator=generator, dtype=whylab.float64)
    b = whylab.randn(n, n, generator=generator, dtype=whylab.float64)
    result_bytes = 8 * n * n
    rows, observed, numpy_rule, worst = [], [], [], 0.0
    for name, (code, make) in OPERAND_LAYOUTS.items():
        a = make(x, w, n)
        misread = name == "transposed" and control_active("transposed-read-untransposed")
        read = x if misread else a
        allocated = bytes_allocated(lambda a=read: mm_under_test(a, b))
        copies = round((allocated - result_bytes) / result_bytes)
        strides, sizes = tuple(a.stride()), tuple(a.shape)
        observed.append(copies >= 1)
        numpy_rule.append(numpy_dot_copies(strides, sizes))
        worst = max(worst, relative_error(mm_under_test(read, b).numpy(),
                                               a.numpy() @ b.numpy()))
        rows.append([code, str(strides), allocated, copies,
                     "✓" if numpy_rule[-1] else "✗",
                     "✓" if torch_mm_copies(strides, sizes) else "✗"])
    transposed_row = rows[list(OPERAND_LAYOUTS).index("transposed")]
    checks = [
        Check(id="transposed-operand-not-copied",
              name=T("A transposed operand is not copied: x.t() @ b allocates only the result "
                     "(BLAS takes the transpose through its trans flag and leading dimension)",
                     "转置的操作数不会被复制：x.t() @ b 只分配结果（BLAS 通过 trans 标志和"
                     "前导维度直接接收转置）"),
              passed=transposed_row[3] == 0,
              measured=T(f"{transposed_row[2]} bytes = result + {transposed_row[3]} copies",
                         f"{transposed_row[2]} 字节 = 结果 + {transposed_row[3]} 份副本"),
              expected=T(f"≈ {result_bytes} bytes (the result)", f"≈ {result_bytes} 字节（结果）")),
        Check(id="copies-as-numpy-dot-rule",
              name=T("mm copies an operand exactly when it is neither row- nor column-major "
                     "(the rule of NumPy's dot, which whylab's mm calls)",
                     "mm 恰好在操作数既不是行主序也不是列主序时复制它（这是 whylab 的 mm 所调用的 "
                     "NumPy dot 的规则）"),
              passed=observed == numpy_rule,
              measured=" ".join("✓" if c else "✗" for c in observed),
              expected=" ".join("✓" if c else "✗" for c in numpy_rule)),
        Check(id="values-as-numpy",
              name=T("Every product equals NumPy's a @ b", "每个乘积都与 NumPy 的 a @ b 相同"),
              passed=worst <= SAME_VALUES_TOLERANCE,
              measured=T(f"relative max difference {worst:.1e}", f"最大相对差 {worst:.1e}"),
              expected=f"≤ {SAME_VALUES_TOLERANCE:.0e}"),
    ]
    table = Table(
        title=T(f"a @ b for n = {n}: bytes allocated (the result is {result_bytes})",
                f"n = {n} 时的 a @ b：分配的字节数（结果占 {result_bytes}）"),
        columns=[T("a", "a"), T("strides of a", "a 的步幅"), T("bytes allocated", "分配的字节数"),
                 T("operand copies", "操作数副本数"),
                 T("NumPy's dot copies (rule)", "NumPy dot 会复制（规则）"),
                 T("PyTorch's mm would copy (rule)", "PyTorch 的 mm 会复制（规则）")],
        rows=rows,
    )
    return Result(checks=checks, tables=[table],
                  metrics={"operand_copies": sum(observed), "result_bytes": result_bytes})
