"""Experiment ``borrow-checker``: five programs rustc refuses, and their C++ twins that run.

``programs/borrow_rejected.rs`` holds one function per error code; rustc is run on it
once (cached) and its JSON diagnostics say which code it gave in which function.
``borrow_fixed.rs`` holds the repaired versions, and ``borrow_twins.cpp`` the same
five programs in C++, built with AddressSanitizer, each with its bug and its fix.
The expected codes come from the Rust error index; the expected sanitizer reports
from what each C++ bug does to memory (a freed buffer read: heap-use-after-free; a
moved-from vector read through its null data pointer: SEGV).
"""

from __future__ import annotations

from dataclasses import dataclass

from whylab.explorer.experiment import (
    Control,
    Param,
    Result,
    T,
    Table,
    Text,
    control_active,
    experiment,
)
from whylab.topics.rust_vs_cpp import toolchain
from whylab.topics.rust_vs_cpp.compiled_checks import (
    NEEDS_CXX,
    NEEDS_RUSTC,
    clean_run_check,
    rejected_check,
    report_check,
    source_of,
)
from whylab.topics.rust_vs_cpp.recorded import shown_where_not_applicable

ASAN_FLAGS = ("-g", "-O1", "-fsanitize=address", "-fno-omit-frame-pointer")
PLAIN_FLAGS = ("-g", "-O1")


@dataclass(frozen=True)
class Case:
    """One ownership rule: its error code, where it is broken, and what the twin does."""

    label: Text
    function: str  # in borrow_rejected.rs
    report: str  # what AddressSanitizer reports for the C++ twin
    fixed_output: tuple[int, ...]  # what both fixed versions print


V = [1, 2, 3]
CASES = {
    "E0499": Case(T("two mutable borrows: push while iterating", "两个可变借用：边遍历边 push"),
                  "e0499_two_mutable_borrows", "heap-use-after-free", tuple(V + V)),
    "E0502": Case(T("a shared borrow, then a mutable one: push while a reference lives",
                    "先共享借用、再可变借用：引用还活着就 push"),
                  "e0502_shared_then_mutable", "heap-use-after-free", (V[0], len(V) + 1)),
    "E0505": Case(T("moving the owner out while it is borrowed",
                    "被借用时把所有者移走"),
                  "e0505_move_while_borrowed", "heap-use-after-free", (V[0],)),
    "E0597": Case(T("a reference that outlives its owner (C++: a temporary)",
                    "引用比所有者活得长（C++ 里是一个临时对象）"),
                  "e0597_does_not_live_long_enough", "heap-use-after-free", (V[0],)),
    "E0382": Case(T("use after move", "移动之后再使用"),
                  "e0382_use_after_move", "SEGV", (len(V), len(V))),
}


