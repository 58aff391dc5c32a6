"""Run one compiled program as a child process with limits of its own.

The explorer's worker bounds itself by address space (``RLIMIT_AS``): a memory hog then
fails with ``MemoryError`` instead of swapping the server. That is the wrong bound for a
program built with AddressSanitizer or ThreadSanitizer: at start-up their runtimes reserve
terabytes of *virtual* addresses for shadow memory (``MAP_NORESERVE``, nearly none of it
ever touched), which any address-space limit refuses. What such a program really uses is
*resident* memory, a few tens of megabytes for the programs here.

So a compiled program does not simply inherit the worker's limits. Between fork and exec
(``preexec_fn``, which here only calls ``setrlimit``) the child gets

* ``RLIMIT_AS`` lifted, for a sanitized program only (others keep the worker's);
* ``RLIMIT_CPU``: the run's time limit in CPU seconds (the kernel sends SIGXCPU);
* ``RLIMIT_CORE`` 0 (a crash with terabytes mapped writes no core) and ``RLIMIT_FSIZE``
  :data:`OUTPUT_LIMIT_BYTES` (its output goes to temporary files);

and the parent watches it every :data:`POLL_S` seconds: it kills the child when its
resident set (``VmRSS`` in ``/proc/PID/status``) passes :func:`resident_limit_mb` or its
wall-clock time passes the run's limit. The worker's own limits are never changed.

Lifting a *hard* limit needs ``CAP_SYS_RESOURCE``. A worker that lowers only its soft
``RLIMIT_AS`` leaves the hard one unlimited, and the child may lift its soft limit up to
it; a worker that lowers both (soft = hard) and lacks the capability leaves no way, and
:func:`address_space_refusal` says so before anything starts.
"""

from __future__ import annotations

import resource
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

INFINITY = resource.RLIM_INFINITY
RESIDENT_LIMIT_MB = 1024  # at most; less when the worker's own memory limit is lower
OUTPUT_LIMIT_BYTES = 16 << 20
POLL_S = 0.01
CAP_SYS_RESOURCE = 24  # bit of the capability sets in /proc/self/status (linux/capability.h)
MB = 1 << 20


@dataclass(frozen=True)
class Run:
    """One run of a binary: what it printed, how it ended, and what stopped it, if anything."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    refused: str = ""  # why a sanitized run could not start here (empty: it ran)
    stopped: str = ""  # which of its limits ended it: "VmRSS 1100 MB > 1024 MB", "RLIMIT_CPU"
    peak_resident_mb: float = 0.0  # the largest VmRSS the parent saw while it ran


def has_capability(bit: int) -> bool:
    """Whether this process holds capability ``bit`` in its effective set."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    for row in status.splitlines():
        if row.startswith("CapEff:"):
            return bool(int(row.split()[1], 16) >> bit & 1)
    return False


def address_space_refusal() -> str:
    """Empty when a child may be given an unlimited ``RLIMIT_AS``; otherwise the limit in
    the way, as ``RLIMIT_AS = soft MB (hard hard MB)``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == INFINITY or hard == INFINITY or has_capability(CAP_SYS_RESOURCE):
        return ""
    return f"RLIMIT_AS = {soft // MB} MB (hard {hard // MB} MB)"


def resident_limit_mb() -> int:
    """A child's resident-memory ceiling: :data:`RESIDENT_LIMIT_MB`, or the worker's own
    address-space limit when that is lower (the child may use no more than the worker may)."""
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return RESIDENT_LIMIT_MB if soft == INFINITY else min(RESIDENT_LIMIT_MB, soft // MB)


def resident_mb(pid: int) -> float:
    """The resident set of process ``pid`` in MB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for row in status.splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) / 1024
    return 0.0


def _within_hard(resource_id: int, wanted: int) -> tuple[int, int]:
    hard = resource.getrlimit(resource_id)[1]
    value = wanted if hard == INFINITY else min(wanted, hard)
    return value, value


def limits_setter(lift_address_space: bool, cpu_s: int):
    """The function the child runs between fork and exec: it only calls ``setrlimit``
    (values computed here, in the parent, so nothing in the child allocates or locks)."""
    settings = [(resource.RLIMIT_CPU, _within_hard(resource.RLIMIT_CPU, cpu_s)),
                (resource.RLIMIT_CORE, (0, 0)),
                (resource.RLIMIT_FSIZE,
                 _within_hard(resource.RLIMIT_FSIZE, OUTPUT_LIMIT_BYTES))]
    if lift_address_space:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        # Up to the hard limit when that is unlimited; past it only with CAP_SYS_RESOURCE.
        settings.insert(0, (resource.RLIMIT_AS, (INFINITY, INFINITY if hard == INFINITY
                                                 or has_capability(CAP_SYS_RESOURCE) else hard)))

    def apply() -> None:
        for resource_id, values in settings:
            resource.setrlimit(resource_id, values)

    return apply


def run_limited(command: list[str], env: dict[str, str], timeout_s: float,
                lift_address_space: bool = False) -> Run:
    """Run ``command`` under the child limits above, watched by this process."""
    if lift_address_space:
        refusal = address_space_refusal()
        if refusal:
            return Run(None, "", "", refused=refusal)
    cpu_s = max(1, int(timeout_s + 0.999))
    ceiling = resident_limit_mb()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   env=env, preexec_fn=limits_setter(lift_address_space, cpu_s))
        deadline = time.monotonic() + timeout_s
        timed_out, stopped, peak = False, "", 0.0
        while True:
            try:
                process.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            resident = resident_mb(process.pid)
            peak = max(peak, resident)
            if resident > ceiling:
                stopped = f"VmRSS {resident:.0f} MB > {ceiling} MB"
            elif time.monotonic() > deadline:
                timed_out = True
            if stopped or timed_out:
                process.kill()
                process.wait()
                break
        if process.returncode == -signal.SIGXCPU:
            stopped = f"RLIMIT_CPU {cpu_s} s"
        elif process.returncode == -signal.SIGXFSZ:
            stopped = f"RLIMIT_FSIZE {OUTPUT_LIMIT_BYTES // MB} MB"
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    return Run(None if timed_out else process.returncode, stdout, stderr, timed_out=timed_out,
               stopped=stopped, peak_resident_mb=round(peak, 1))

