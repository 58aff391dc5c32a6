"""The rust-vs-cpp topic: rustc's codes per function, every case of the experiments, the
build cache, and what the page says when a compiler or the sanitizer's memory is missing.

``whylab check --controls`` for the topic runs in test_every_topic_survives_its_controls.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from tests.explorer.test_topics_valid import KEPT_IN_RESULTS, untranslated_words
from whylab.explorer.runs.workers import _limit_memory
from whylab.topics.rust_vs_cpp import child_process, recorded, toolchain
from whylab.topics.rust_vs_cpp.bounds_experiment import bounds_checks
from whylab.topics.rust_vs_cpp.drop_experiment import drop_order
from whylab.topics.rust_vs_cpp.experiments import EXPERIMENTS
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


@needs_rustc
def test_an_edit_of_the_toolchain_code_builds_afresh(monkeypatch, tmp_path):
    monkeypatch.setenv("WHYLAB_CACHE_DIR", str(tmp_path))
    first = toolchain.build("drop_order.rs")
    monkeypatch.setattr(toolchain, "recipe_hash", lambda: "0" * 64)
    edited = toolchain.build("drop_order.rs")
    assert not first.cached and not edited.cached and edited.binary != first.binary


def same_toolchains_as_recorded() -> bool:
    versions = recorded.load()["toolchains"]
    return versions == {"rustc": toolchain.compiler_version(toolchain.find_rustc()),
                        "c++": toolchain.compiler_version(toolchain.find_cxx())}


def run_noting_builds(experiment, **params):
    with toolchain.noting_builds() as asked:
        return experiment.run(**params), asked


def agrees_with_recording(result, asked, experiment, params):
    """The live run's checks came out as the recorded ones; with the same compilers, it
    asked for the recorded builds, and the deterministic checks measured the same too
    (rustc's messages, reports, drop orders)."""
    entry = recorded.recorded_run(experiment, params)
    assert entry is not None, (experiment, params)
    live = {c.id: (c.state, c.measured_in("en")) for c in result.checks}
    then = {c["id"]: (c["state"], recorded.words_from_json(c["measured"])) for c in
            entry["checks"]}
    assert {k: v[0] for k, v in live.items()} == {k: v[0] for k, v in then.items()}
    if same_toolchains_as_recorded():
        assert recorded.is_current(entry, asked), (experiment, params)
        for check_id, (_, measured) in then.items():
            shown = measured if isinstance(measured, str) else measured.en
            assert live[check_id][1] == shown, (experiment, check_id)
    assert not [t for t in result.tables if t.title.en.startswith("Recorded")]


@needs_both
@pytest.mark.parametrize("case", list(CASES))
def test_every_ownership_case(case):
    result, asked = run_noting_builds(borrow_checker, case=case)
    assert result.passed and not not_passed(result), not_passed(result)
    agrees_with_recording(result, asked, "borrow-checker", {"case": case})


@needs_both
@pytest.mark.parametrize("case", list(RUST_CASES))
def test_both_thread_cases_as_recorded(case):
    result, asked = run_noting_builds(threads, case=case, increments=20_000)
    assert result.passed and not not_passed(result), not_passed(result)
    agrees_with_recording(result, asked, "threads", {"case": case})


@needs_both
def test_drop_order_as_recorded():
    result, asked = run_noting_builds(drop_order)
    assert result.passed and not not_passed(result), not_passed(result)
    agrees_with_recording(result, asked, "drop-order", {})


def recorded_tables(result):
    return [t for t in result.tables if t.title.en.startswith("Recorded on")]


def test_the_recording_covers_every_compiled_run_of_these_programs(monkeypatch, tmp_path):
    from whylab.topics.rust_vs_cpp.record import LIVE_WITHOUT_COMPILERS, program_choices

    record = recorded.load()
    assert record["recorded_on"] and set(record["toolchains"]) == {"rustc", "c++"}
    wanted = [(e, p) for e in EXPERIMENTS if e.name not in LIVE_WITHOUT_COMPILERS
              for p in program_choices(e)]
    assert [(r["experiment"], recorded.choice_key(r["params"])) for r in record["runs"]] == [
        (e.name, recorded.choice_key(p)) for e, p in wanted]
    assert {c["state"] for r in record["runs"] for c in r["checks"]} == {"passed"}
    hide_compilers(monkeypatch, tmp_path)
    for experiment, params in wanted:  # current: the same programs, asked with the same flags
        result = experiment.run(**params)
        assert recorded_tables(result), (experiment.name, params)


def recorded_builds(experiment: str, params) -> list[toolchain.BuildAsked]:
    """What a run with the recorded compilers asks for, if nothing changed since."""
    return [toolchain.BuildAsked(b["source"], tuple(b["flags"]), b["assembly"], b["compiler"])
            for b in recorded.recorded_run(experiment, params)["builds"]]


def test_a_recording_is_current_only_for_the_builds_it_was_made_with(monkeypatch):
    entry = recorded.recorded_run("layout", {})
    same = recorded_builds("layout", {})
    assert recorded.is_current(entry, same)
    assert recorded.is_current(entry, [replace(b, compiler="") for b in same])  # none here
    assert recorded.is_current(entry, same + same[:1])  # a build asked for twice
    other_flags = [replace(same[0], flags=same[0].flags + ("-march=native",)), *same[1:]]
    other_compiler = [replace(same[0], compiler="rustc 1.63.0"), *same[1:]]
    no_assembly = [replace(same[0], assembly=not same[0].assembly), *same[1:]]
    for changed in (other_flags, other_compiler, no_assembly, same[1:],
                    [*same, replace(same[0], source="bounds.rs")]):
        assert not recorded.is_current(entry, changed), changed
    monkeypatch.setattr(recorded, "source_hash", lambda source: "0" * 64)
    assert not recorded.is_current(entry, same)  # a program changed since


def test_a_flag_change_hides_the_recording(monkeypatch, tmp_path):
    from whylab.explorer.negative_controls import switched_on
    from whylab.topics.rust_vs_cpp import ownership_experiment

    hide_compilers(monkeypatch, tmp_path)
    assert recorded_tables(borrow_checker.run(case="E0505"))
    monkeypatch.setattr(ownership_experiment, "ASAN_FLAGS",
                        (*ownership_experiment.ASAN_FLAGS, "-O2"))
    edited = borrow_checker.run(case="E0505")
    monkeypatch.undo()
    hide_compilers(monkeypatch, tmp_path)
    with switched_on("vectorizer-off"):  # a control that builds with other flags
        controlled = layout.run(n=1 << 16, rounds=1)
    for result in (edited, controlled):
        assert {c.state for c in result.checks} == {"not_applicable"}
        assert not recorded_tables(result) and result.notes[-1] == recorded.NOT_CURRENT


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


def hard_limit_too(limit_mb):
    """A deployment that fixes the hard RLIMIT_AS at the worker's limit as well (systemd's
    LimitAS=, ulimit -H -v): then no process may lift it for a sanitized child."""
    resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))


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
        found[experiment.name]["recorded tables"] = sum(
            t.title.en.startswith("Recorded on") for t in result.tables)
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
def test_sanitizers_run_under_the_workers_own_memory_limit():
    before, after, found, hog_ended, _ = run_in_limited_worker(_limit_memory)
    assert before[0] == WORKER_MB << 20 and after == before  # the worker's limit stayed
    assert hog_ended == "MemoryError"  # and still stops a memory hog in the worker
    for name, states in found.items():
        assert states.pop("recorded tables") == 0  # every check ran live
        assert {state for state, _ in states.values()} == {"passed"}, (name, states)


