"""Packed storage of a symmetric matrix and the symmetric GAXPY y + A x, written to be read.

A real symmetric n-by-n matrix (``A[i, j] == A[j, i]``) is fixed by one
triangle: n(n+1)/2 numbers instead of n². LAPACK's *packed* layout stores that
triangle column by column in one vector ``ap`` (0-based indices)::

    uplo="L":  ap[i + j*(2n - j - 1)/2] = A[i, j]     for j <= i   (lower triangle)
    uplo="U":  ap[i + j*(j + 1)/2]      = A[i, j]     for i <= j   (upper triangle)

so with "L" column j of the lower triangle, ``A[j:n, j]``, is one contiguous
segment starting with its diagonal entry, and with "U" column j of the upper
triangle, ``A[0:j+1, j]``, is one contiguous segment ending with it.

:func:`sym_gaxpy` computes y + A x from ``ap`` the way BLAS's ``dspmv`` does:
it walks the segments once, and every off-diagonal entry it loads,
``a = A[i, j] = A[j, i]``, is used twice while it is at hand -- once as
``A[i, j]`` (``y[i] += a * x[j]``) and once as ``A[j, i]`` (``y[j] += a * x[i]``).
The storage is nearly halved; the arithmetic is not: still n² multiplies.

The loop is compiled with numba so that it runs at the speed of compiled code
(a Python loop over n columns costs several times ``dspmv``). ``fastmath`` lets
the compiler reorder the sum ``y[j] += a * x[i]`` for vector instructions, so
results agree with ``dspmv`` to rounding, not bit for bit. Pass a
:class:`SymmetricWork` to count, per stored entry, the loads and the products
the loop really did.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from whylab.numerics._jit import jit

__all__ = ["SYMMETRY_RTOL", "SymmetricWork", "pack", "packed_length", "sym_gaxpy", "unpack"]

SYMMETRY_RTOL = 1e-12
""":func:`pack` accepts ``|A[i, j] - A[j, i]| <= SYMMETRY_RTOL * max |A|`` (rounding)."""

UPLOS = ("L", "U")


@dataclass
class SymmetricWork:
    """What one :func:`sym_gaxpy` did to each stored entry ``ap[k]``, counted as it ran.

    ``loads[k]``: how many times the loop read ``ap[k]`` from memory;
    ``uses[k]``: how many products ``ap[k]`` entered.
    """

    loads: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    uses: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def multiplies(self) -> int:
        return int(self.uses.sum())


def packed_length(n: int) -> int:
    """n(n+1)/2: the number of entries in one triangle of an n-by-n matrix, diagonal included."""
    return n * (n + 1) // 2


def _uplo(uplo: object) -> str:
    if not isinstance(uplo, str) or uplo.upper() not in UPLOS:
        raise ValueError(f"uplo: must be 'L' (lower triangle) or 'U' (upper), got {uplo!r}")
    return uplo.upper()


def _triangle(n: int, uplo: str) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every stored entry, in packed order (column by column)."""
    # np.triu_indices walks the upper triangle row by row; read with rows and columns
    # swapped, that is the lower triangle column by column -- LAPACK's "L" order.
    # Likewise np.tril_indices, swapped, walks the upper triangle column by column.
    first, second = np.triu_indices(n) if uplo == "L" else np.tril_indices(n)
    return second, first


def pack(A: object, uplo: str = "L", *, rtol: float = SYMMETRY_RTOL) -> np.ndarray:
    """The packed vector (length n(n+1)/2) of the symmetric matrix ``A``'s ``uplo`` triangle.

    ``A`` must be square, finite and symmetric to within ``rtol`` relative to its
    largest entry; otherwise the error says where it is not.
    """
    uplo = _uplo(uplo)
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A: expected a square matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        i, j = np.argwhere(~np.isfinite(A))[0]
        raise ValueError(f"A: entries must be finite, A[{i}, {j}] = {A[i, j]}")
    asymmetry = np.abs(A - A.T)
    bound = rtol * float(np.max(np.abs(A), initial=0.0))
    if np.any(asymmetry > bound):
        i, j = np.unravel_index(np.argmax(asymmetry), A.shape)
        raise ValueError(f"A: not symmetric: |A[{i}, {j}] - A[{j}, {i}]| = {asymmetry[i, j]:.3g} "
                         f"> rtol * max|A| = {bound:.3g} (rtol = {rtol:g})")
    rows, columns = _triangle(A.shape[0], uplo)
    return A[rows, columns]


