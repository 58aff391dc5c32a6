"""Thread-local include and exclude key sets, and the guards that change them.

Every operator call computes its key set as::

    (keys of the tensor arguments | included) & ~excluded

``included`` lets a context switch on a key no tensor carries (the Tracer);
``excluded`` lets a context switch a key off (for example, a kernel that has
already done the autograd work can exclude Autograd for the calls it makes).
Both are per thread, as in PyTorch's ``LocalDispatchKeySet``.
"""

from __future__ import annotations

from whylab._core import thread_state
from whylab._core.keys import ALL_KEYS_MASK, DispatchKey, DispatchKeySet, mask_of

#: This thread's ``included`` and ``keep`` (``~excluded``, precomputed for the hot path)
#: bitmasks and the open trace's ``recorder``, documented in whylab/_core/thread_state.py.
local_keys = thread_state.dispatch


def included_keys() -> DispatchKeySet:
    """The keys this thread currently adds to every call."""
    return DispatchKeySet.from_bits(local_keys.included)


def excluded_keys() -> DispatchKeySet:
    """The keys this thread currently removes from every call."""
    return DispatchKeySet.from_bits(ALL_KEYS_MASK & ~local_keys.keep)


class include_keys:
    """Context manager: add ``keys`` to this thread's included set while inside.

    >>> with include_keys(DispatchKey.Tracer):
    ...     pass
    """

    __slots__ = ("_bits", "_saved")

    def __init__(self, *keys: DispatchKey):
        self._bits = mask_of(*keys)

    def __enter__(self):
        self._saved = local_keys.included
        local_keys.included = self._saved | self._bits
        return self

    def __exit__(self, *exc_info):
        local_keys.included = self._saved
        return False


class exclude_keys:
    """Context manager: remove ``keys`` from every call made by this thread while inside."""

    __slots__ = ("_bits", "_saved")

    def __init__(self, *keys: DispatchKey):
        self._bits = mask_of(*keys)

    def __enter__(self):
        self._saved = local_keys.keep
        local_keys.keep = self._saved & ~self._bits
        return self

    def __exit__(self, *exc_info):
        local_keys.keep = self._saved
        return False
