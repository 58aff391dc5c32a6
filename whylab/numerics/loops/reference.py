"""A slow, plainly written cache simulator, to check the compiled one against.

It shares no code with :mod:`~whylab.numerics.loops.cache_sim`: the loop nest
is spelled out with ``itertools.product``, the register rule is stated by
array name, and each cache set is an ``OrderedDict`` kept in LRU order. Use it
for small n only (about a microsecond per access).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from whylab.numerics.loops.validation import check_order, check_positive_int

# which loop indices each array is subscripted by, as (row, column)
SUBSCRIPTS = {"A": ("i", "k"), "B": ("k", "j"), "C": ("i", "j")}


def loop_trace(n: int, order: str):
    """Yield (array, row, column) for every load and store of the plain loops, in order."""
    order = check_order("loop_trace", order)
    n = check_positive_int("loop_trace", "n", n)
    inner = order[2]
    in_register = next(name for name, subs in SUBSCRIPTS.items() if inner not in subs)
    for outer_values in itertools.product(range(n), repeat=2):
        index = dict(zip(order[:2], outer_values, strict=True))
        index[inner] = 0  # the register operand does not depend on it

        yield _element(in_register, index)
        for value in range(n):
            index[inner] = value
            for name in ("A", "B", "C"):
                if name == in_register:
                    continue
                yield _element(name, index)
                if name == "C":
                    yield _element(name, index)  # C[i, j] += ...: read, then written back
        if in_register == "C":
            yield _element("C", index)  # the sum is stored after the inner loop


def _element(name: str, index: dict[str, int]) -> tuple[str, int, int]:
    row, column = SUBSCRIPTS[name]
    return (name, index[row], index[column])


def reference_misses(n: int, order: str, line_bytes: int, cache_bytes: int,
                     ways: int) -> dict[str, int]:
    """Misses per array of the plain loops through an LRU cache (same layout as cache_sim)."""
    sets = cache_bytes // (ways * line_bytes)
    cache = [OrderedDict() for _ in range(sets)]
    base = {"A": 0, "B": n * n * 8, "C": 2 * n * n * 8}
    misses = {"A": 0, "B": 0, "C": 0}
    for name, row, column in loop_trace(n, order):
        line = (base[name] + 8 * (row * n + column)) // line_bytes
        lines = cache[line % sets]
        if line in lines:
            lines.move_to_end(line)
            continue
        misses[name] += 1
        if len(lines) == ways:
            lines.popitem(last=False)
        lines[line] = True
    return misses
