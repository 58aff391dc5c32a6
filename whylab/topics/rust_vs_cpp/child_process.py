"""Run one compiled program as a child process with limits of its own.

The explorer's worker bounds itself by address space (``RLIMIT_AS``): a memory hog then
fails with ``MemoryError`` instead of swapping the server. That is the wrong bound for a
program built with AddressSanitizer or ThreadSanitizer: at start-up their runtimes reserve
terabytes of *virtual* addresses for shadow memory (``MAP_NORESERVE``, nearly none of it
ever touched), which any address-space limit refuses. What such a program really uses is
*resident* memory, a few tens of megabytes for the programs here.

So a compiled program does not simply inherit the worker's limits. It is started through
a launcher, :func:`launcher`: three programs, each setting something on itself and then
``exec``-ing the next (one process, one pid, throughout):

* util-linux's ``setpriv --pdeathsig KILL``: the kernel kills the child when the thread
  that started it exits, so a worker killed while its child runs (SIGKILL from the pool,
  the OOM killer) leaves no orphan behind;
* util-linux's ``prlimit``: ``RLIMIT_CPU`` the run's time limit in CPU seconds (SIGXCPU at
  the soft limit, SIGKILL a second later at the hard one), ``RLIMIT_CORE`` 0 (a crash with
  terabytes mapped writes no core), ``RLIMIT_FSIZE`` :data:`OUTPUT_LIMIT_BYTES` (its output
  goes to temporary files), and for a sanitized program only, ``RLIMIT_AS`` lifted;
* ``/bin/sh``, which runs the program only if its parent is still the worker: a worker
  killed after the fork but before ``setpriv`` set the death signal would otherwise leave
  a child the kernel never signals.

Python's ``preexec_fn`` could set the limits too, but it runs Python code between fork and
exec, which its documentation calls unsafe in a process with threads (the child may
deadlock on a lock another thread held at the fork); the launcher needs nothing in the
child but ``exec``. Both tools are in util-linux, an essential package on Debian.

The death signal belongs to the *thread* that forked, not to the process: it fires when
that thread ends, even if the worker lives on. :func:`run_limited` therefore waits for its
child on the thread that started it and kills the child in a ``finally`` before it
returns or raises, so that thread never ends with the child running unless the whole
worker dies, which is when the signal is wanted.

The parent watches the child every :data:`POLL_S` seconds: it kills the child when its
resident set (``VmRSS`` in ``/proc/PID/status``) passes :func:`resident_limit_mb` or its
wall-clock time passes the run's limit. The worker's own limits are never changed.

Lifting a *hard* limit needs ``CAP_SYS_RESOURCE``. A worker that lowers only its soft
``RLIMIT_AS`` leaves the hard one unlimited, and the child may lift its soft limit up to
it; a worker that lowers both (soft = hard) and lacks the capability leaves no way, and
:func:`address_space_refusal` says so before anything starts.
"""

from __future__ import annotations

import os
import resource
import shutil
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
LAUNCHER_TOOLS = ("setpriv", "prlimit")
# Run by /bin/sh as: sh -c PARENT_CHECK whylab-child WORKER_PID COMMAND...
PARENT_CHECK = '[ "$PPID" = "$1" ] || exit 125; shift; exec "$@"'


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


def _within_hard(resource_id: int, wanted: int) -> int:
    hard = resource.getrlimit(resource_id)[1]
    return wanted if hard == INFINITY else min(wanted, hard)


def launcher(cpu_s: int, lift_address_space: bool) -> list[str]:
    """The command that sets a child's death signal and limits and then ``exec``s the
    command appended to it (see the module's docstring)."""
    setpriv, prlimit = (shutil.which(tool) for tool in LAUNCHER_TOOLS)
    if setpriv is None or prlimit is None:
        raise RuntimeError("run_limited needs setpriv and prlimit on PATH "
                           "(Debian package util-linux)")
    cpu_soft = _within_hard(resource.RLIMIT_CPU, cpu_s)
    cpu_hard = _within_hard(resource.RLIMIT_CPU, cpu_s + 1)  # SIGKILL if SIGXCPU is ignored
    limits = [f"--cpu={cpu_soft}:{cpu_hard}", "--core=0",
              f"--fsize={_within_hard(resource.RLIMIT_FSIZE, OUTPUT_LIMIT_BYTES)}"]
    if lift_address_space:  # address_space_refusal() found the hard limit liftable
        limits.append("--as=unlimited")
    return [setpriv, "--pdeathsig", "KILL", "--", prlimit, *limits, "--",
            "/bin/sh", "-c", PARENT_CHECK, "whylab-child", str(os.getpid())]


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
        process = subprocess.Popen([*launcher(cpu_s, lift_address_space), *command],
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
        deadline = time.monotonic() + timeout_s
        timed_out, stopped, peak = False, "", 0.0
        try:
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
                    break
        finally:  # never leave this thread with the child running (its death signal)
            if process.poll() is None:
                process.kill()
                process.wait()
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

