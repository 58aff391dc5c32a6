"""The rust-vs-cpp topic: rustc's codes per function, every case of the experiments, the
build cache, and what the page says when a compiler or the sanitizer's memory is missing.

``whylab check --controls`` for the topic runs in test_every_topic_survives_its_controls.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import resource
import signal
import sys

import pytest

from whylab.topics.rust_vs_cpp import child_process, toolchain
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


WORKER_MB = 2048  # the worker pool's default memory limit (WorkerPool, ExplorerConfig)
SANITIZED = {"borrow-checker": ("cpp-bug-reported", "cpp-fixed-clean"),
             "threads": ("cpp-race-reported", "cpp-atomic-clean")}


def workers_limit_memory():
    """The explorer worker's own limit-setting function (it moves to runs/ in the new layout)."""
    for module in ("whylab.explorer.runs.workers", "whylab.explorer.workers"):
        try:
            return importlib.import_module(module)._limit_memory
        except ModuleNotFoundError:
            continue
    raise AssertionError("the explorer's worker module was not found")


def soft_limit_only(limit_mb):
    """The worker's limit as the report proposes it: the soft RLIMIT_AS, hard left as it was."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, hard))


def _experiments_under(limit, conn):
    """In a forked process: limit memory as a worker does, run the sanitized experiments."""
    limit(WORKER_MB)
    before = resource.getrlimit(resource.RLIMIT_AS)
    found = {}
    for experiment, params in ((borrow_checker, {"case": "E0502"}),
                               (threads, {"case": "mutable-counter", "increments": 20_000})):
        result = experiment.run(**params)
        found[experiment.name] = {c.id: (c.state, c.when_applicable.en if c.when_applicable
                                         else "") for c in result.checks}
    after = resource.getrlimit(resource.RLIMIT_AS)
    try:
        hog = bytearray((WORKER_MB + 512) << 20)
        del hog
        hog_ended = "allocated"
    except MemoryError:
        hog_ended = "MemoryError"
    try:  # what the refusal claims: no process here may lift the address-space limit
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        could_lift = True
    except (ValueError, OSError):
        could_lift = False
    conn.send((before, after, found, hog_ended, could_lift))


def run_in_limited_worker(limit, target=_experiments_under):
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()
    process = context.Process(target=target, args=(limit, child))
    process.start()
    try:
        assert parent.poll(300), "the limited process sent nothing"
        return parent.recv()
    finally:
        process.join(10)
        process.kill()


@needs_both
def test_sanitizers_run_under_a_workers_soft_memory_limit():
    before, after, found, hog_ended, _ = run_in_limited_worker(soft_limit_only)
    assert before[0] == WORKER_MB << 20 and after == before  # the worker's limit stayed
    assert hog_ended == "MemoryError"  # and still stops a memory hog in the worker
    for name, states in found.items():
        assert {state for state, _ in states.values()} == {"passed"}, (name, states)


@needs_both
def test_under_the_workers_own_limits_sanitizers_run_or_say_why_not():
    before, after, found, hog_ended, could_lift = run_in_limited_worker(workers_limit_memory())
    assert after == before and hog_ended == "MemoryError"
    for name, states in found.items():
        for check_id, (state, why) in states.items():
            if check_id in SANITIZED[name] and not could_lift:
                assert state == "not_applicable", (name, check_id, state)
                assert "RLIMIT_AS = 2048 MB (hard 2048 MB)" in why and "soft limit" in why
            else:
                assert state == "passed", (name, check_id, state)


def _child_limits_under(limit, conn):
    limit(WORKER_MB)
    before = resource.getrlimit(resource.RLIMIT_AS)
    report = ["sh", "-c", "ulimit -t; ulimit -c; ulimit -v"]
    env = {"PATH": os.environ["PATH"]}
    plain = child_process.run_limited(report, env, timeout_s=5.0)
    lifted = child_process.run_limited(report, env, timeout_s=5.0, lift_address_space=True)
    conn.send((before, resource.getrlimit(resource.RLIMIT_AS), plain.stdout.split(),
               lifted.stdout.split()))


def test_a_child_gets_its_own_limits_and_the_worker_keeps_its():
    before, after, plain, lifted = run_in_limited_worker(soft_limit_only, _child_limits_under)
    assert after == before and before[0] == WORKER_MB << 20
    assert plain == ["5", "0", str(WORKER_MB * 1024)]  # ulimit -v counts KiB: inherited
    assert lifted == ["5", "0", "unlimited"]


def test_a_child_over_its_resident_ceiling_or_wall_clock_is_stopped(monkeypatch):
    monkeypatch.setattr(child_process, "RESIDENT_LIMIT_MB", 64)
    hog = [sys.executable, "-c", "import time; x = bytearray(256 << 20); x[::4096] = "
           "b'1' * len(x[::4096]); time.sleep(30)"]
    stopped = child_process.run_limited(hog, dict(os.environ), timeout_s=20.0)
    assert stopped.stopped.startswith("VmRSS") and stopped.stopped.endswith("> 64 MB")
    assert stopped.returncode == -signal.SIGKILL
    slow = child_process.run_limited(["sleep", "30"], dict(os.environ), timeout_s=0.3)
    assert slow.timed_out and slow.returncode is None


def test_a_refused_run_names_the_hard_limit(monkeypatch):
    monkeypatch.setattr(child_process.resource, "getrlimit", lambda _: (2048 << 20, 2048 << 20))
    monkeypatch.setattr(child_process, "has_capability", lambda bit: False)
    refused = child_process.run_limited(["true"], {}, 1.0, lift_address_space=True)
    assert refused.refused == "RLIMIT_AS = 2048 MB (hard 2048 MB)" and refused.returncode is None


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
