"""What a replay assumes about a call, checked before every replay.

A tape is valid for calls that look like the recorded one: the same number of input
tensors with the same type, sizes, strides, dtype, device and ``requires_grad``, the
same ones passed twice where one was passed twice when recorded (the tape knows inputs
by position, so ``step(x, x)`` and ``step(x, y)`` are different programs); the
same thread state (grad mode, inference mode, the dispatcher's included and excluded
keys); the held tensors (parameters, buffers) still of the recorded layout and
``requires_grad``, on the same storage; and the gradients the tape adds into still
being the ``.grad`` of their tensors. :func:`call_signature` is the first two as one
tuple (compared with ``==``); :class:`HeldGuard` the last two.

Some thread state asks for the eager engine itself, whatever was recorded: an open
``whylab.dispatch.trace()`` or ``engine_trace()`` (they record what the engine does),
anomaly mode (its checks run in the engine) and saved-tensor hooks (Python code run
as autograd saves). :func:`needs_eager` names it; such calls are neither recorded nor
replayed.
"""

from __future__ import annotations

from whylab._core import thread_state

_grad_mode = thread_state.grad_mode
_anomaly = thread_state.anomaly
_saved_hooks = thread_state.saved_tensor_hooks
_dispatch = thread_state.dispatch
_engine_trace = thread_state.engine_trace

_STATE_NAMES = ("grad mode", "inference mode", "included dispatch keys", "dispatch key mask")
_INPUT_FIELDS = (
    "type",
    "sizes",
    "strides",
    "dtype",
    "device",
    "requires_grad",
    "first position of the same tensor",
)


def call_signature(inputs) -> tuple:
    """The thread state and the inputs' layout, as one comparable tuple."""
    layout, first_position = [], {}
    for position, t in enumerate(inputs):
        same = first_position.setdefault(id(t), position)
        layout.append((type(t), t._sizes, t._strides, t.dtype, t.device, t._requires_grad, same))
    state = (_grad_mode.enabled, _grad_mode.inference, _dispatch.included, _dispatch.keep)
    return state, tuple(layout)


def needs_eager() -> str | None:
    """The thread state that asks for the eager engine (see the module docstring), or None."""
    if _dispatch.recorder is not None:
        return "a whylab.dispatch.trace() is open"
    if _engine_trace.active is not None:
        return "an engine_trace() is open"
    if _anomaly.enabled:
        return "anomaly mode is on"
    if _saved_hooks.stack:
        return "saved-tensor hooks are set"
    return None


def signature_difference(recorded: tuple, now: tuple) -> str:
    """The first difference between two call signatures, in words."""
    for name, old, new in zip(_STATE_NAMES, recorded[0], now[0], strict=True):
        if old != new:
            return f"{name} changed ({old!r} when recorded, {new!r} now)"
    if len(recorded[1]) != len(now[1]):
        return f"{len(now[1])} inputs, recorded with {len(recorded[1])}"
    for position, (old, new) in enumerate(zip(recorded[1], now[1], strict=True)):
        for name, was, is_now in zip(_INPUT_FIELDS, old, new, strict=True):
            if was != is_now:
                return f"input {position}: {name} {_words(was)} when recorded, {_words(is_now)} now"
    return "no difference"


def _words(value) -> str:
    if type(value) is tuple:
        return str(list(value))
    return getattr(value, "__name__", None) or str(value)


class HeldGuard:
    """The held tensors' layout and storage, and the gradients the tape reads."""

    def __init__(self, held, grads_read) -> None:
        self._layouts = tuple(
            (t, t._sizes, t._strides, t.dtype, t._requires_grad, t._storage) for t in held
        )
        self._grads_read = tuple(grads_read)  # (tensor, the gradient the tape adds into)

    def failure(self) -> str | None:
        """Why the held tensors no longer fit the tape, or None when they do."""
        for t, sizes, strides, dtype, requires_grad, storage in self._layouts:
            if (
                t._sizes != sizes
                or t._strides != strides
                or t.dtype is not dtype
                or t._requires_grad != requires_grad
                or t._storage is not storage
            ):
                return (
                    f"a held tensor of shape {list(sizes)} changed its layout, dtype, "
                    "requires_grad or storage"
                )
        for t, grad in self._grads_read:
            if t._grad is not grad:
                return f"the .grad of a held tensor of shape {list(t._sizes)} was replaced"
        return None
