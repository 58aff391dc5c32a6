"""A set-associative LRU cache that replays the address trace of the matmul loops.

``simulate_matmul(n, order, line_bytes, cache_bytes, ways)`` walks the loops of
C += A·B for n x n matrices of doubles in the given loop order -- the same
statements, in the same order, as the compiled loops in
:mod:`~whylab.numerics.loops.orders` -- and sends every load and store to a
model cache:

* A, B and C are row-major and lie one after another in memory (A at address 0);
* the cache has ``cache_bytes / (ways * line_bytes)`` sets; line ``a // line_bytes``
  goes to set ``line % sets``, and within a set the least recently used line is
  evicted (LRU);
* the operand that does not depend on the inner loop's index is read into a
  register once per middle iteration (``a = A[i, k]`` in ``ikj``), and in ``ijk``
  and ``jik`` the sum C[i, j] is loaded before the inner loop and stored after;
* a store is an access like a load (write-allocate).

With ``block=b`` the loops run block by block: three block loops over i, j and
k in ``order`` and, inside each b x b x b block, point loops in the same order.

The result (:class:`CacheStats`) counts misses per array; dividing by the n³
inner-loop iterations gives Bryant and O'Hallaron's "misses per inner loop
iteration" (Computer Systems: A Programmer's Perspective, 3rd ed., §6.6.2).
The replay is compiled with numba: about 10⁷ accesses per second here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whylab.numerics._jit import jit
from whylab.numerics.loops.validation import check_order, check_positive_int

__all__ = ["ARRAYS", "CacheStats", "access_trace", "simulate_matmul"]

ARRAYS: tuple[str, ...] = ("A", "B", "C")
DOUBLE_BYTES = 8
_INDICES = {"A": ("i", "k"), "B": ("k", "j"), "C": ("i", "j")}  # (row index, column index)
_C = 2  # position of C in ARRAYS: the one array that is also stored


@dataclass(frozen=True)
class CacheStats:
    """Misses and accesses per array for one simulated run of the loops."""

    n: int
    order: str
    block: int | None
    line_bytes: int
    cache_bytes: int
    ways: int
    misses: dict[str, int]
    accesses: dict[str, int]

    @property
    def iterations(self) -> int:
        """Inner-loop iterations: n³ in every order, blocked or not."""
        return self.n**3

    @property
    def per_iteration(self) -> dict[str, float]:
        """Misses per inner-loop iteration, per array."""
        return {name: count / self.iterations for name, count in self.misses.items()}

    @property
    def total_per_iteration(self) -> float:
        return sum(self.misses.values()) / self.iterations

    @property
    def total_misses(self) -> int:
        return sum(self.misses.values())


def _byte_strides(order: str, n: int) -> np.ndarray:
    """strides[array, level]: bytes the array's address moves per step of loop ``level``."""
    strides = np.zeros((3, 3), dtype=np.int64)
    for a, name in enumerate(ARRAYS):
        row, column = _INDICES[name]
        for level, index in enumerate(order):
            if index == row:
                strides[a, level] = n * DOUBLE_BYTES
            elif index == column:
                strides[a, level] = DOUBLE_BYTES
    return strides


@jit
def _touch(line, tags, stamps, sets, clock):
    """Access ``line``; return True on a miss. LRU within the line's set."""
    s = line % sets
    victim = 0
    for w in range(tags.shape[1]):
        if tags[s, w] == line:
            stamps[s, w] = clock
            return False
        if stamps[s, w] < stamps[s, victim]:
            victim = w
    tags[s, victim] = line
    stamps[s, victim] = clock
    return True


