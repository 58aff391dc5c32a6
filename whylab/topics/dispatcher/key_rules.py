"""The page's dispatch rules as plain sets of key names, kept apart from the engine.

The key-set experiment computes which kernels *should* run from these
declarations and the formula on the page, and compares that with the hops a
real ``whylab.dispatch.trace()`` recorded. Nothing here reads the engine's
bitmasks or kernel tables: priorities, guards and which operators have an
ADInplaceOrView kernel are stated once, here, as the prose states them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: Priority, highest first, as the page states it.
PRIORITY = ("Tracer", "Autograd", "ADInplaceOrView", "Meta", "CUDA", "CPU")
BACKENDS = frozenset({"CPU", "CUDA", "Meta"})

#: Every tensor carries its backend key plus the two autograd keys.
TENSOR_WRAPPER_KEYS = frozenset({"Autograd", "ADInplaceOrView"})


@dataclass(frozen=True)
class GuardRule:
    """What a guard does to the thread-local key sets and to grad mode."""

    included: frozenset[str]
    excluded: frozenset[str]
    grad_mode: bool


GUARD_RULES = {
    "none": GuardRule(frozenset(), frozenset(), True),
    "exclude-autograd": GuardRule(frozenset(), frozenset({"Autograd"}), True),
    "include-tracer": GuardRule(frozenset({"Tracer"}), frozenset(), True),
    "no-grad": GuardRule(frozenset(), frozenset(), False),
    "inference-mode": GuardRule(frozenset(), frozenset({"Autograd", "ADInplaceOrView"}), False),
}


@dataclass(frozen=True)
class OpRule:
    """Which kinds of kernel an operator has, from what kind of operator it is."""

    is_view: bool
    is_inplace: bool

    def kernel_keys(self) -> frozenset[str]:
        """Keys with a kernel: the Tracer's fallback, Autograd, both backends, and
        ADInplaceOrView only for views and in-place ops (a fallthrough otherwise)."""
        keys = {"Tracer", "Autograd", "CPU", "Meta"}
        if self.is_view or self.is_inplace:
            keys.add("ADInplaceOrView")
        return frozenset(keys)


OP_RULES = {
    "add": OpRule(is_view=False, is_inplace=False),
    "add_": OpRule(is_view=False, is_inplace=True),
    "transpose": OpRule(is_view=True, is_inplace=False),
}


def by_priority(keys: Iterable[str]) -> list[str]:
    """Key names sorted from the highest priority down."""
    keys = set(keys)
    unknown = keys - set(PRIORITY)
    if unknown:
        raise ValueError(f"unknown dispatch keys {sorted(unknown)}")
    return [key for key in PRIORITY if key in keys]


def call_key_set(tensor_keys: Iterable[str], included: Iterable[str],
                 excluded: Iterable[str]) -> frozenset[str]:
    """K = (K_tensors ∪ K_incl) \\ K_excl."""
    return frozenset((set(tensor_keys) | set(included)) - set(excluded))


def highest_key(keys: Iterable[str], kernel_keys: Iterable[str]) -> str | None:
    """k* = max(K ∩ K_op): the highest key for which the operator has a kernel."""
    live = by_priority(set(keys) & set(kernel_keys))
    return live[0] if live else None


def predicted_path(keys: Iterable[str], kernel_keys: Iterable[str]) -> list[str]:
    """The keys a non-composite operator visits: from k* down, each wrapper kernel
    redispatching to the next live key, until a backend kernel computes the result."""
    path = []
    for key in by_priority(set(keys) & set(kernel_keys)):
        path.append(key)
        if key in BACKENDS:
            break
    return path