@needs_both
def test_under_a_hard_address_space_limit_sanitizers_say_why_not_and_show_the_record():
    before, after, found, hog_ended, could_lift = run_in_limited_worker(hard_limit_too)
    assert after == before and hog_ended == "MemoryError" and not could_lift
    for name, states in found.items():
        # the recorded run, where one is missed; not if it was built by other compilers
        assert states.pop("recorded tables") == (2 if same_toolchains_as_recorded() else 0)
        for check_id, (state, why) in states.items():
            if check_id in SANITIZED[name]:
                assert state == "not_applicable", (name, check_id, state)
                assert "RLIMIT_AS = 2048 MB (hard 2048 MB)" in why and "soft limit" in why
            else:
                assert state == "passed", (name, check_id, state)


def soft_and_hard(limits_text: str) -> dict[str, tuple[str, str]]:
    """``/proc/PID/limits`` as {name: (soft, hard)} for the four limits a child gets."""
    wanted = ("Max cpu time", "Max core file size", "Max file size", "Max address space")
    return {name: tuple(row[len(name):].split()[:2]) for row in limits_text.splitlines()
            for name in wanted if row.startswith(name)}


def _child_limits_under(limit, conn):
    limit(WORKER_MB)
    before = resource.getrlimit(resource.RLIMIT_AS)
    report = ["cat", "/proc/self/limits"]  # read by the child itself, after the launcher
    env = {"PATH": os.environ["PATH"]}
    plain = child_process.run_limited(report, env, timeout_s=5.0)
    lifted = child_process.run_limited(report, env, timeout_s=5.0, lift_address_space=True)
    conn.send((before, resource.getrlimit(resource.RLIMIT_AS), soft_and_hard(plain.stdout),
               soft_and_hard(lifted.stdout)))


