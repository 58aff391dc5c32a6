"""Every per-thread store of the engine, in one place.

PyTorch keeps this state in thread-local variables spread over c10 and autograd
(``GradMode``, ``AnomalyMode``, ``LocalDispatchKeySet``, the saved-tensor hooks
stack ...). whylab keeps the same stores, each a :class:`threading.local`, all
defined here so that a reader sees at once what a thread carries and what a new
thread starts from. The modules that own the behaviour (named with each store)
read and write the fields directly; nothing else should.

Every store is per thread: a value set in one thread is never seen by another,
and a new thread starts from the defaults below. This module imports nothing of
whylab but the dispatch keys.
"""

from __future__ import annotations

import threading

from whylab._core.keys import ALL_KEYS_MASK

__all__ = [
    "anomaly",
    "creation",
    "dispatch",
    "engine",
    "engine_trace",
    "grad_mode",
    "saved_tensor_hooks",
]


class GradModeState(threading.local):
    """Grad mode and inference mode. Owner: ``autograd/grad_mode.py``.

    * ``enabled`` -- whether operations on tensors that require grad are recorded
      (``is_grad_enabled()``). Read by the Autograd kernels (``autograd/recording.py``),
      ``Function.apply`` and the engine, which sets it to ``create_graph`` while it
      runs backward. Default True.
    * ``inference`` -- whether this thread is inside ``inference_mode()``
      (``is_inference_mode_enabled()``). Default False.
    """

    def __init__(self):
        self.enabled = True
        self.inference = False


class AnomalyState(threading.local):
    """Anomaly detection. Owner: ``autograd/anomaly.py``.

    * ``enabled`` -- whether new graph nodes record their forward traceback and the
      engine names the node whose backward failed. Read by the Autograd kernels,
      ``Function.apply`` and the engine. Default False.
    * ``check_nan`` -- whether, in anomaly mode, the engine also rejects a backward
      result holding NaN. Default True.
    """

    def __init__(self):
        self.enabled = False
        self.check_nan = True


class EngineState(threading.local):
    """The backward pass this thread runs now. Owner: ``autograd/engine.py``.

    * ``needed`` -- the set of nodes on a path to an input whose gradient was asked
      for (``autograd.grad(..., inputs)``), or None for "every node". Read by
      ``Node.should_compute_input_grad`` (``autograd/graph.py``), the generated
      backward nodes (``autograd/recording.py``) and the in-place rebasing
      (``autograd/inplace.py``). Default None.
    * ``create_graph`` -- whether the running backward records its own graph.
      Default False.
    """

    def __init__(self):
        self.needed = None
        self.create_graph = False


class EngineTraceState(threading.local):
    """The engine trace being recorded. Owner: ``autograd/engine.py`` (``engine_trace()``).

    * ``active`` -- the ``EngineTrace`` that a backward pass on this thread reports to
      (dependency counts, execution order, buffer adds), or None when no trace is
      open. Read by the engine (``current_trace()``) and by ``AccumulateGrad`` directly.
      Default None.
    """

    def __init__(self):
        self.active = None


class SavedTensorHooksState(threading.local):
    """Saved-tensor hooks. Owner: ``autograd/graph.py`` (``saved_tensors_hooks``).

    * ``stack`` -- a tuple of ``(pack_hook, unpack_hook)`` pairs, innermost last;
      the innermost pair transforms every tensor saved for backward. Read when a
      node saves a tensor (``autograd/graph.py``). Default ``()``.
    """

    def __init__(self):
        self.stack = ()


class DispatchState(threading.local):
    """The dispatcher's local key sets and trace. Owner: ``dispatch/tls.py``.

    * ``included`` -- bitmask of keys added to every operator call
      (``include_keys``). Read by ``Operator.__call__``. Default 0.
    * ``keep`` -- bitmask of the keys *not* excluded (``~excluded``, precomputed for
      the hot path; ``exclude_keys``). Read by ``Operator.__call__``; the Autograd
      kernels clear Autograd here while a formula runs. Default all keys.
    * ``recorder`` -- the recorder of the open ``whylab.dispatch.trace()``, or None.
      Read by the Tracer fallback and ``Operator.redispatch``
      (``dispatch/tracing.py``, ``dispatch/operator.py``). Default None.
    * ``backend_listener`` -- who hears each backend kernel call while
      ``whylab.dispatch.intercept.backend_calls()`` is open on this thread, or None.
      Read by the intercepting kernels (``dispatch/intercept.py``). Default None.
    """

    def __init__(self):
        self.included = 0
        self.keep = ALL_KEYS_MASK
        self.recorder = None
        self.backend_listener = None


class CreationState(threading.local):
    """What every new tensor gets. Owner: ``_tensor/tensor.py``.

    * ``key_mask`` -- mask applied to the dispatch keys of every tensor made on this
      thread. ``inference_mode()`` clears the autograd keys here, which is what makes
      the tensors created inside it *inference tensors*. Read by ``Tensor._make``.
      Default all bits (-1).
    """

    def __init__(self):
        self.key_mask = -1


grad_mode = GradModeState()
anomaly = AnomalyState()
engine = EngineState()
engine_trace = EngineTraceState()
saved_tensor_hooks = SavedTensorHooksState()
dispatch = DispatchState()
creation = CreationState()