def _order(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n: the matrix order must be an int >= 0, got {n!r}")
    return int(n)


def _packed(ap: object, n: int) -> np.ndarray:
    ap = np.asarray(ap, dtype=float)
    if ap.shape != (packed_length(n),):
        raise ValueError(f"ap: expected n(n+1)/2 = {packed_length(n)} entries for n = {n}, "
                         f"got shape {ap.shape}")
    return ap


def unpack(ap: object, n: int, uplo: str = "L") -> np.ndarray:
    """The full symmetric n-by-n matrix whose ``uplo`` triangle is packed in ``ap``."""
    uplo = _uplo(uplo)
    n = _order(n)
    ap = _packed(ap, n)
    rows, columns = _triangle(n, uplo)
    A = np.empty((n, n), dtype=ap.dtype)
    A[rows, columns] = ap
    A[columns, rows] = ap
    return A


# The compiled packed loops. ``counting`` is an argument, so the timed loop and the
# counted loop are the same source and the same machine code: the flag never changes
# inside a call, the branch on it is predicted every time (LLVM may also hoist it out
# of the loops), and the uncounted call measured as fast as a separately compiled
# counter-free copy: 1.00 [0.95, 1.04] at n = 2000 (median [q1, q3] of 41 interleaved
# calls). As module-level functions they are cached on disk by numba (``jit``), so a
# new process loads them instead of compiling them again.


@jit(fastmath=True)
def _lower(ap, x, y, loads, uses, counting):
    n = x.shape[0]
    start = 0
    for j in range(n):
        segment = ap[start:start + n - j]  # A[j:n, j]; segment[0] is the diagonal
        xj = x[j]
        y[j] += segment[0] * xj
        below_x = x[j + 1:]
        below_y = y[j + 1:]
        dot = 0.0
        for r in range(n - j - 1):
            a = segment[r + 1]  # A[j+1+r, j] = A[j, j+1+r]: loaded once ...
            below_y[r] += a * xj  # ... used as A[i, j]
            dot += a * below_x[r]  # ... and as A[j, i]
            if counting:
                loads[start + r + 1] += 1
                uses[start + r + 1] += 2
        y[j] += dot
        if counting:
            loads[start] += 1
            uses[start] += 1
        start += n - j


@jit(fastmath=True)
def _upper(ap, x, y, loads, uses, counting):
    n = x.shape[0]
    start = 0
    for j in range(n):
        segment = ap[start:start + j + 1]  # A[0:j+1, j]; segment[j] is the diagonal
        xj = x[j]
        above_y = y[:j]
        dot = 0.0
        for r in range(j):
            a = segment[r]  # A[r, j] = A[j, r]: loaded once ...
            above_y[r] += a * xj  # ... used as A[r, j]
            dot += a * x[r]  # ... and as A[j, r]
            if counting:
                loads[start + r] += 1
                uses[start + r] += 2
        y[j] += dot + segment[j] * xj
        if counting:
            loads[start + j] += 1
            uses[start + j] += 1
        start += j + 1


KERNELS = {"L": _lower, "U": _upper}
_NO_COUNTERS = np.zeros(0, dtype=np.int64)


def sym_gaxpy(ap: object, x: object, y: object = None, uplo: str = "L", *,
              count: SymmetricWork | None = None) -> np.ndarray:
    """y + A x for the symmetric matrix A packed in ``ap`` (n = len(x)).

    ``y`` defaults to zeros and is not modified. With ``count``, its ``loads``
    and ``uses`` are replaced by this call's per-entry tallies.
    """
    uplo = _uplo(uplo)
    x = np.ascontiguousarray(x, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"x: expected a vector, got shape {x.shape}")
    n = x.shape[0]
    ap = np.ascontiguousarray(_packed(ap, n))
    if y is None:
        result = np.zeros(n)
    else:
        result = np.array(y, dtype=float)
        if result.shape != (n,):
            raise ValueError(f"y: expected a vector of length n = {n}, got shape {result.shape}")
    if count is None:
        KERNELS[uplo](ap, x, result, _NO_COUNTERS, _NO_COUNTERS, False)
    else:
        count.loads = np.zeros(ap.shape[0], dtype=np.int64)
        count.uses = np.zeros(ap.shape[0], dtype=np.int64)
        KERNELS[uplo](ap, x, result, count.loads, count.uses, True)
    return result
