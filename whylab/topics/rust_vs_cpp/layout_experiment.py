"""Experiment ``layout``: array of structs against struct of arrays, in Rust and in C++.

``programs/layout.rs`` and ``layout.cpp`` sum the ``x`` field of n 64-byte particles
stored as an array of structs (AoS: every 64-byte line read for 8 useful bytes) and as
a separate array of x (SoA: every byte read is used), at ``-C opt-level=2`` and
``-O2``. The binaries run in interleaved rounds (Rust, C++, C++, Rust, ...), each
reporting the fastest of its passes; the ratios are taken per round. The emitted
assembly of each sum function is searched for vector instructions (operands in
``%xmm``/``%ymm`` registers).

The expectations, from the toolchains' documentation: LLVM's loop vectorizer is part of
rustc's opt-level=2 pipeline; GCC 12's ``-O2`` vectorizes only with the
``very-cheap`` cost model, which refuses a loop whose trip count needs a scalar
epilogue, while ``-O3`` uses the ``dynamic`` model and vectorizes it (GCC manual,
``-fvect-cost-model``). A strided AoS read of one field is left scalar by both.
"""

from __future__ import annotations

import re
import statistics

from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
    report_progress,
)
from whylab.topics.rust_vs_cpp import toolchain
from whylab.topics.rust_vs_cpp.compiled_checks import NEEDS_CXX, NEEDS_RUSTC
from whylab.topics.rust_vs_cpp.recorded import shown_where_not_applicable

LAYOUT_AT_LEAST = 2.0  # AoS / SoA time: 8x the bytes, at least 2x the time
PARITY_BAND = (0.5, 2.0)  # Rust / C++ time for the same layout
PASSES = 6  # per run of a program; each layout's fastest pass is kept
VECTOR_REGISTER = re.compile(r"%[xyz]mm\d+")


def function_body(assembly: str, name: str) -> list[str]:
    """The instruction lines of ``name`` in AT&T assembly, label to ``.cfi_endproc``."""
    lines = assembly.splitlines()
    start = next((i for i, row in enumerate(lines) if row.strip() == f"{name}:"), None)
    if start is None:
        return []
    body = []
    for row in lines[start + 1:]:
        if ".cfi_endproc" in row:
            break
        if row.startswith("\t") and not row.strip().startswith("."):
            body.append(row.strip())
    return body


def vector_instructions(assembly: str, name: str) -> int:
    return sum(1 for row in function_body(assembly, name) if VECTOR_REGISTER.search(row))


def rust_flags() -> tuple[str, ...]:
    level = "0" if control_active("rust-at-opt-level-0") else "2"
    flags = ("-C", f"opt-level={level}")
    if control_active("vectorizer-off"):
        flags += ("-C", "no-vectorize-loops", "-C", "no-vectorize-slp")
    return flags


def cxx_flags(level: str) -> tuple[str, ...]:
    return (f"-O{level}",) + (("-fno-tree-vectorize",) if control_active("vectorizer-off")
                              else ())