@experiment(
    name="borrow-checker",
    title=T("What the borrow checker refuses, and what C++ lets run",
            "借用检查器拒绝什么，C++ 又放行了什么"),
    description=T(
        "Compiles the chosen Rust program with rustc and reads the error code from its JSON "
        "diagnostics; compiles the C++ twin with g++ and AddressSanitizer and runs its bug and "
        "its fix; runs the fixed Rust program. Builds are cached by source hash.",
        "用 rustc 编译所选的 Rust 程序，从 JSON 诊断中读出错误码；用 g++ 加 AddressSanitizer "
        "编译 C++ 对应程序，分别运行有错误的版本和修好的版本；再运行修好的 Rust 程序。"
        "编译结果按源码哈希缓存。"),
    params=[
        Param("case", "choice", "E0502", T("rule broken", "违反的规则"),
              choices=tuple(CASES), choice_labels=tuple(c.label for c in CASES.values())),
    ],
    time_limit_s=180.0,  # a cold cache compiles three programs (about 10 s on a busy machine)
    controls=[
        Control("rustc-given-the-fixed-program",
                T("rustc is shown the fixed program instead", "交给 rustc 的是修好的程序"),
                breaks=("rustc-rejects",)),
        Control("fixed-rust-runs-another-case",
                T("the fixed Rust program runs another rule's repair",
                  "修好的 Rust 程序运行的是另一条规则的修复"),
                breaks=("rust-fixed-runs",)),
        Control("no-sanitizer",
                T("the C++ twin is built without AddressSanitizer",
                  "C++ 对应程序编译时没有开 AddressSanitizer"),
                breaks=("cpp-bug-reported",)),
        Control("fixed-twin-is-the-bug",
                T("the fixed C++ twin runs the buggy branch", "修好的 C++ 程序跑的是有错误的分支"),
                breaks=("cpp-fixed-clean",)),
    ],
)
@shown_where_not_applicable("borrow-checker")
def borrow_checker(case: str) -> Result:
    spec = CASES[case]
    expected = " ".join(str(x) for x in spec.fixed_output)
    rejected_source = "borrow_fixed.rs" if control_active("rustc-given-the-fixed-program") \
        else "borrow_rejected.rs"
    rejected = toolchain.build(rejected_source)
    fixed = toolchain.build("borrow_fixed.rs", ("-C", "opt-level=2"))
    codes = list(CASES)
    fixed_case = codes[(codes.index(case) + 1) % len(codes)] \
        if control_active("fixed-rust-runs-another-case") else case
    fixed_run = toolchain.run(fixed.binary, (fixed_case,)) if fixed and fixed.ok else None
    sanitized = not control_active("no-sanitizer")
    twin = toolchain.build("borrow_twins.cpp", ASAN_FLAGS if sanitized else PLAIN_FLAGS)
    bug_run = toolchain.run(twin.binary, (case, "bad"), sanitized=sanitized) \
        if twin and twin.ok else None
    fixed_branch = "bad" if control_active("fixed-twin-is-the-bug") else "fixed"
    twin_fixed = toolchain.build("borrow_twins.cpp", ASAN_FLAGS)
    twin_fixed_run = toolchain.run(twin_fixed.binary, (case, fixed_branch), sanitized=True) \
        if twin_fixed and twin_fixed.ok else None

    checks = [
        rejected_check("rustc-rejects",
                       T(f"rustc refuses the Rust program with {case}, in the function that "
                         "breaks the rule", f"rustc 以 {case} 拒绝这个 Rust 程序，报错位置正是"
                         "违反规则的那个函数"), rejected, case, spec.function),
        clean_run_check("rust-fixed-runs", T("The fixed Rust program compiles and prints the "
                                             "expected values", "修好的 Rust 程序编译通过，"
                                             "打印出预期的值"),
                        fixed, fixed_run, expected, NEEDS_RUSTC),
        report_check("cpp-bug-reported",
                     T(f"g++ compiles the C++ twin without an error, and AddressSanitizer "
                       f"reports {spec.report} when it runs",
                       f"g++ 编译 C++ 对应程序时不报任何错误，运行时 AddressSanitizer 报告 "
                       f"{spec.report}"), twin, bug_run, spec.report),
        clean_run_check("cpp-fixed-clean",
                        T("The fixed C++ twin runs clean under AddressSanitizer and prints the "
                          "same values", "修好的 C++ 程序在 AddressSanitizer 下运行无报告，"
                          "打印出同样的值"),
                        twin_fixed, twin_fixed_run, expected, NEEDS_CXX, sanitized=True),
    ]
    return Result(checks=checks, tables=[evidence_table(case, spec, rejected, bug_run)])


def evidence_table(case: str, spec: Case, rejected, bug_run) -> Table:
    rust_text = (toolchain.PROGRAMS / "borrow_rejected.rs").read_text()
    cpp_text = (toolchain.PROGRAMS / "borrow_twins.cpp").read_text()
    number = case[1:]
    diagnostic = next((d for d in (rejected.diagnostics if rejected else [])
                       if d.function == spec.function), None)
    rows = [
        [T("borrow_rejected.rs", "borrow_rejected.rs"),
         source_of(rust_text, rf"fn {spec.function}\(")],
        [T("rustc's JSON diagnostic", "编译器的 JSON 诊断"),
         T(f"{diagnostic.code} at line {diagnostic.line}: “{diagnostic.message}”",
           f"{diagnostic.code}（第 {diagnostic.line} 行）：“{diagnostic.message}”")
         if diagnostic else T("no rustc here", "这里没有 rustc") if rejected is None else "—"],
        [T("borrow_twins.cpp", "borrow_twins.cpp"),
         source_of(cpp_text, rf"static void e{number}\(")],
        [T("AddressSanitizer says", "AddressSanitizer 的输出"),
         f"“{toolchain.report_excerpt(bug_run.stderr)}”" if bug_run and not bug_run.refused else
         T("not run here", "这里没有运行")],
    ]
    return Table(title=T("The two programs and what their tools said",
                         "两个程序，以及各自的工具说了什么"),
                 columns=[T("what", "内容"), T("text", "文本")], rows=rows)
