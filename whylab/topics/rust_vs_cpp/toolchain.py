"""Compile the topic's fixed programs with rustc and g++, cache the results, run the binaries.

Only the files in ``programs/`` are ever compiled, with flags chosen here; a reader picks
a program and its arguments, never its source. A build is keyed by the SHA-256 of the
source and of this module (which holds how a program is compiled and how the compiler's
output is read: an edit here builds afresh rather than reuse what older code made), the
compiler's path and version and the flags, and kept under
``$WHYLAB_CACHE_DIR/compiled`` (default ``~/.cache/whylab/compiled``): the binary, or for
a program the compiler rejects, its diagnostics. A page therefore waits for a compiler
once per program and machine.

rustc's diagnostics are read from ``--error-format=json``: each error's code, message,
line, and the ``fn`` it sits in. Binaries run as child processes with limits of their own
(:mod:`~whylab.topics.rust_vs_cpp.child_process`): CPU and wall-clock time, resident
memory, no core files; a sanitized binary also gets the unlimited address space its
shadow memory needs, or, where the worker's hard limit forbids that, is refused
(:attr:`Run.refused`) rather than reported as a crash.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from whylab.topics.rust_vs_cpp.child_process import Run, run_limited

PROGRAMS = Path(__file__).parent / "programs"
COMPILE_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class BuildAsked:
    """One call of :func:`build`: which program, with which flags, and the version of the
    compiler that built it (empty where no compiler for it is here)."""

    source: str
    flags: tuple[str, ...]
    assembly: bool
    compiler: str


_builds_asked: ContextVar[list[BuildAsked] | None] = ContextVar("builds_asked", default=None)


@contextmanager
def noting_builds() -> Iterator[list[BuildAsked]]:
    """Collect the :class:`BuildAsked` of every :func:`build` called inside; an enclosing
    ``noting_builds`` gets them too."""
    outer, asked = _builds_asked.get(), []
    token = _builds_asked.set(asked)
    try:
        yield asked
    finally:
        _builds_asked.reset(token)
        if outer is not None:
            outer.extend(asked)


def _note(source: str, flags: tuple[str, ...], assembly: bool, compiler: str) -> None:
    asked = _builds_asked.get()
    if asked is not None:
        asked.append(BuildAsked(source, flags, assembly, compiler))


def cache_root() -> Path:
    base = os.environ.get("WHYLAB_CACHE_DIR") or str(Path.home() / ".cache" / "whylab")
    return Path(base) / "compiled"


def find_rustc() -> str | None:
    """rustc on PATH, else rustup's default location."""
    found = shutil.which("rustc")
    if found:
        return found
    cargo = Path.home() / ".cargo" / "bin" / "rustc"
    return str(cargo) if cargo.exists() else None


def find_cxx() -> str | None:
    return shutil.which("g++") or shutil.which("clang++")


def compiler_for(source: str) -> str | None:
    return find_rustc() if source.endswith(".rs") else find_cxx()


@functools.lru_cache(maxsize=8)
def compiler_version(compiler: str) -> str:
    """The first line of ``compiler --version`` (asked once per process)."""
    result = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                            timeout=COMPILE_TIMEOUT_S)
    return result.stdout.splitlines()[0] if result.stdout else ""


@functools.lru_cache(maxsize=1)
def recipe_hash() -> str:
    """The SHA-256 of this module's source: part of every build's cache key."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Diagnostic:
    """One compiler error: its code (``E0499``), message, line and enclosing function."""

    code: str
    message: str
    line: int
    function: str


@dataclass
class Build:
    """What compiling one program gave: a binary, or the errors that refused it."""

    ok: bool
    binary: Path | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    log: str = ""
    compiler: str = ""
    cached: bool = False
    assembly: str = ""


def enclosing_function(lines: list[str], line: int) -> str:
    """The name of the last ``fn NAME`` at or above ``line`` (1-based)."""
    for text in reversed(lines[:line]):
        match = re.search(r"\bfn\s+(\w+)", text)
        if match:
            return match.group(1)
    return ""


def rustc_diagnostics(stderr: str, source_text: str) -> list[Diagnostic]:
    """The errors with a code in rustc's JSON output, in the order rustc gave them."""
    lines = source_text.splitlines()
    found = []
    for row in stderr.splitlines():
        try:
            message = json.loads(row)
        except ValueError:
            continue
        if message.get("level") != "error" or not message.get("code"):
            continue
        primary = next((s for s in message["spans"] if s.get("is_primary")), None)
        line = primary["line_start"] if primary else 0
        found.append(Diagnostic(message["code"]["code"], message["message"], line,
                                enclosing_function(lines, line)))
    return found