@experiment(
    name="layout",
    title=T("Layout, not language: AoS against SoA in both",
            "是布局而不是语言：两种语言里的 AoS 与 SoA"),
    description=T(
        "Runs the Rust and C++ programs that sum one field of n particles stored as an array "
        "of structs and as a struct of arrays, in interleaved rounds, and counts the vector "
        "instructions in each sum's emitted assembly.",
        "在交替进行的多轮中运行 Rust 与 C++ 程序：对 n 个粒子的同一个字段求和，粒子分别按"
        "结构体数组和数组结构体存放；并数出每个求和函数生成的汇编里的向量指令。"),
    params=[
        Param("n", "int", 1 << 20, T("particles (64 bytes each)", "粒子数（每个 64 字节）"),
              minimum=1 << 16, maximum=1 << 22, step=1 << 16),
        Param("rounds", "int", 3, T("rounds", "轮数"), minimum=1, maximum=9),
    ],
    timing=True,
    time_limit_s=240.0,
    controls=[
        Control("soa-slot-sums-aos",
                T("the SoA slot times the AoS sum again", "SoA 那一格测的其实还是 AoS 求和"),
                breaks=("layout-decides",)),
        Control("rust-at-opt-level-0",
                T("the Rust program is built without optimisation (opt-level=0)",
                  "Rust 程序编译时没有优化（opt-level=0）"),
                breaks=("language-does-not",)),
        Control("vectorizer-off",
                T("both compilers' loop vectorizers are switched off",
                  "两个编译器的循环向量化都被关掉了"),
                breaks=("rustc-vectorizes-soa", "gcc-vectorizes-soa-at-o3")),
    ],
)
@shown_where_not_applicable("layout")
def layout(n: int, rounds: int) -> Result:
    rust = toolchain.build("layout.rs", rust_flags(), assembly=True)
    cpp = toolchain.build("layout.cpp", cxx_flags("2"), assembly=True)
    cpp_o3 = toolchain.build("layout.cpp", cxx_flags("3"), assembly=True)
    args = (str(n), str(PASSES)) + (("aos-twice",) if control_active("soa-slot-sums-aos") else ())
    samples = {"rust": [], "cpp": []}
    for index in range(rounds):
        order = ["rust", "cpp"] if index % 2 == 0 else ["cpp", "rust"]
        for name in order:
            build = rust if name == "rust" else cpp
            if build is not None and build.ok:
                run = toolchain.run(build.binary, args, timeout_s=60.0)
                if run.returncode == 0:
                    aos_ns, soa_ns, _ = run.stdout.split()
                    samples[name].append((float(aos_ns), float(soa_ns)))
        report_progress((index + 1) / rounds)
    checks = [layout_check(samples), parity_check(samples),
              rustc_vector_check(rust), gcc_vector_check(cpp, cpp_o3)]
    tables = [timing_table(samples), vector_table(rust, cpp, cpp_o3)]
    return Result(checks=checks, tables=tables)


def median_ratio(pairs) -> float:
    return statistics.median(aos / soa for aos, soa in pairs)


def layout_check(samples) -> Check:
    name = T(f"In both languages AoS takes at least {LAYOUT_AT_LEAST:g}× SoA's time "
             "(median of the rounds)",
             f"两种语言中 AoS 的耗时都至少是 SoA 的 {LAYOUT_AT_LEAST:g} 倍（各轮中位数）")
    if not samples["rust"] or not samples["cpp"]:
        return Check.not_applicable(id="layout-decides", name=name, expected="rustc, g++",
                                    why=T("needs rustc and g++", "需要 rustc 和 g++"))
    rust, cpp = median_ratio(samples["rust"]), median_ratio(samples["cpp"])
    return Check(id="layout-decides", name=name,
                 passed=min(rust, cpp) >= LAYOUT_AT_LEAST,
                 measured=f"Rust {rust:.1f}×, C++ {cpp:.1f}×",
                 expected=f"≥ {LAYOUT_AT_LEAST:g}×")


def parity_check(samples) -> Check:
    low, high = PARITY_BAND
    name = T(f"For the same layout, Rust's time over C++'s lies within {low:g}–{high:g}× "
             "(median of per-round ratios)",
             f"同一种布局下，Rust 与 C++ 的耗时之比在 {low:g}–{high:g} 倍之间（逐轮比值的中位数）")
    if not samples["rust"] or not samples["cpp"]:
        return Check.not_applicable(id="language-does-not", name=name, expected="rustc, g++",
                                    why=T("needs rustc and g++", "需要 rustc 和 g++"))
    pairs = list(zip(samples["rust"], samples["cpp"], strict=False))
    aos = statistics.median(r[0] / c[0] for r, c in pairs)
    soa = statistics.median(r[1] / c[1] for r, c in pairs)
    return Check(id="language-does-not", name=name,
                 passed=all(low <= ratio <= high for ratio in (aos, soa)),
                 measured=f"AoS {aos:.2f}×, SoA {soa:.2f}×", expected=f"{low:g}–{high:g}×")


