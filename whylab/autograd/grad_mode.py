"""Grad mode: the per-thread switch that says whether operations are recorded.

Recording happens inside the Autograd kernel of each operator, and only when
*grad mode is on* and *some input requires grad*. Grad mode is a plain
thread-local flag, separate from the dispatch keys, exactly as in PyTorch:

* :class:`no_grad` turns it off inside a block (results do not require grad);
* :class:`enable_grad` turns it back on inside a ``no_grad`` block;
* :class:`set_grad_enabled` sets it to a given value, as a call or a block.

:class:`inference_mode` goes further: it excludes the Autograd dispatch key
from every call, so nothing is recorded and not even the grad-mode check runs.
Tensors made inside are *inference tensors*: their key set lacks both Autograd
and ADInplaceOrView, so in-place writes to them bump no version counter and
views of them are not tracked, and they can never take part in autograd later
(saving one for backward raises PyTorch's error). ADInplaceOrView itself is not
excluded, exactly as in PyTorch: an ordinary tensor still carries that key, so
an in-place write to it inside inference mode bumps its version counter, and a
backward pass that saved it raises the in-place version error instead of
computing a wrong gradient. Deviations: PyTorch also rejects ``requires_grad_()``
on an inference tensor, in-place writes to one outside inference mode, and
in-place writes outside inference mode to a view made inside it; whylab does
not check those three.

All four work as context managers and as function decorators.
"""

from __future__ import annotations

import functools
import inspect

from whylab._core import thread_state
from whylab._core.keys import AUTOGRAD_KEYS_MASK, DispatchKey
from whylab.dispatch.tls import exclude_keys

__all__ = [
    "is_grad_enabled",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_inference_mode_enabled",
]


#: Per-thread flags (``enabled``, ``inference``), documented in whylab/_core/thread_state.py.
_state = thread_state.grad_mode


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are being recorded."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """True inside an :class:`inference_mode` block on this thread."""
    return _state.inference


class _GradModeContext:
    """Base for the grad-mode switches: a context manager that is also a decorator.

    Subclasses say which mode to enter in :meth:`_new_mode`. Used as a
    decorator, a fresh context is entered on every call of the wrapped
    function (and around each step of a generator), so nesting and recursion
    restore the previous mode correctly.
    """

    def _new_mode(self) -> bool:
        raise NotImplementedError

    def __enter__(self):
        self._previous = _state.enabled
        _state.enabled = self._new_mode()
        return None

    def __exit__(self, *exc_info):
        _state.enabled = self._previous
        return False

    def _fresh_copy(self):
        """A new context of the same kind, so each decorated call has its own saved state."""
        return type(self)()

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with self._fresh_copy():
                return func(*args, **kwargs)

        return wrapped

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            generator = func(*args, **kwargs)
            to_send = None
            while True:
                with self._fresh_copy():
                    try:
                        value = generator.send(to_send)
                    except StopIteration as stop:
                        return stop.value
                to_send = yield value

        return wrapped


class no_grad(_GradModeContext):
    """Context manager and decorator that turns recording off.

    >>> import whylab
    >>> x = whylab.ones(2, requires_grad=True)
    >>> with whylab.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def _new_mode(self) -> bool:
        return False


class enable_grad(_GradModeContext):
    """Context manager and decorator that turns recording on (e.g. inside ``no_grad``)."""

    def _new_mode(self) -> bool:
        return True


class _FixedModeBlock(_GradModeContext):
    """A plain block that sets grad mode to a fixed value (used by decorators)."""

    def __init__(self, mode: bool):
        self._mode = mode

    def _new_mode(self) -> bool:
        return self._mode

    def _fresh_copy(self):
        return _FixedModeBlock(self._mode)


class set_grad_enabled(_GradModeContext):
    """Set grad mode to ``mode``.

    Like PyTorch, it takes effect at once when called, so it works both as a
    plain call ``set_grad_enabled(False)`` and as ``with set_grad_enabled(False):``
    (leaving the block restores the mode that was on before the call). Used as
    a decorator it changes nothing at decoration time.
    """

    def __init__(self, mode: bool):
        self._previous = _state.enabled
        self._mode = bool(mode)
        _state.enabled = self._mode

    def _new_mode(self) -> bool:
        return self._mode

    def __enter__(self):
        # The mode was set by __init__; __exit__ restores the one from before it.
        return None

    def _fresh_copy(self):
        return _FixedModeBlock(self._mode)

    def __call__(self, func):
        _state.enabled = self._previous  # undo the effect of constructing the decorator
        return super().__call__(func)

    def clone(self) -> _GradModeContext:
        """A block setting the same mode (PyTorch API)."""
        return self._fresh_copy()


class inference_mode(_GradModeContext):
    """Context manager and decorator that switches autograd off entirely.

    Inside, the Autograd dispatch key is excluded from every call, so nothing
    is recorded. Tensors created inside are *inference tensors*
    (``t.is_inference()``): made without the Autograd and ADInplaceOrView keys,
    they have no tracked views or version bumps, and PyTorch forbids saving
    them for backward later, as does whylab. Ordinary tensors keep their
    ADInplaceOrView key: an in-place write to one inside the block still bumps
    its version counter, and a view of one is still an ordinary tensor.
    ``inference_mode(False)`` is a no-op block, as in PyTorch.
    """

    def __init__(self, mode: bool = True):
        self._mode = bool(mode)

    def _fresh_copy(self):
        return inference_mode(self._mode)

    def _new_mode(self) -> bool:
        return _state.enabled if not self._mode else False

    def __enter__(self):
        self._previous = _state.enabled
        self._previous_inference = _state.inference
        if self._mode:
            _state.enabled = False
            _state.inference = True
            # Only Autograd: ADInplaceOrView must still run for ordinary tensors,
            # which carry it, so their in-place writes keep bumping the version.
            self._key_guard = exclude_keys(DispatchKey.Autograd)
            self._key_guard.__enter__()
            self._previous_mask = thread_state.creation.key_mask
            thread_state.creation.key_mask = self._previous_mask & ~AUTOGRAD_KEYS_MASK
        return None

    def __exit__(self, *exc_info):
        if self._mode:
            thread_state.creation.key_mask = self._previous_mask
            self._key_guard.__exit__(*exc_info)
        _state.enabled = self._previous
        _state.inference = self._previous_inference
        return False
