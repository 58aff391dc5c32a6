"""Every per-thread store of the engine is per thread, through the public switches."""

from __future__ import annotations

import threading

import pytest

import whylab
from whylab._core import thread_state
from whylab.autograd.graph import saved_tensors_hooks
from whylab.dispatch import DispatchKey, exclude_keys, include_keys
from whylab.dispatch.intercept import backend_calls


def _in_another_thread(read):
    """``read()`` evaluated in a fresh thread."""
    box = []
    worker = threading.Thread(target=lambda: box.append(read()))
    worker.start()
    worker.join()
    return box[0]


def _backward_in_another_thread():
    """Whether a backward pass run in a fresh thread reports to an engine trace."""
    a = whylab.ones(2, requires_grad=True)

    def run():
        (a * a).sum().backward()
        return whylab.autograd.engine.current_trace()

    return _in_another_thread(run)


STORES = {
    # name: (context manager that sets the store here, reading of the store)
    "grad_mode": (whylab.no_grad, whylab.is_grad_enabled),
    "inference_mode": (whylab.inference_mode, whylab.is_inference_mode_enabled),
    "anomaly": (whylab.autograd.detect_anomaly, whylab.autograd.is_anomaly_enabled),
    "engine": (
        lambda: _set(thread_state.engine, "needed", frozenset()),
        lambda: thread_state.engine.needed,
    ),
    "saved_tensor_hooks": (
        lambda: saved_tensors_hooks(lambda t: t, lambda t: t),
        lambda: thread_state.saved_tensor_hooks.stack,
    ),
    "dispatch_included": (
        lambda: include_keys(DispatchKey.Tracer),
        lambda: whylab.dispatch.included_keys(),
    ),
    "dispatch_excluded": (
        lambda: exclude_keys(DispatchKey.Autograd),
        lambda: whylab.dispatch.excluded_keys(),
    ),
    "dispatch_trace": (whylab.dispatch.trace, lambda: thread_state.dispatch.recorder),
    "dispatch_backend_listener": (
        lambda: backend_calls(lambda *call: None),
        lambda: thread_state.dispatch.backend_listener,
    ),
    "creation": (whylab.inference_mode, lambda: whylab.ones(1).is_inference()),
}


class _set:
    """Context manager: set ``store.field`` to ``value`` while inside."""

    def __init__(self, store, field, value):
        self.store, self.field, self.value = store, field, value

    def __enter__(self):
        self.saved = getattr(self.store, self.field)
        setattr(self.store, self.field, self.value)

    def __exit__(self, *exc_info):
        setattr(self.store, self.field, self.saved)


@pytest.mark.parametrize("name", STORES)
def test_a_store_set_in_one_thread_is_unchanged_in_another(name):
    enter, read = STORES[name]
    default = read()
    with enter():
        here = read()
        there = _in_another_thread(read)
    assert here != default, "the switch did not change the store on its own thread"
    assert there == default
    assert read() == default


def test_the_engine_trace_is_per_thread():
    with whylab.autograd.engine_trace() as trace:
        assert whylab.autograd.engine.current_trace() is trace
        assert _backward_in_another_thread() is None
    assert trace.events == []  # the other thread's backward was not recorded here
    with whylab.autograd.engine_trace() as trace:
        (whylab.ones(2, requires_grad=True) * 2).sum().backward()
    assert trace.execution_order()[0] == "GraphRoot"


def test_every_store_of_the_module_is_thread_local():
    stores = [getattr(thread_state, name) for name in thread_state.__all__]
    assert len(stores) == 7
    assert all(isinstance(store, threading.local) for store in stores)