def test_a_child_gets_its_own_limits_and_the_worker_keeps_its():
    before, after, plain, lifted = run_in_limited_worker(_limit_memory, _child_limits_under)
    assert after == before and before[0] == WORKER_MB << 20
    output = str(child_process.OUTPUT_LIMIT_BYTES)
    common = {"Max cpu time": ("5", "6"), "Max core file size": ("0", "0"),
              "Max file size": (output, output)}
    assert plain == {**common, "Max address space": (str(WORKER_MB << 20), "unlimited")}
    assert lifted == {**common, "Max address space": ("unlimited", "unlimited")}


def test_a_child_past_its_cpu_limit_gets_sigxcpu():
    spin = [sys.executable, "-S", "-c", "while True: pass"]  # no wall-clock watchdog here
    ended = subprocess.run([*child_process.launcher(1, False), *spin], timeout=120)
    assert ended.returncode == -signal.SIGXCPU


def test_without_util_linux_a_run_says_what_it_needs(monkeypatch):
    monkeypatch.setattr(child_process.shutil, "which",
                        lambda tool: None if tool == "setpriv" else f"/usr/bin/{tool}")
    with pytest.raises(RuntimeError, match="setpriv and prlimit.*util-linux"):
        child_process.run_limited(["true"], {}, 1.0)


def test_the_launcher_runs_nothing_once_its_parent_is_gone():
    check = ["/bin/sh", "-c", child_process.PARENT_CHECK, "whylab-child"]
    here = subprocess.run([*check, str(os.getpid()), "echo", "ran"], capture_output=True,
                          text=True)
    orphaned = subprocess.run([*check, "1", "echo", "ran"], capture_output=True, text=True)
    assert (here.returncode, here.stdout) == (0, "ran\n")
    assert (orphaned.returncode, orphaned.stdout) == (125, "")


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (field 4 of /proc/PID/stat)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = open(f"/proc/{entry}/stat").read()  # noqa: SIM115
        except OSError:
            continue
        if entry.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


def command_line(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline").read()  # noqa: SIM115
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie that no init reaps has ended)."""
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]  # noqa: SIM115
    except OSError:
        return False
    return state != "Z"


PARENT = """
import os, sys, threading
from whylab.topics.rust_vs_cpp.child_process import run_limited
worker = threading.Thread(target=run_limited, args=(["sleep", "120"],
                          {"PATH": os.environ["PATH"]}, 120.0))
worker.start()  # started on a thread, as a worker's pool may: its death signal is the thread's
print("started", flush=True)
worker.join()
"""


def test_a_child_dies_with_its_killed_parent():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    child = None
    try:
        assert parent.stdout.readline() == "started\n"
        deadline = time.monotonic() + 60
        while child is None and time.monotonic() < deadline:
            child = next((pid for pid in children_of(parent.pid)
                          if command_line(pid) == "sleep\x00120\x00"), None)
            time.sleep(0.05)
        assert child is not None, "the parent's child never reached exec of sleep"
        parent.kill()
        parent.wait()
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the child outlived its killed parent"
    finally:
        parent.kill()
        parent.wait()
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)  # a failed run leaves no sleeper behind


def test_a_child_is_killed_when_its_watch_raises(monkeypatch):
    watched = []

    def failing_watch(pid):
        watched.append(pid)
        raise KeyboardInterrupt

    monkeypatch.setattr(child_process, "resident_mb", failing_watch)
    with pytest.raises(KeyboardInterrupt):
        child_process.run_limited(["sleep", "30"], {"PATH": os.environ["PATH"]}, 30.0)
    assert len(watched) == 1 and not alive(watched[0])


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


def hide_compilers(monkeypatch, tmp_path):
    """No rustc or g++ to be found: an empty PATH, and a home without ~/.cargo."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert toolchain.find_rustc() is None and toolchain.find_cxx() is None


