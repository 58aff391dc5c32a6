"""The six loop orders of C += A·B, and the same loops run block by block.

Matrix multiplication is three nested loops around one statement,
``C[i, j] += A[i, k] * B[k, j]``, and the loops can be nested in any of 3! = 6
orders. Every order does the same m·n·p multiply-adds; what changes is the
order in which memory is touched. NumPy arrays are row-major (C order), so
moving along a row is stride 1 and moving down a column is a stride of one row.
The innermost loop decides the strides:

* ``ijk``, ``jik`` -- inner loop over k: a row of A (stride 1) and a column of
  B (stride n); C[i, j] stays in a register;
* ``ikj``, ``kij`` -- inner loop over j: rows of B and C (both stride 1);
  A[i, k] stays in a register;
* ``jki``, ``kji`` -- inner loop over i: columns of A and C (both stride n);
  B[k, j] stays in a register.

Each order is written out as its own numba-compiled loop nest, so that loop
order shows up in wall-clock time. :func:`matmul_blocked` runs the ``ikj``
loops over one block of each matrix at a time, visiting the blocks in the
order of a *block schedule* (:func:`block_schedule`): the schedule makes the
three outer block loops an explicit list, which is also what the cache
simulator replays.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from whylab.numerics._jit import jit
from whylab.numerics.loops.validation import (
    LOOP_ORDERS,
    check_order,
    check_positive_int,
    product_operands,
)

__all__ = [
    "LOOP_ORDERS",
    "WorkCount",
    "block_schedule",
    "matmul_blocked",
    "matmul_interpreted",
    "matmul_loop",
]


@dataclass
class WorkCount:
    """Multiply-adds done by the loops, counted as they run (one per ``C += A*B`` step)."""

    multiply_adds: int = 0

    @property
    def flops(self) -> int:
        return 2 * self.multiply_adds


# ---------------------------------------------------------------- the six orders
# Each returns m*n*p, the multiply-adds its three full loops do.


@jit
def _ijk(A, B, C):
    m, p = A.shape
    n = B.shape[1]
    for i in range(m):
        for j in range(n):
            total = C[i, j]
            for k in range(p):
                total += A[i, k] * B[k, j]
            C[i, j] = total
    return m * n * p


@jit
def _jik(A, B, C):
    m, p = A.shape
    n = B.shape[1]
    for j in range(n):
        for i in range(m):
            total = C[i, j]
            for k in range(p):
                total += A[i, k] * B[k, j]
            C[i, j] = total
    return m * n * p


@jit
def _ikj(A, B, C):
    m, p = A.shape
    n = B.shape[1]
    for i in range(m):
        for k in range(p):
            a = A[i, k]
            for j in range(n):
                C[i, j] += a * B[k, j]
    return m * n * p


@jit
def _kij(A, B, C):
    m, p = A.shape
    n = B.shape[1]
    for k in range(p):
        for i in range(m):
            a = A[i, k]
            for j in range(n):
                C[i, j] += a * B[k, j]
    return m * n * p


@jit
def _jki(A, B, C):
    m, p = A.shape
    n = B.shape[1]
    for j in range(n):
        for k in range(p):
            b = B[k, j]
            for i in range(m):
                C[i, j] += A[i, k] * b
    return m * n * p


@jit
def _kji(A, B, C):
    m, p = A.shape
    n = B.shape[1]
    for k in range(p):
        for j in range(n):
            b = B[k, j]
            for i in range(m):
                C[i, j] += A[i, k] * b
    return m * n * p


_LOOPS = {"ijk": _ijk, "jik": _jik, "ikj": _ikj, "kij": _kij, "jki": _jki, "kji": _kji}


def matmul_loop(A, B, order: str = "ikj", C: np.ndarray | None = None,
                count: WorkCount | None = None) -> np.ndarray:
    """C += A·B with the three loops nested in ``order`` (one of :data:`LOOP_ORDERS`).

    ``C`` (updated in place) defaults to zeros, so ``matmul_loop(A, B)`` is A·B.
    The first call of each order compiles it (see :mod:`whylab.numerics._jit`).
    """
    order = check_order("matmul_loop", order)
    A, B, C = product_operands("matmul_loop", A, B, C)
    done = _LOOPS[order](A, B, C)
    if count is not None:
        count.multiply_adds += int(done)
    return C


def matmul_interpreted(A, B) -> np.ndarray:
    """A·B with the ``ikj`` loops run by the Python interpreter, on lists of floats.

    The bottom rung of the speed ladder: the same statement as the compiled
    loops, but every ``+=`` is a bytecode dispatch and a boxed float. (Lists,
    because indexing an ndarray element by element in Python is slower still.)
    """
    A, B, C = product_operands("matmul_interpreted", A, B, None)
    a_rows, b_rows, c_rows = A.tolist(), B.tolist(), C.tolist()
    for i, c_row in enumerate(c_rows):
        a_row = a_rows[i]
        for k, b_row in enumerate(b_rows):
            a = a_row[k]
            for j, b in enumerate(b_row):
                c_row[j] += a * b
    return np.array(c_rows)


# ---------------------------------------------------------------- blocking


def block_schedule(m: int, p: int, n: int, block: int, order: str = "ikj") -> np.ndarray:
    """The corners (i0, k0, j0) of the blocks, in the order the block loops visit them.

    The block loops over i, k and j are nested in ``order`` (outermost first);
    blocks at the far edges are smaller when ``block`` does not divide a size.
    Returns an int64 array of shape (number of blocks, 3).
    """
    order = check_order("block_schedule", order)
    sizes = {"i": check_positive_int("block_schedule", "m", m),
             "k": check_positive_int("block_schedule", "p", p),
             "j": check_positive_int("block_schedule", "n", n)}
    block = check_positive_int("block_schedule", "block", block)
    starts = [range(0, sizes[name], block) for name in order]
    corners = []
    for corner in itertools.product(*starts):
        by_name = dict(zip(order, corner, strict=True))
        corners.append((by_name["i"], by_name["k"], by_name["j"]))
    return np.array(corners, dtype=np.int64).reshape(-1, 3)


@jit
def _blocked_ikj(A, B, C, schedule, block):
    m, p = A.shape
    n = B.shape[1]
    done = 0
    for s in range(schedule.shape[0]):
        i0, k0, j0 = schedule[s, 0], schedule[s, 1], schedule[s, 2]
        i1, k1, j1 = min(i0 + block, m), min(k0 + block, p), min(j0 + block, n)
        for i in range(i0, i1):
            for k in range(k0, k1):
                a = A[i, k]
                for j in range(j0, j1):
                    C[i, j] += a * B[k, j]
        done += (i1 - i0) * (k1 - k0) * (j1 - j0)
    return done


def matmul_blocked(A, B, block: int = 64, C: np.ndarray | None = None, *,
                   schedule: np.ndarray | None = None,
                   count: WorkCount | None = None) -> np.ndarray:
    """C += A·B one block x block x block piece at a time (``ikj`` inside each block).

    The blocks are visited in ``schedule`` (default: :func:`block_schedule` with
    the block loops in ``ikj`` order). The result equals A·B only when the
    schedule covers every block exactly once; ``count`` records the
    multiply-adds the loops really did, so a schedule that misses a block shows.
    """
    A, B, C = product_operands("matmul_blocked", A, B, C)
    m, p = A.shape
    n = B.shape[1]
    block = check_positive_int("matmul_blocked", "block", block)
    if schedule is None:
        schedule = block_schedule(m, p, n, block)
    schedule = np.ascontiguousarray(schedule, dtype=np.int64)
    if schedule.ndim != 2 or schedule.shape[1] != 3:
        raise ValueError(f"matmul_blocked: schedule must have shape (blocks, 3), "
                         f"got {schedule.shape}")
    if schedule.size and (schedule.min() < 0 or np.any(schedule.max(axis=0) >= (m, p, n))):
        raise ValueError("matmul_blocked: schedule has a block corner outside the matrices")
    done = _blocked_ikj(A, B, C, schedule, block)
    if count is not None:
        count.multiply_adds += int(done)
    return C
