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

#: Every tensor made outside inference_mode carries its backend key plus these two.
TENSOR_WRAPPER_KEYS = frozenset({"Autograd", "ADInplaceOrView"})


@dataclass(frozen=True)
class GuardRule:
    """What a guard does to the thread-local key sets, to grad mode, and to the key set
    of the tensors created inside it."""

    included: frozenset[str]
    excluded: frozenset[str]
    grad_mode: bool
    makes_inference_tensors: bool = False


GUARD_RULES = {
    "none": GuardRule(frozenset(), frozenset(), True),
    "exclude-autograd": GuardRule(frozenset(), frozenset({"Autograd"}), True),
    "include-tracer": GuardRule(frozenset({"Tracer"}), frozenset(), True),
    "no-grad": GuardRule(frozenset(), frozenset(), False),
    # Only Autograd is excluded: ordinary tensors keep reaching ADInplaceOrView. The
    # tensors made inside carry neither wrapper key (inference tensors).
    "inference-mode": GuardRule(frozenset(), frozenset({"Autograd"}), False,
                                makes_inference_tensors=True),
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


def output_keys(op: str, self_keys: Iterable[str], input_keys: Iterable[str],
                guard: str) -> frozenset[str]:
    """The key set the result of ``op`` carries.

    An in-place op returns ``self`` and a view shares ``self``'s key set; a new
    tensor gets its backend plus both wrapper keys, or only its backend when it is
    made inside a guard that makes inference tensors.
    """
    rule = OP_RULES[op]
    if rule.is_view or rule.is_inplace:
        return frozenset(self_keys)
    backend = set(input_keys) & BACKENDS
    if GUARD_RULES[guard].makes_inference_tensors:
        return frozenset(backend)
    return frozenset(backend | TENSOR_WRAPPER_KEYS)


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
