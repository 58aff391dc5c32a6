"""Experiment ``bounds-checks``: Rust's index checks, and when the optimiser removes them.

``programs/bounds.rs`` sums a slice three ways at ``-C opt-level=2``: indexing up to a
bound ``n`` the compiler cannot relate to the slice's length (every ``v[i]`` must be
checked, so a call to ``core::panicking::panic_bounds_check`` stays in the function),
indexing up to ``v.len()`` (the optimiser proves ``i < v.len()`` and deletes the check),
and an iterator (no index at all). The assembly of each function is searched for that
call, and for vector instructions; the three are timed in one process, rotating which
goes first, on a slice that fits in cache, where the arithmetic rather than memory sets
the pace. What the measurement showed (and the checks now claim): the kept check is one
comparison of n with v.len() ahead of a vectorized loop, so it costs no measurable time.
The loops are aligned to 64 bytes (:data:`ALIGN_LOOPS`), so that the timing compares the
code and not the addresses it landed at.
"""

from __future__ import annotations

from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.topics.rust_vs_cpp import toolchain
from whylab.topics.rust_vs_cpp.compiled_checks import NEEDS_RUSTC
from whylab.topics.rust_vs_cpp.layout_experiment import function_body, vector_instructions
from whylab.topics.rust_vs_cpp.recorded import shown_where_not_applicable

FUNCTIONS = ("sum_indexed", "sum_indexed_to_len", "sum_iterated")
SAME_BAND = (0.8, 1.25)  # each indexed loop's time over the iterator loop's
# Every loop starts on a 64-byte boundary. Left to the default, where each loop happens to
# sit decides its speed on some CPUs: on a 2-core AMD EPYC (2026-12-02) the kept-check loop
# ran in 0.45-0.57x the iterator's time with identical inner loops, and 1.00x once aligned.
ALIGN_LOOPS = ("-C", "llvm-args=-align-loops=64")


def panic_calls(assembly: str, name: str) -> int:
    return sum(1 for row in function_body(assembly, name) if "panic_bounds_check" in row)


@experiment(
    name="bounds-checks",
    title=T("Bounds checks: kept, removed, never there", "边界检查：保留、被删除、本就没有"),
    description=T(
        "Builds three Rust sums at opt-level=2, looks for the bounds-check panic in each "
        "one's assembly, and times them on a slice that fits in cache.",
        "以 opt-level=2 编译三个 Rust 求和函数，在各自的汇编里查找边界检查的 panic 调用，"
        "并在一个放得进缓存的切片上计时。"),
    params=[
        Param("n", "int", 32_768, T("elements (8 bytes each)", "元素个数（每个 8 字节）"),
              minimum=1_024, maximum=262_144, step=1_024),
    ],
    timing=True,
    time_limit_s=120.0,
    controls=[
        Control("opt-level-0",
                T("the program is built without optimisation (opt-level=0)",
                  "程序编译时没有优化（opt-level=0）"),
                breaks=("checks-as-assembly", "check-costs-nothing")),
    ],
)
@shown_where_not_applicable("bounds-checks")
def bounds_checks(n: int) -> Result:
    level = "0" if control_active("opt-level-0") else "2"
    build = toolchain.build("bounds.rs", ("-C", f"opt-level={level}", *ALIGN_LOOPS),
                            assembly=True)
    name_assembly = T("Only the loop bounded by n keeps a call to panic_bounds_check; in "
                      "the loop to v.len() the optimiser removed it, and the iterator never "
                      "had one; all three loops are vectorized",
                      "只有以 n 为上界的循环保留了对 panic_bounds_check 的调用；"
                      "到 v.len() 为止的循环里，优化器把它删掉了；迭代器循环本来就没有；"
                      "三个循环都被向量化了")
    low, high = SAME_BAND
    name_time = T(f"In cache, both indexed loops take {low:g}–{high:g}× the iterator's time: "
                  "the kept check is one comparison before the loop, not one per element",
                  f"在缓存中，两个下标循环的耗时都是迭代器循环的 {low:g}–{high:g} 倍："
                  "保留下来的检查只是循环前的一次比较，而不是每个元素一次")
    if build is None or not build.ok:
        return Result(checks=[
            Check.not_applicable(id="checks-as-assembly", name=name_assembly,
                                 expected="1 0 0", why=NEEDS_RUSTC),
            Check.not_applicable(id="check-costs-nothing", name=name_time,
                                 expected=f"{low:g}–{high:g}×", why=NEEDS_RUSTC)])
    calls = [panic_calls(build.assembly, f) for f in FUNCTIONS]
    vectors = [vector_instructions(build.assembly, f) for f in FUNCTIONS]
    run = toolchain.run(build.binary, (str(n), "400"), timeout_s=60.0)
    times = [float(x) for x in run.stdout.split()[:3]]
    checked, removed = times[0] / times[2], times[1] / times[2]
    checks = [
        Check(id="checks-as-assembly", name=name_assembly,
              passed=calls[0] > 0 and calls[1] == 0 and calls[2] == 0 and min(vectors) > 0,
              measured=T(f"panic calls {calls[0]}, {calls[1]}, {calls[2]}; vector "
                         f"instructions {vectors[0]}, {vectors[1]}, {vectors[2]}",
                         f"panic_bounds_check 调用 {calls[0]}、{calls[1]}、{calls[2]}；向量指令 "
                         f"{vectors[0]}、{vectors[1]}、{vectors[2]}"),
              expected=T("panic calls ≥ 1, 0, 0; vector instructions > 0 in each",
                         "panic_bounds_check 调用 ≥ 1、0、0；每个都有向量指令")),
        Check(id="check-costs-nothing", name=name_time,
              passed=low <= checked <= high and low <= removed <= high,
              measured=f"{checked:.2f}×, {removed:.2f}×", expected=f"{low:g}–{high:g}×"),
    ]
    rows = [[f, calls[i], vectors[i], f"{times[i]:.3f}"] for i, f in enumerate(FUNCTIONS)]
    return Result(checks=checks, tables=[Table(
        title=T("Each sum: bounds-check calls in its assembly, fastest ns per element",
                "每个求和函数：汇编里的边界检查调用数，每个元素最快的纳秒数"),
        columns=[T("function", "函数"),
                 T("panic_bounds_check calls", "panic_bounds_check 调用数"),
                 T("vector instructions", "向量指令数"), T("ns per element", "每元素纳秒")],
        rows=rows)])