def build(source: str, flags: tuple[str, ...] = (), assembly: bool = False) -> Build | None:
    """Compile ``programs/source`` with ``flags`` (cached); None when no compiler is here."""
    compiler = compiler_for(source)
    if compiler is None:
        _note(source, flags, assembly, "")
        return None
    text = (PROGRAMS / source).read_text()
    version = compiler_version(compiler)
    _note(source, flags, assembly, version)
    flags = (*flags, *path_flags(source))
    key = hashlib.sha256("\0".join([text, recipe_hash(), compiler, version, *flags,
                                    str(assembly)]).encode()).hexdigest()[:24]
    folder = cache_root() / key
    record = folder / "build.json"
    if record.exists():
        return load_build(record, folder, cached=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=folder.parent))
    result = compile_into(staging, compiler, source, text, flags, assembly)
    result["compiler"] = version
    (staging / "build.json").write_text(json.dumps(result))
    try:
        staging.rename(folder)  # atomic: a concurrent build of the same key keeps its own
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return load_build(folder / "build.json", folder, cached=False)


def path_flags(source: str) -> tuple[str, ...]:
    """Name the programs' folder ``programs/`` in what the binary carries (debug info,
    panic messages, sanitizer reports), not by this server's absolute path."""
    if source.endswith(".rs"):
        return ("--remap-path-prefix", f"{PROGRAMS}=programs")
    return (f"-ffile-prefix-map={PROGRAMS}=programs",)


def compile_into(folder: Path, compiler: str, source: str, text: str, flags, assembly) -> dict:
    binary = folder / "program"
    if source.endswith(".rs"):
        command = [compiler, "--edition", "2021", "--error-format=json", *flags,
                   str(PROGRAMS / source), "-o", str(binary)]
        if assembly:
            command += ["--emit", f"asm={folder / 'program.s'},link"]
    else:
        command = [compiler, "-std=c++17", *flags, str(PROGRAMS / source), "-o", str(binary)]
    completed = subprocess.run(command, capture_output=True, text=True,
                               timeout=COMPILE_TIMEOUT_S, cwd=folder)
    if assembly and not source.endswith(".rs") and completed.returncode == 0:
        subprocess.run([compiler, "-std=c++17", *flags, "-S", str(PROGRAMS / source), "-o",
                        str(folder / "program.s")], capture_output=True, timeout=COMPILE_TIMEOUT_S)
    diagnostics = rustc_diagnostics(completed.stderr, text) if source.endswith(".rs") else []
    return {"ok": completed.returncode == 0, "log": completed.stderr[-4000:],
            "diagnostics": [d.__dict__ for d in diagnostics]}


def load_build(record: Path, folder: Path, cached: bool) -> Build:
    data = json.loads(record.read_text())
    asm = folder / "program.s"
    return Build(ok=data["ok"], binary=folder / "program" if data["ok"] else None,
                 diagnostics=[Diagnostic(**d) for d in data["diagnostics"]], log=data["log"],
                 compiler=data["compiler"], cached=cached,
                 assembly=asm.read_text() if asm.exists() else "")


def run(binary: Path, args: tuple[str, ...], sanitized: bool = False,
        timeout_s: float = RUN_TIMEOUT_S) -> Run:
    """Run ``binary args`` under its own limits; a sanitized binary gets the address space
    its shadow memory needs, or is refused where this process cannot grant it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    if sanitized:
        options = "detect_leaks=0:halt_on_error=1"
        env["ASAN_OPTIONS"] = options
        env["TSAN_OPTIONS"] = options
    return run_limited([str(binary), *args], env, timeout_s, lift_address_space=sanitized)


SANITIZER_REPORT = re.compile(
    r"(?:ERROR: AddressSanitizer: ([\w-]+)|WARNING: ThreadSanitizer: ([\w ]+?) \(pid)")


def sanitizer_reports(stderr: str) -> list[str]:
    """The kinds of bug a sanitizer reported: ``heap-use-after-free``, ``SEGV``, ``data race``."""
    return [asan or tsan for asan, tsan in SANITIZER_REPORT.findall(stderr)]


def report_excerpt(stderr: str, lines: int = 6) -> str:
    """The first lines of a sanitizer report, without the process id prefixes or the
    cache's absolute path."""
    start = next((i for i, row in enumerate(stderr.splitlines())
                  if "Sanitizer" in row), None)
    if start is None:
        return ""
    rows = stderr.splitlines()[start:start + lines]
    cache = str(cache_root())  # a binary's path there names this server's folders
    return "\n".join(re.sub(r"^==\d+==", "", row).replace(cache, "compiled") for row in rows)