@jit
def _replay(n, block, strides, bases, line_bytes, sets, ways, misses, accesses,
            trace_arrays, trace_offsets):
    """Run the loop nest, sending each access to the cache (and the first ones to the trace)."""
    tags = np.full((sets, ways), -1, dtype=np.int64)
    stamps = np.zeros((sets, ways), dtype=np.int64)
    clock = 0
    recorded = 0
    limit = trace_arrays.shape[0]
    # the hoisted array: the one whose address does not move with the inner loop
    hoisted = 0
    for a in range(3):
        if strides[a, 2] == 0:
            hoisted = a
    addresses = np.zeros(3, dtype=np.int64)
    for b0 in range(0, n, block):
        for b1 in range(0, n, block):
            for b2 in range(0, n, block):
                for x0 in range(b0, b0 + block):
                    for x1 in range(b1, b1 + block):
                        for a in range(3):
                            addresses[a] = bases[a] + x0 * strides[a, 0] + x1 * strides[a, 1]
                        # hoisted load before the inner loop (and, for C, the store after)
                        h_address = addresses[hoisted] + b2 * strides[hoisted, 2]
                        clock += 1
                        accesses[hoisted] += 1
                        if _touch(h_address // line_bytes, tags, stamps, sets, clock):
                            misses[hoisted] += 1
                        if recorded < limit:
                            trace_arrays[recorded] = hoisted
                            trace_offsets[recorded] = (h_address - bases[hoisted]) // 8
                            recorded += 1
                        for x2 in range(b2, b2 + block):
                            for a in range(3):
                                if a == hoisted:
                                    continue
                                address = addresses[a] + x2 * strides[a, 2]
                                # C is read and then written back; A and B are only read
                                repeats = 2 if a == 2 else 1
                                for _ in range(repeats):
                                    clock += 1
                                    accesses[a] += 1
                                    if _touch(address // line_bytes, tags, stamps, sets, clock):
                                        misses[a] += 1
                                    if recorded < limit:
                                        trace_arrays[recorded] = a
                                        trace_offsets[recorded] = (address - bases[a]) // 8
                                        recorded += 1
                        if hoisted == 2:
                            clock += 1
                            accesses[hoisted] += 1
                            if _touch(h_address // line_bytes, tags, stamps, sets, clock):
                                misses[hoisted] += 1
                            if recorded < limit:
                                trace_arrays[recorded] = hoisted
                                trace_offsets[recorded] = (h_address - bases[hoisted]) // 8
                                recorded += 1
    return recorded


def _check_geometry(n, order, line_bytes, cache_bytes, ways, block):
    function = "simulate_matmul"
    n = check_positive_int(function, "n", n)
    order = check_order(function, order)
    line_bytes = check_positive_int(function, "line_bytes", line_bytes)
    if line_bytes % DOUBLE_BYTES:
        raise ValueError(f"{function}: line_bytes must be a multiple of {DOUBLE_BYTES} "
                         f"(one double), got {line_bytes}")
    cache_bytes = check_positive_int(function, "cache_bytes", cache_bytes)
    ways = check_positive_int(function, "ways", ways)
    if cache_bytes % (ways * line_bytes):
        raise ValueError(f"{function}: cache_bytes must be a multiple of ways x line_bytes = "
                         f"{ways * line_bytes}, got {cache_bytes}")
    if block is not None:
        block = check_positive_int(function, "block", block, maximum=n)
        if n % block:
            raise ValueError(f"{function}: block must divide n = {n}, got {block}")
    return n, order, line_bytes, cache_bytes, ways, block


def _run(n, order, line_bytes, cache_bytes, ways, block, trace_length):
    strides = _byte_strides(order, n)
    matrix_bytes = n * n * DOUBLE_BYTES
    bases = np.array([0, matrix_bytes, 2 * matrix_bytes], dtype=np.int64)
    misses = np.zeros(3, dtype=np.int64)
    accesses = np.zeros(3, dtype=np.int64)
    trace_arrays = np.zeros(trace_length, dtype=np.int64)
    trace_offsets = np.zeros(trace_length, dtype=np.int64)
    recorded = _replay(n, block or n, strides, bases, line_bytes,
                       cache_bytes // (ways * line_bytes), ways, misses, accesses,
                       trace_arrays, trace_offsets)
    return misses, accesses, trace_arrays[:recorded], trace_offsets[:recorded]


def simulate_matmul(n: int, order: str, line_bytes: int, cache_bytes: int, ways: int,
                    block: int | None = None) -> CacheStats:
    """Replay the loops of C += A·B (n x n doubles) in ``order`` through an LRU cache.

    ``ways = cache_bytes // line_bytes`` is a fully associative cache, ``ways = 1``
    a direct-mapped one. ``block`` (dividing n) runs the blocked loops instead.
    """
    n, order, line_bytes, cache_bytes, ways, block = _check_geometry(
        n, order, line_bytes, cache_bytes, ways, block)
    misses, accesses, _, _ = _run(n, order, line_bytes, cache_bytes, ways, block, 0)
    return CacheStats(n, order, block, line_bytes, cache_bytes, ways,
                      misses={name: int(misses[a]) for a, name in enumerate(ARRAYS)},
                      accesses={name: int(accesses[a]) for a, name in enumerate(ARRAYS)})


def access_trace(n: int, order: str, length: int, block: int | None = None
                 ) -> list[tuple[str, int, int]]:
    """The first ``length`` accesses of the loops: (array, row, column) in program order."""
    n, order, _, _, _, block = _check_geometry(n, order, DOUBLE_BYTES, DOUBLE_BYTES, 1, block)
    length = check_positive_int("access_trace", "length", length)
    _, _, arrays, offsets = _run(n, order, DOUBLE_BYTES, DOUBLE_BYTES, 1, block, length)
    return [(ARRAYS[a], int(o) // n, int(o) % n) for a, o in zip(arrays, offsets, strict=True)]
