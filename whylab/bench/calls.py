"""Counting Python function calls: the machine-independent measure of per-call overhead.

On small tensors an engine written in Python spends its time in Python calls, not in
arithmetic, so the number of calls on the path of one operator (or one training step)
says how far it is from its floor, on any machine and at any load. :func:`count_calls`
runs a function once under :func:`sys.setprofile` and counts the ``"call"`` events:
one per Python frame entered (functions, methods, properties, lambdas, generator
expressions; a generator resumed counts again). C functions (NumPy's ufuncs, ``len``)
raise ``"c_call"`` events instead and are not counted.

Two counts come back: every Python call, and the calls into whylab's own code (its
package files and the functions it generates, whose file names start ``<whylab``).
The second is what a test may hold to a budget: it does not change when NumPy moves a
helper between Python and C. Comprehensions that Python 3.12 inlines (PEP 709: list,
dict and set comprehensions) are left out of both, so the counts read the same on
3.11 and 3.12.

A second count, :func:`tracked_objects_kept`, is about memory rather than calls: how
many objects tracked by Python's cyclic garbage collector a result keeps alive (a
recorded op's node, its edges, saved tensors ...). A long graph (backpropagation
through time) holds thousands of them across the collector's young generations, so
they reach the oldest one, whose growth by a quarter triggers a full collection of
the whole process; fewer tracked objects per op mean fewer full collections. This
count too is the same on every machine.
"""

from __future__ import annotations

import gc
import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

#: whylab's package folder (this file is whylab/bench/calls.py).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INLINED_BY_312 = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>"})


def is_whylab_code(filename: str) -> bool:
    """Whether a frame's file is whylab's: a package file or whylab-generated source."""
    return filename.startswith(_PACKAGE_DIR) or filename.startswith("<whylab")


@dataclass
class CallCount:
    """The Python calls one run made: totals, and each function's count."""

    total: int = 0
    whylab: int = 0
    by_function: Counter = field(default_factory=Counter)

    def top(self, n: int = 20) -> list[tuple[str, int]]:
        """The ``n`` functions called most often, as ``("file:line name", count)``."""
        return self.by_function.most_common(n)


def _label(code) -> str:
    filename = code.co_filename
    if filename.startswith(_PACKAGE_DIR):
        filename = "whylab/" + filename[len(_PACKAGE_DIR) :]
    return f"{filename}:{code.co_firstlineno} {code.co_name}"


def count_calls(fn: Callable[[], object]) -> CallCount:
    """Run ``fn()`` once and count the Python calls it made (see the module docstring).

    The profiler is this thread's only one while ``fn`` runs; a profiler set before
    (a coverage tool, a debugger) is put back afterwards.
    """
    counts = CallCount()
    by_code: Counter = Counter()

    def profile(frame, event, arg):
        if event == "call":
            by_code[frame.f_code] += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(previous)
    for code, n in by_code.items():
        if code.co_name in _INLINED_BY_312 or code is profile.__code__:
            continue
        counts.total += n
        if is_whylab_code(code.co_filename):
            counts.whylab += n
        counts.by_function[_label(code)] += n
    return counts


def tracked_objects_kept(fn: Callable[[], object]) -> int:
    """How many objects tracked by the cyclic collector the result of ``fn()`` keeps alive.

    The collector is paused and its two young generations emptied first
    (``gc.collect(1)`` moves their survivors to the oldest one), so everything
    ``fn`` makes starts in generation 0; a collection of that generation then moves
    what is still alive to generation 1, having stopped tracking tuples that hold
    only untracked values (as the collector does on its own), and generation 1 is
    counted. Only young objects are visited, so this is cheap in a large process.
    Run ``fn`` once before, so that what it caches on first use (plans, node
    classes) is not counted.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect(1)
        result = fn()
        gc.collect(0)
        kept = len(gc.get_objects(generation=1))
        del result
    finally:
        if was_enabled:
            gc.enable()
    return kept
