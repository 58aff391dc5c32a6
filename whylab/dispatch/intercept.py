"""Hearing every backend kernel call: the hook ``whylab.capture`` records a step's tape with.

While :func:`backend_calls` is open, every operator's own CPU kernel (or global CPU
fallback) sits in its table behind a small intercepting kernel; composites are left
alone, since the operators they call are heard themselves. The intercepting kernel
runs the real one and then tells this thread's *listener*
``listener(op, kernel, args, kwargs, result)``. Backend calls made *inside* a kernel
are not heard: they happen again whenever that kernel runs.

The tables are global but the listener is per thread (``backend_listener`` in
``whylab/_core/thread_state.py``): on other threads the intercepting kernel just runs
the real one. The hops cached by the wrapper kernels (``Operator.hop``) are dropped on
entry and on exit, so that they pick up the intercepting kernels and then let them go.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from whylab._core import thread_state
from whylab._core.keys import DispatchKey
from whylab.dispatch.operator import all_ops

_CPU = int(DispatchKey.CPU)
_state = thread_state.dispatch
_lock = threading.Lock()
_open = 0  # how many backend_calls() blocks are open, over all threads


def _intercepting(op, kernel):
    """The kernel that stands in for ``kernel`` (``op``'s CPU kernel) while intercepting."""

    def intercepting_kernel(*args, **kwargs):
        listener = _state.backend_listener
        if listener is None:
            return kernel(*args, **kwargs)
        _state.backend_listener = None  # calls made inside the kernel are not heard
        try:
            result = kernel(*args, **kwargs)
        finally:
            _state.backend_listener = listener
        listener(op, kernel, args, kwargs, result)
        return result

    intercepting_kernel.__qualname__ = f"intercepted[{op.name}]"
    return intercepting_kernel


def _install() -> None:
    for op in all_ops():
        source = op._source_for(_CPU)
        if source is not None and source[0] != "composite":
            op._table[_CPU] = _intercepting(op, op._table[_CPU])
            op._hops.clear()


def _uninstall() -> None:
    for op in all_ops():
        op._rebuild()  # the table from the registered kernels again; hops cleared


@contextmanager
def backend_calls(listener):
    """Tell ``listener(op, kernel, args, kwargs, result)`` of each backend kernel call this
    thread makes inside the block (outermost calls only)."""
    global _open
    with _lock:
        if _open == 0:
            _install()
        _open += 1
    previous = _state.backend_listener
    _state.backend_listener = listener
    try:
        yield
    finally:
        _state.backend_listener = previous
        with _lock:
            _open -= 1
            if _open == 0:
                _uninstall()