def rustc_vector_check(rust) -> Check:
    name = T("rustc at opt-level=2 vectorizes the SoA sum and leaves the AoS one scalar "
             "(vector instructions in the emitted assembly)",
             "opt-level=2 的 rustc 把 SoA 求和向量化，AoS 求和保持标量（数生成的汇编里的向量指令）")
    if rust is None:
        return Check.not_applicable(id="rustc-vectorizes-soa", name=name, expected="> 0, 0",
                                    why=NEEDS_RUSTC)
    soa, aos = vector_instructions(rust.assembly, "sum_soa"), \
        vector_instructions(rust.assembly, "sum_aos")
    return Check(id="rustc-vectorizes-soa", name=name, passed=soa > 0 and aos == 0,
                 measured=f"sum_soa {soa}, sum_aos {aos}", expected="sum_soa > 0, sum_aos 0")


def gcc_vector_check(cpp, cpp_o3) -> Check:
    name = T("g++ -O2 leaves both sums scalar (GCC 12's very-cheap cost model refuses a loop "
             "that needs an epilogue); -O3 vectorizes the SoA sum, not the AoS one",
             "g++ -O2 把两个求和都保持标量（GCC 12 的 very-cheap 代价模型不接受需要收尾循环的"
             "循环）；-O3 把 SoA 求和向量化，AoS 的不变")
    if cpp is None or cpp_o3 is None:
        return Check.not_applicable(id="gcc-vectorizes-soa-at-o3", name=name,
                                    expected="0, 0; > 0, 0", why=NEEDS_CXX)
    counts = [vector_instructions(build.assembly, f) for build in (cpp, cpp_o3)
              for f in ("sum_soa", "sum_aos")]
    return Check(id="gcc-vectorizes-soa-at-o3", name=name,
                 passed=counts[0] == 0 and counts[1] == 0 and counts[2] > 0 and counts[3] == 0,
                 measured=f"-O2: sum_soa {counts[0]}, sum_aos {counts[1]}; "
                          f"-O3: sum_soa {counts[2]}, sum_aos {counts[3]}",
                 expected="-O2: 0, 0; -O3: > 0, 0")


def timing_table(samples) -> Table:
    rows = []
    for name, label in (("rust", "“rustc -C opt-level=2”"), ("cpp", "“g++ -O2”")):
        for index, (aos, soa) in enumerate(samples[name]):
            rows.append([label, index + 1, f"{aos:.3f}", f"{soa:.3f}", f"{aos / soa:.1f}×"])
    return Table(title=T("Fastest nanoseconds per particle, per round",
                         "每轮中每个粒子最快的纳秒数"),
                 columns=[T("program", "程序"), T("round", "轮"), T("AoS ns", "AoS ns"),
                          T("SoA ns", "SoA ns"), T("AoS / SoA", "AoS / SoA")], rows=rows)


def vector_table(rust, cpp, cpp_o3) -> Table:
    rows = []
    for label, build in (("“rustc -C opt-level=2”", rust), ("“g++ -O2”", cpp),
                         ("“g++ -O3”", cpp_o3)):
        if build is None:
            continue
        body = function_body(build.assembly, "sum_soa")
        vector_rows = [row for row in body if VECTOR_REGISTER.search(row)]
        rows.append([label, vector_instructions(build.assembly, "sum_soa"),
                     vector_instructions(build.assembly, "sum_aos"),
                     "“" + "\n".join(vector_rows[:6] or body[:6]) + "”"])
    return Table(title=T("Vector instructions in each sum function", "每个求和函数里的向量指令"),
                 columns=[T("compiler", "编译器"), T("sum_soa", "sum_soa"), T("sum_aos", "sum_aos"),
                          T("sum_soa's first vector instructions (or first lines)",
                            "sum_soa 的前几条向量指令（没有则为前几行）")], rows=rows)
