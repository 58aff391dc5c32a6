"""Band storage and the band GAXPY y + A x, written to be read.

An m-by-n matrix has *lower bandwidth* p and *upper bandwidth* q when
``A[i, j] == 0`` whenever ``i - j > p`` or ``j - i > q``: only the main
diagonal, p diagonals below it and q above it can hold nonzeros. Band storage
keeps just those diagonals, in the layout LAPACK and Golub & Van Loan
(*Matrix Computations*, 4th ed., section 1.2) use::

    ab[q + i - j, j] = A[i, j]        for max(0, j - q) <= i <= min(m - 1, j + p)

``ab`` has p + q + 1 rows and n columns: column j of ``ab`` holds column j of
A's band, and row d of ``ab`` holds the diagonal with ``j - i = q - d`` (row 0
the q-th superdiagonal, row q the main diagonal, row p + q the p-th
subdiagonal). The few slots of ``ab`` that fall outside the matrix (the top-left
and bottom-right corners) are set to zero and never read.

Two loop orders compute y + A x from ``ab`` (:func:`band_gaxpy`):

* ``order="column"`` -- Golub & Van Loan's band GAXPY: for each column j, one
  axpy of length at most p + q + 1 (``y[i0:i1] += A[i0:i1, j] * x[j]``). Its
  n short vector operations are run as a Python loop.
* ``order="diagonal"`` -- one vector operation per stored diagonal: p + q + 1
  operations of length about n each. Each diagonal is a row of ``ab``, so in
  NumPy's default (C, row-major) order it is contiguous in memory.

BLAS's ``dgbmv`` uses the same index map but wants ``ab`` in Fortran
(column-major) order; f2py silently copies a C-ordered array on every call, so
give it ``np.asfortranarray(ab)``, made once. Pass a :class:`BandWork` to
:func:`band_gaxpy` to count the multiplies and additions its loops really ran.

Like BLAS, :func:`band_gaxpy` does not inspect values: an infinity in ``x``
meets only the stored entries, whereas dense ``A @ x`` would also form
``0 * inf = nan`` with the zeros outside the band.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["BandWork", "band_gaxpy", "check_bandwidths", "from_band", "to_band"]

ORDERS = ("column", "diagonal")


@dataclass
class BandWork:
    """Floating-point operations done by one :func:`band_gaxpy`, counted as its loops run.

    Every vector operation adds the length of the slice it really processed, so a
    loop that strays outside the band (or stops short of it) shows in the count.
    """

    multiplies: int = 0
    additions: int = 0

    @property
    def flops(self) -> int:
        return self.multiplies + self.additions

    def axpy(self, length: int) -> None:
        """Record one ``y[a:b] += u * v`` over ``length`` elements."""
        self.multiplies += length
        self.additions += length


def _bandwidth(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: bandwidth must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name}: bandwidth must be >= 0, got {value}")
    return int(value)


def check_bandwidths(p: object, q: object, m: int, n: int) -> tuple[int, int]:
    """Validate lower bandwidth ``p`` and upper bandwidth ``q`` for an m-by-n matrix.

    A lower bandwidth above m - 1 (or an upper one above n - 1) names diagonals
    the matrix does not have; we refuse it rather than store empty rows.
    """
    p, q = _bandwidth(p, "p"), _bandwidth(q, "q")
    if p > m - 1:
        raise ValueError(f"p: lower bandwidth must be <= m - 1 = {m - 1} for {m} rows, got {p}")
    if q > n - 1:
        raise ValueError(f"q: upper bandwidth must be <= n - 1 = {n - 1} for {n} columns, "
                         f"got {q}")
    return p, q


def _matrix(A: object, name: str) -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or 0 in A.shape:
        raise ValueError(f"{name}: expected a non-empty 2-D matrix, got shape {A.shape}")
    return A


def _diagonal_span(m: int, n: int, offset: int) -> tuple[int, int, int]:
    """Where the diagonal ``j - i = offset`` of an m-by-n matrix starts, and its length.

    Returns ``(first_row, first_column, length)``.
    """
    first_row, first_column = max(0, -offset), max(0, offset)
    length = min(m - first_row, n - first_column)
    return first_row, first_column, length


def to_band(A: object, p: int, q: int) -> np.ndarray:
    """The band storage ``ab`` (shape (p + q + 1, n), C order) of the m-by-n matrix ``A``.

    ``A`` must be finite and zero outside the band: storing it would silently
    drop those entries, so a nonzero there is an error that says where.
    """
    A = _matrix(A, "A")
    m, n = A.shape
    p, q = check_bandwidths(p, q, m, n)
    if not np.all(np.isfinite(A)):
        i, j = np.argwhere(~np.isfinite(A))[0]
        raise ValueError(f"A: entries must be finite, A[{i}, {j}] = {A[i, j]}")
    rows, columns = np.indices((m, n))
    outside = (rows - columns > p) | (columns - rows > q)
    if np.any(A[outside] != 0):
        i, j = np.argwhere(outside & (A != 0))[0]
        raise ValueError(f"A: entry A[{i}, {j}] = {A[i, j]:.3g} lies outside the band "
                         f"(p = {p}, q = {q}); band storage would drop it")
    ab = np.zeros((p + q + 1, n))
    for d in range(p + q + 1):
        first_row, first_column, length = _diagonal_span(m, n, q - d)
        ab[d, first_column:first_column + length] = np.diagonal(A, offset=q - d)
    return ab


def _band_array(ab: object, p: int, q: int) -> np.ndarray:
    ab = np.asarray(ab, dtype=float)
    if ab.ndim != 2 or ab.shape[1] == 0:
        raise ValueError(f"ab: expected a 2-D band array with n >= 1 columns, got shape "
                         f"{ab.shape}")
    if ab.shape[0] != p + q + 1:
        raise ValueError(f"ab: must have p + q + 1 = {p + q + 1} rows for p = {p}, q = {q}, "
                         f"got {ab.shape[0]}")
    return ab


def _rows(m: object, name: str = "m") -> int:
    if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
        raise ValueError(f"{name}: the number of rows must be an int >= 1, got {m!r}")
    return int(m)


def from_band(ab: object, p: int, q: int, m: int) -> np.ndarray:
    """The dense m-by-n matrix whose band storage is ``ab`` (corner slots are ignored)."""
    m = _rows(m)
    p, q = _bandwidth(p, "p"), _bandwidth(q, "q")
    ab = _band_array(ab, p, q)
    n = ab.shape[1]
    check_bandwidths(p, q, m, n)
    A = np.zeros((m, n))
    for d in range(p + q + 1):
        first_row, first_column, length = _diagonal_span(m, n, q - d)
        rows = np.arange(first_row, first_row + length)
        A[rows, rows + (q - d)] = ab[d, first_column:first_column + length]
    return A


def _vector(v: object, length: int, name: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.shape != (length,):
        raise ValueError(f"{name}: expected a vector of length {length}, got shape {v.shape}")
    return v


def band_gaxpy(ab: object, p: int, q: int, x: object, y: object = None, order: str = "column",
               *, m: int | None = None, count: BandWork | None = None) -> np.ndarray:
    """y + A x for the m-by-n band matrix A stored in ``ab`` (see the module docstring).

    ``m`` (the number of rows) is ``len(y)`` when ``y`` is given and n otherwise;
    ``y`` defaults to zeros and is not modified. ``order`` is ``"column"`` or
    ``"diagonal"``. With ``count``, the operations the loops run are added to it.
    """
    if order not in ORDERS:
        raise ValueError(f"order: must be one of {', '.join(ORDERS)}, got {order!r}")
    p, q = _bandwidth(p, "p"), _bandwidth(q, "q")
    ab = _band_array(ab, p, q)
    n = ab.shape[1]
    if y is not None and m is None:
        m = np.shape(y)[0] if np.ndim(y) == 1 else n  # a bad y is reported by _vector below
    m = _rows(m if m is not None else n)
    check_bandwidths(p, q, m, n)
    x = _vector(x, n, "x")
    result = np.zeros(m) if y is None else _vector(y, m, "y").copy()
    work = count if count is not None else BandWork()
    if order == "column":
        _column_loop(ab, p, q, x, result, work)
    else:
        _diagonal_loop(ab, q, x, result, work)
    return result


def _column_loop(ab: np.ndarray, p: int, q: int, x: np.ndarray, y: np.ndarray,
                 work: BandWork) -> None:
    """Golub & Van Loan's band GAXPY: column j adds A[i0:i1, j] * x[j] to y[i0:i1]."""
    m, n = y.shape[0], x.shape[0]
    for j in range(n):
        first, last = max(0, j - q), min(m, j + p + 1)  # rows of column j inside the band
        if first >= last:
            continue  # a wide matrix: column j lies entirely right of the last row's band
        y[first:last] += ab[q + first - j:q + last - j, j] * x[j]
        work.axpy(last - first)


def _diagonal_loop(ab: np.ndarray, q: int, x: np.ndarray, y: np.ndarray,
                   work: BandWork) -> None:
    """One axpy per stored diagonal: y[i] += A[i, i + k] * x[i + k] for the whole diagonal."""
    m, n = y.shape[0], x.shape[0]
    for d in range(ab.shape[0]):
        first_row, first_column, length = _diagonal_span(m, n, q - d)
        columns = slice(first_column, first_column + length)
        y[first_row:first_row + length] += ab[d, columns] * x[columns]
        work.axpy(length)
