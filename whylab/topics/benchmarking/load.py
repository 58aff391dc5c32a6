"""A bounded background load: child processes that burn CPU while the experiment says so.

The interleaving experiment needs a disturbance it controls: something that slows the
machine down during chosen stretches of a measurement, the way another tenant of a
shared machine does, but on cue. :class:`BackgroundLoad` starts Python child
processes, each spinning in a loop. The parent switches the load off and on with
SIGSTOP and SIGCONT (cheap, and immediate), and the load is bounded twice: every
child exits on its own after ``seconds`` of wall-clock time, and leaving the ``with``
block kills and reaps every child, whether the experiment finished or raised.

To make the disturbance reliable on a machine with spare cores, :func:`pinned_cpu` pins
the experiment's own thread to one CPU and the load is pinned to the same one, so they
must share it (Linux: ``os.sched_setaffinity``); with k children burning, the
experiment's thread gets about 1/(k + 1) of that CPU, less what other work takes. Where
pinning is unavailable, children on every CPU load them all instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

# The child: say it is ready, then spin until its own deadline. "-S" skips site imports,
# so it starts in a few milliseconds.
_BURN = (
    "import sys, time\n"
    "end = time.monotonic() + float(sys.argv[1])\n"
    "print('ready', flush=True)\n"
    "while time.monotonic() < end:\n"
    "    pass\n"
)
MAX_SECONDS = 60.0
MAX_PER_CPU = 8


def can_pin() -> bool:
    """Whether this platform lets a process choose its CPUs (Linux)."""
    return hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")


@contextlib.contextmanager
def pinned_cpu() -> Iterator[int | None]:
    """Pin the calling thread to one of its CPUs for the ``with`` block; yields that CPU.

    Yields None (and pins nothing) where the platform cannot pin. The previous set of
    CPUs is restored on the way out.
    """
    if not can_pin():
        yield None
        return
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, allowed)


class BackgroundLoad:
    """CPU-burning child processes that start paused and live at most ``seconds``.

    Use as a context manager; inside it, :meth:`resume` and :meth:`pause` switch the
    load on (all children, or only some: a lighter load) and off. ``cpu`` pins
    ``per_cpu`` children to that CPU; ``cpu=None`` starts ``per_cpu`` children for every
    CPU, unpinned.
    """

    def __init__(self, seconds: float, cpu: int | None = None, per_cpu: int = 2):
        if not 0 < seconds <= MAX_SECONDS:
            raise ValueError(f"BackgroundLoad: seconds must be in (0, {MAX_SECONDS}], "
                             f"got {seconds}")
        if not 1 <= per_cpu <= MAX_PER_CPU:
            raise ValueError(f"BackgroundLoad: per_cpu must be 1 to {MAX_PER_CPU}, "
                             f"got {per_cpu}")
        self.seconds = seconds
        self.cpu = cpu
        self.per_cpu = per_cpu
        self.running = 0  # how many children are burning
        self._children: list[subprocess.Popen] = []

    def __enter__(self) -> BackgroundLoad:
        cpus = 1 if self.cpu is not None else (os.cpu_count() or 1)
        count = cpus * self.per_cpu
        try:
            for _ in range(count):
                child = subprocess.Popen(
                    [sys.executable, "-S", "-c", _BURN, repr(self.seconds)],
                    stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                )
                self._children.append(child)
                if self.cpu is not None:
                    os.sched_setaffinity(child.pid, {self.cpu})
            for child in self._children:
                child.stdout.readline()  # started and spinning
            self.pause()
        except BaseException:
            self._stop()
            raise
        return self

    def pause(self) -> None:
        """Stop burning (SIGSTOP every child)."""
        self._signal(self._children, signal.SIGSTOP)
        self.running = 0

    def resume(self, count: int | None = None) -> None:
        """Burn with ``count`` children (all by default); the others stay stopped."""
        count = len(self._children) if count is None else count
        if not 1 <= count <= len(self._children):
            raise ValueError(f"BackgroundLoad.resume: count must be 1 to "
                             f"{len(self._children)}, got {count}")
        self._signal(self._children[:count], signal.SIGCONT)
        self._signal(self._children[count:], signal.SIGSTOP)
        self.running = count

    def set_running(self, on: bool, count: int | None = None) -> None:
        """Resume ``count`` children when ``on``, else pause; nothing if already so."""
        wanted = (len(self._children) if count is None else count) if on else 0
        if wanted == self.running:
            return
        if wanted:
            self.resume(wanted)
        else:
            self.pause()

    @staticmethod
    def _signal(children: list[subprocess.Popen], signum: int) -> None:
        for child in children:
            if child.poll() is None:
                os.kill(child.pid, signum)

    def _stop(self) -> None:
        for child in self._children:
            if child.poll() is None:
                child.kill()
            child.wait()
            if child.stdout is not None:
                child.stdout.close()
        self._children.clear()
        self.running = 0

    def __exit__(self, *exc_info: object) -> None:
        self._stop()

    @property
    def alive(self) -> int:
        """How many children are still running (0 once the block is left)."""
        return sum(child.poll() is None for child in self._children)