COMPILED_RUNS = [(borrow_checker, {"case": "E0499"}),
                 (threads, {"case": "rc-not-send", "increments": 1000}),
                 (drop_order, {}), (layout, {"n": 1 << 16, "rounds": 1}),
                 (bounds_checks, {"n": 1024})]


@pytest.mark.parametrize(("experiment", "params"), COMPILED_RUNS,
                         ids=[e.name for e, _ in COMPILED_RUNS])
def test_without_compilers_the_page_shows_the_recorded_outputs(monkeypatch, tmp_path,
                                                               experiment, params):
    hide_compilers(monkeypatch, tmp_path)
    result = experiment.run(**params)
    assert {c.state for c in result.checks} == {"not_applicable"}  # never a ✓ from a record
    record, entry = recorded.load(), recorded.recorded_run(experiment.name, params)
    note = result.notes[-1]
    for words in (note.en, note.zh):
        assert record["recorded_on"] in words and record["toolchains"]["rustc"] in words
        assert record["toolchains"]["c++"] in words
    assert "recorded outputs, not this run's" in note.en
    recorded_tables = [t for t in result.tables if t.title.en.startswith(
        f"Recorded on {record['recorded_on']}")]
    checks_then, *evidence = recorded_tables
    programs = next(t for t in result.tables
                    if t.title.en.startswith("What this experiment compiles"))
    assert [(row[0], row[1], row[2], row[4], row[5].en) for row in programs.rows] == [
        (b["source"], "“" + " ".join(b["flags"]) + "”" if b["flags"] else "—",
         f"“{b['compiler']}”", "“rustc”" if b["source"].endswith(".rs") else "“g++”",
         "missing") for b in entry["builds"]]
    assert {b["compiler"] for b in entry["builds"]} <= set(record["toolchains"].values())
    assert [row[0].en for row in checks_then.rows] == [f"“{c['name']['en']}”"
                                                       for c in entry["checks"]]
    assert [row[3].en for row in checks_then.rows] == ["passed"] * len(entry["checks"])
    assert len(evidence) == len(entry["tables"])
    shown_zh = [note.zh] + [t.title.zh for t in [programs, *recorded_tables]] + [
        cell.zh if hasattr(cell, "zh") else str(cell)
        for t in [programs, *recorded_tables] for row in [*t.rows, t.columns] for cell in row]
    untranslated = {text: untranslated_words(text, KEPT_IN_RESULTS) for text in shown_zh}
    assert {text: words for text, words in untranslated.items() if words} == {}
    if experiment is borrow_checker:  # the sanitizer's report, as it was printed then
        said = dict((row[0].en, row[1]) for row in evidence[0].rows)["AddressSanitizer says"]
        assert "ERROR: AddressSanitizer: heap-use-after-free" in said


def test_the_python_part_runs_without_compilers(monkeypatch):
    from whylab.topics.rust_vs_cpp.python_experiment import python_analogues

    monkeypatch.setattr(toolchain, "find_rustc", lambda: None)
    monkeypatch.setattr(toolchain, "find_cxx", lambda: None)
    result = python_analogues.run(n=1 << 16)
    assert {c.id for c in result.checks if c.state == "passed"} >= {
        "shares-memory-as-addresses", "overlap-gets-a-temporary", "refcount-frees-at-del"}


def test_a_run_ended_by_a_limit_fails_its_check_and_says_which():
    from whylab.explorer.experiment import T
    from whylab.topics.rust_vs_cpp.compiled_checks import NEEDS_CXX, clean_run_check, report_check

    built = toolchain.Build(ok=True, binary=None)
    stopped = child_process.Run(-9, "", "", stopped="VmRSS 1100 MB > 1024 MB")
    clean = clean_run_check("x", T("runs", "运行"), built, stopped, "1 2", NEEDS_CXX)
    assert clean.state == "failed"
    assert clean.measured.en.endswith("; stopped: VmRSS 1100 MB > 1024 MB")
    assert clean.measured.zh.endswith("；被终止：VmRSS 1100 MB > 1024 MB")
    late = child_process.Run(None, "", "", timed_out=True)
    report = report_check("y", T("reported", "报告"), built, late, "data race")
    assert report.state == "failed" and "wall-clock limit" in report.measured.en
