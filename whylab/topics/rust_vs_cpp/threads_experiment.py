"""Experiment ``threads``: shared mutation across threads, refused by rustc, raced in C++.

``programs/threads_rejected.rs`` hands ``&mut counter`` to two scoped threads (E0499)
and sends an ``Rc`` to another thread (E0277: ``Rc<i32>`` is not ``Send``);
``threads_fixed.rs`` uses an ``AtomicU64`` and an ``Arc``. ``threads_twins.cpp`` runs
two threads on a plain ``long`` (a data race, which ThreadSanitizer reports) or on a
``std::atomic<long>``. The synchronised versions must count exactly 2 × the increments.
"""

from __future__ import annotations

from whylab.explorer.experiment import Control, Param, Result, T, Table, control_active, experiment
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

TSAN_FLAGS = ("-g", "-O1", "-fsanitize=thread", "-pthread")
PLAIN_FLAGS = ("-g", "-O1", "-pthread")
RUST_CASES = {
    "mutable-counter": ("E0499", "two_threads_one_mutable_counter"),
    "rc-not-send": ("E0277", "rc_to_another_thread"),
}
ARC_VALUE_PLUS_ONE = 5 + 1  # threads_fixed.rs sends Arc::new(5) and adds one


@experiment(
    name="threads",
    title=T("Shared mutation across threads", "跨线程的共享修改"),
    description=T(
        "Compiles the Rust program that shares a mutable counter (or an Rc) between threads "
        "and reads rustc's error code; runs the synchronised Rust version; builds the C++ "
        "twin with ThreadSanitizer and runs it racing and with an atomic counter.",
        "编译让两个线程共享一个可变计数器（或一个 Rc）的 Rust 程序，读出 rustc 的错误码；"
        "运行加了同步的 Rust 版本；用 ThreadSanitizer 编译 C++ 对应程序，分别在有数据竞争"
        "和使用原子计数器的情况下运行。"),
    params=[
        Param("case", "choice", "mutable-counter",
              T("what Rust is asked to share", "让 Rust 共享什么"),
              choices=tuple(RUST_CASES),
              choice_labels=(T("&mut counter in two threads", "两个线程里的 &mut counter"),
                             T("an Rc sent to another thread", "把 Rc 发送到另一个线程"))),
        Param("increments", "int", 20_000, T("increments per thread", "每个线程的自增次数"),
              minimum=1_000, maximum=200_000, step=1_000),
    ],
    time_limit_s=180.0,
    controls=[
        Control("rustc-given-the-fixed-program",
                T("rustc is shown the synchronised program instead",
                  "交给 rustc 的是加了同步的程序"),
                breaks=("rustc-rejects",)),
        Control("no-sanitizer",
                T("the racing C++ twin is built without ThreadSanitizer",
                  "有数据竞争的 C++ 程序编译时没有开 ThreadSanitizer"),
                breaks=("cpp-race-reported",)),
        Control("atomic-twin-races",
                T("the synchronised C++ twin runs the plain counter",
                  "加了同步的 C++ 程序用的是普通计数器"),
                breaks=("cpp-atomic-clean",)),
        Control("rust-sync-one-thread-short",
                T("the synchronised Rust program is given half the increments",
                  "加了同步的 Rust 程序只拿到一半的自增次数"),
                breaks=("rust-sync-counts",)),
    ],
)
@shown_where_not_applicable("threads")
def threads(case: str, increments: int) -> Result:
    code, function = RUST_CASES[case]
    source = "threads_fixed.rs" if control_active("rustc-given-the-fixed-program") \
        else "threads_rejected.rs"
    rejected = toolchain.build(source)
    fixed = toolchain.build("threads_fixed.rs", ("-C", "opt-level=2"))
    given = increments // 2 if control_active("rust-sync-one-thread-short") else increments
    fixed_run = toolchain.run(fixed.binary, (str(given),)) if fixed and fixed.ok else None
    sanitized = not control_active("no-sanitizer")
    racing = toolchain.build("threads_twins.cpp", TSAN_FLAGS if sanitized else PLAIN_FLAGS)
    race_run = toolchain.run(racing.binary, ("race", str(increments)), sanitized=sanitized) \
        if racing and racing.ok else None
    synced = toolchain.build("threads_twins.cpp", TSAN_FLAGS)
    variant = "race" if control_active("atomic-twin-races") else "atomic"
    synced_run = toolchain.run(synced.binary, (variant, str(increments)), sanitized=True) \
        if synced and synced.ok else None
    total = 2 * increments
    checks = [
        rejected_check("rustc-rejects",
                       T(f"rustc refuses to compile it: {code}", f"rustc 拒绝编译：{code}"),
                       rejected, code, function),
        clean_run_check("rust-sync-counts",
                        T("The synchronised Rust program (AtomicU64, Arc) counts every increment",
                          "加了同步的 Rust 程序（AtomicU64、Arc）一次自增也不丢"),
                        fixed, fixed_run, f"{total} {ARC_VALUE_PLUS_ONE}", NEEDS_RUSTC),
        report_check("cpp-race-reported",
                     T("g++ compiles the racing C++ program without a word, and ThreadSanitizer "
                       "reports a data race", "g++ 一声不响地编译了有数据竞争的 C++ 程序，"
                       "ThreadSanitizer 报告 data race"), racing, race_run, "data race"),
        clean_run_check("cpp-atomic-clean",
                        T("With std::atomic the C++ twin runs clean under ThreadSanitizer and "
                          "counts every increment", "改用 std::atomic 后，C++ 程序在 "
                          "ThreadSanitizer 下运行无报告，一次自增也不丢"),
                        synced, synced_run, str(total), NEEDS_CXX, sanitized=True),
    ]
    rust_text = (toolchain.PROGRAMS / "threads_rejected.rs").read_text()
    rows = [[T("threads_rejected.rs", "threads_rejected.rs"),
             source_of(rust_text, rf"fn {function}\(")],
            [T("ThreadSanitizer says", "ThreadSanitizer 的输出"),
             f"“{toolchain.report_excerpt(race_run.stderr, 8)}”"
             if race_run and not race_run.refused
             else T("not run here", "这里没有运行")],
            [T("racing C++ count", "有竞争的 C++ 计数"),
             race_run.stdout.strip() if race_run and not race_run.refused else "—"]]
    table = Table(title=T("The programs and what their tools said", "程序，以及各自的工具说了什么"),
                  columns=[T("what", "内容"), T("text", "文本")], rows=rows)
    return Result(checks=checks, tables=[table])
