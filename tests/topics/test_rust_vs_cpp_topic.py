"""The rust-vs-cpp topic: rustc's codes per function, every case of the experiments, the
build cache, and what the page says when a compiler or the sanitizer's memory is missing.

``whylab check --controls`` for the topic runs in test_every_topic_survives_its_controls.
"""

from __future__ import annotations

import pytest

from whylab.topics.rust_vs_cpp import toolchain
from whylab.topics.rust_vs_cpp.bounds_experiment import bounds_checks
from whylab.topics.rust_vs_cpp.drop_experiment import drop_order
from whylab.topics.rust_vs_cpp.layout_experiment import (
    function_body,
    layout,
    vector_instructions,
)
from whylab.topics.rust_vs_cpp.ownership_experiment import CASES, borrow_checker
from whylab.topics.rust_vs_cpp.threads_experiment import RUST_CASES, threads

needs_rustc = pytest.mark.skipif(toolchain.find_rustc() is None, reason="no rustc")
needs_both = pytest.mark.skipif(toolchain.find_rustc() is None or toolchain.find_cxx() is None,
                                reason="needs rustc and g++")


def not_passed(result):
    return [f"{c.id}: {c.measured_in('en')} vs {c.expected_in('en')}"
            for c in result.checks if c.state != "passed"]


@needs_rustc
def test_rustc_gives_one_code_per_rejected_function():
    build = toolchain.build("borrow_rejected.rs")
    assert not build.ok
    found = {(d.function, d.code) for d in build.diagnostics}
    assert found == {(case.function, code) for code, case in CASES.items()}
    threads_build = toolchain.build("threads_rejected.rs")
    assert {(d.function, d.code) for d in threads_build.diagnostics} == {
        (function, code) for code, function in RUST_CASES.values()}


@needs_rustc
def test_builds_are_cached_by_source_and_flags():
    first = toolchain.build("drop_order.rs")
    again = toolchain.build("drop_order.rs")
    other_flags = toolchain.build("drop_order.rs", ("-C", "opt-level=1"))
    assert again.cached and again.binary == first.binary
    assert other_flags.binary != first.binary


@needs_both
@pytest.mark.parametrize("case", list(CASES))
def test_every_ownership_case(case):
    result = borrow_checker.run(case=case)
    assert result.passed and not not_passed(result), not_passed(result)


@needs_both
def test_rc_is_not_send():
    result = threads.run(case="rc-not-send", increments=1000)
    assert result.passed and not not_passed(result), not_passed(result)


def test_without_compilers_every_check_says_which_toolchain(monkeypatch):
    monkeypatch.setattr(toolchain, "find_rustc", lambda: None)
    monkeypatch.setattr(toolchain, "find_cxx", lambda: None)
    for experiment, params in [(borrow_checker, {"case": "E0502"}),
                               (threads, {"case": "mutable-counter", "increments": 1000}),
                               (drop_order, {}), (layout, {"n": 1 << 16, "rounds": 1}),
                               (bounds_checks, {"n": 1024})]:
        result = experiment.run(**params)
        states = {c.state for c in result.checks}
        assert states == {"not_applicable"}, experiment.name
        assert all(("rustc" in c.when_applicable.en or "g++" in c.when_applicable.en)
                   for c in result.checks)


@needs_both
def test_a_sanitized_run_under_an_address_space_limit_is_refused(monkeypatch):
    monkeypatch.setattr(toolchain, "address_space_limit", lambda: 2048 << 20)
    result = borrow_checker.run(case="E0502")
    by_id = {c.id: c for c in result.checks}
    assert by_id["cpp-bug-reported"].state == "not_applicable"
    assert "RLIMIT_AS" in by_id["cpp-bug-reported"].when_applicable.en
    assert by_id["rustc-rejects"].state == "passed"  # rustc needs no sanitizer


def test_sanitizer_report_kinds_are_parsed():
    stderr = ("==12==ERROR: AddressSanitizer: heap-use-after-free on address 0x6\n"
              "WARNING: ThreadSanitizer: data race (pid=7)\n"
              "==13==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000\n")
    assert toolchain.sanitizer_reports(stderr) == ["heap-use-after-free", "data race", "SEGV"]
    assert toolchain.sanitizer_reports("1 4\n") == []


ASSEMBLY = """\
\t.globl\tsum_soa
sum_soa:
\t.cfi_startproc
\tpxor\t%xmm0, %xmm0
\tmovdqu\t(%rdi,%rdx), %xmm2
\tpaddq\t%xmm2, %xmm0
\taddq\t$8, %rdi
\tret
\t.cfi_endproc
sum_aos:
\t.cfi_startproc
\taddq\t(%rdi), %rax
\tret
\t.cfi_endproc
"""


def test_vector_instructions_are_counted_per_function():
    assert vector_instructions(ASSEMBLY, "sum_soa") == 3
    assert vector_instructions(ASSEMBLY, "sum_aos") == 0
    assert function_body(ASSEMBLY, "sum_aos") == ["addq\t(%rdi), %rax", "ret"]
    assert function_body(ASSEMBLY, "missing") == []


def test_the_python_part_runs_without_compilers(monkeypatch):
    from whylab.topics.rust_vs_cpp.python_experiment import python_analogues

    monkeypatch.setattr(toolchain, "find_rustc", lambda: None)
    monkeypatch.setattr(toolchain, "find_cxx", lambda: None)
    result = python_analogues.run(n=1 << 16)
    assert {c.id for c in result.checks if c.state == "passed"} >= {
        "shares-memory-as-addresses", "overlap-gets-a-temporary", "refcount-frees-at-del"}
