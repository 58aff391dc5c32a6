"""Dispatch keys and key sets, at the bottom of the engine.

They live in ``whylab._core`` rather than in ``whylab.dispatch`` because the
tensor itself holds a key set (``Tensor._keys``, set from its device in
``_tensor/device.py``): as in PyTorch, where ``DispatchKeySet`` is in
``c10/core`` below ``TensorImpl``, the keys must sit below the tensor, and the
dispatcher, which sits above the tensor, imports them from here. This module
imports nothing else of whylab.

A *dispatch key* names one layer of behaviour an operator call can pass through:
a backend that computes (CPU, CUDA, Meta), or a wrapper that does something
around the computation (ADInplaceOrView, Autograd, Tracer). Keys are ordered by
priority: a call goes first to the highest key present, and that kernel may
*redispatch* to the keys below it.

A *key set* is a bitmask with bit ``k`` set when key ``k`` is present. The
dispatcher works on raw ``int`` masks on its hot path; :class:`DispatchKeySet`
is the readable, immutable wrapper used in tests, docs and the explorer.
"""

from __future__ import annotations

from enum import IntEnum


class DispatchKey(IntEnum):
    """Dispatch keys, lowest priority first (the order matters: higher runs first)."""

    CPU = 0
    CUDA = 1
    Meta = 2
    ADInplaceOrView = 3
    Autograd = 4
    Tracer = 5


NUM_KEYS = len(DispatchKey)

#: Keys from this one up are *wrapper* keys: their kernels receive the key set
#: below them as their first argument. The keys below it are backends.
FIRST_WRAPPER_KEY = int(DispatchKey.ADInplaceOrView)

#: ``BELOW[k]`` keeps only the bits of keys strictly lower than ``k``.
BELOW = tuple((1 << k) - 1 for k in range(NUM_KEYS))

ALL_KEYS_MASK = (1 << NUM_KEYS) - 1


def key_bit(key: DispatchKey) -> int:
    """The bitmask holding only ``key``."""
    return 1 << int(key)


def mask_of(*keys: DispatchKey) -> int:
    """The bitmask holding exactly the given keys."""
    bits = 0
    for key in keys:
        bits |= 1 << int(key)
    return bits


#: Every tensor carries the autograd keys next to its backend key, as in PyTorch;
#: whether anything is recorded is decided inside the Autograd kernel.
AUTOGRAD_KEYS_MASK = mask_of(DispatchKey.ADInplaceOrView, DispatchKey.Autograd)


class DispatchKeySet:
    """An immutable set of dispatch keys stored as an int bitmask.

    >>> ks = DispatchKeySet(DispatchKey.CPU, DispatchKey.Autograd)
    >>> ks.highest()
    <DispatchKey.Autograd: 4>
    >>> DispatchKey.CPU in ks
    True
    """

    __slots__ = ("bits",)

    def __init__(self, *keys: DispatchKey):
        object.__setattr__(self, "bits", mask_of(*keys))

    @classmethod
    def from_bits(cls, bits: int) -> DispatchKeySet:
        """Wrap a raw bitmask (as the dispatcher passes to wrapper kernels)."""
        keyset = cls.__new__(cls)
        object.__setattr__(keyset, "bits", int(bits) & ALL_KEYS_MASK)
        return keyset

    def __setattr__(self, name, value):
        raise AttributeError("DispatchKeySet is immutable")

    def highest(self) -> DispatchKey | None:
        """The highest-priority key in the set, or None when it is empty."""
        if not self.bits:
            return None
        return DispatchKey(self.bits.bit_length() - 1)

    def add(self, key: DispatchKey) -> DispatchKeySet:
        """A new set with ``key`` added."""
        return DispatchKeySet.from_bits(self.bits | (1 << int(key)))

    def remove(self, key: DispatchKey) -> DispatchKeySet:
        """A new set without ``key``."""
        return DispatchKeySet.from_bits(self.bits & ~(1 << int(key)))

    def below(self, key: DispatchKey) -> DispatchKeySet:
        """The keys of this set that rank strictly below ``key``."""
        return DispatchKeySet.from_bits(self.bits & BELOW[int(key)])

    def __contains__(self, key: DispatchKey) -> bool:
        return bool(self.bits & (1 << int(key)))

    def __iter__(self):
        """Iterate from the highest-priority key down, the order a call visits them."""
        for k in range(NUM_KEYS - 1, -1, -1):
            if self.bits & (1 << k):
                yield DispatchKey(k)

    def __len__(self) -> int:
        return bin(self.bits).count("1")

    def _other_bits(self, other) -> int:
        if isinstance(other, DispatchKeySet):
            return other.bits
        if isinstance(other, DispatchKey):
            return 1 << int(other)
        return int(other)

    def __or__(self, other) -> DispatchKeySet:
        return DispatchKeySet.from_bits(self.bits | self._other_bits(other))

    def __and__(self, other) -> DispatchKeySet:
        return DispatchKeySet.from_bits(self.bits & self._other_bits(other))

    def __eq__(self, other) -> bool:
        if isinstance(other, DispatchKeySet):
            return self.bits == other.bits
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.bits)

    def __int__(self) -> int:
        return self.bits

    __index__ = __int__

    def __repr__(self) -> str:
        names = ", ".join(key.name for key in self)
        return f"DispatchKeySet({names})"
