"""The radix-2 fast Fourier transform, written to be read.

The discrete Fourier transform of ``x[0..n-1]`` is

    X[k] = sum_j x[j] * exp(-2*pi*i * j*k / n),        k = 0 .. n-1,

an n-by-n matrix times a vector: n^2 complex multiplies (:func:`dft`).

The radix-2 FFT (Cooley and Tukey, 1965) splits the sum into even and odd ``j``.
Both halves are DFTs of length n/2, and they combine with one *butterfly* per
output pair::

    X[k]       = E[k] + w^k * O[k]
    X[k + n/2] = E[k] - w^k * O[k]        with w = exp(-2*pi*i / n),  k < n/2

so T(n) = 2 T(n/2) + n/2 butterflies, which gives (n/2) log2(n) butterflies in
total instead of n^2 multiplies.

This module has four ways to compute the same transform:

* :func:`dft` -- the definition, a matrix-vector product (the reference);
* :func:`dft_two_factor` -- one Cooley-Tukey split n = n1*n2 with both factors
  done by the definition: O(n^1.5) work, the half-way house between the two;
* :func:`fft_recursive` -- the even/odd split written as recursion (the idea);
* :func:`fft` -- the iterative in-place version: reorder the input by bit
  reversal (:func:`bit_reversal_permutation`), then run log2(n) stages of
  butterflies (:func:`butterfly_stages`). A :class:`Plan` holds both, computed
  once per length (twiddle factors included), as FFT libraries plan a length
  once and reuse the plan. Each stage is one vectorised NumPy step over its
  n/2 butterflies.

Pass an :class:`OperationCount` to any of them to count the arithmetic that
really ran: it is read off the arrays each step multiplies, not from a formula.
The length must be a power of two (except for :func:`dft` and
:func:`dft_two_factor`); anything else is rejected with an error that names the
function and the length.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "OperationCount",
    "ButterflyStage",
    "Plan",
    "dft",
    "dft_matrix",
    "dft_two_factor",
    "fft",
    "fft_recursive",
    "fft_stages",
    "ifft",
    "plan_fft",
    "bit_reversal_permutation",
    "butterfly_stages",
    "count_fft_operations",
    "is_power_of_two",
]

# The DFT is computed a block of matrix rows at a time so that memory stays
# bounded (a full 16384 x 16384 complex matrix would need 4 GiB).
_DFT_BLOCK_ELEMENTS = 1 << 20

REAL_FLOPS_PER_COMPLEX_MULTIPLY = 6  # 4 real multiplies + 2 real additions
REAL_FLOPS_PER_COMPLEX_ADDITION = 2


@dataclass
class OperationCount:
    """Arithmetic done by one transform, counted from the arrays it really multiplied.

    ``complex_multiplies`` counts every complex product the code executed;
    ``trivial_multiplies`` is the part of them by 1 or by -i, which cost no
    arithmetic in a hand-written kernel (-i only swaps the real and imaginary
    parts and flips a sign) although a vectorised NumPy step multiplies by them
    like any other factor. ``exponentials`` counts the complex exponentials
    exp(-2*pi*i*m/n) evaluated during the call.
    """

    butterflies: int = 0
    complex_multiplies: int = 0
    trivial_multiplies: int = 0
    complex_additions: int = 0
    exponentials: int = 0

    @property
    def nontrivial_multiplies(self) -> int:
        """Complex multiplies by a factor other than 1 or -i."""
        return self.complex_multiplies - self.trivial_multiplies

    def real_flops(self, *, skip_trivial: bool) -> int:
        """Real floating-point operations: 6 per complex multiply, 2 per complex addition.

        With ``skip_trivial`` the multiplies by 1 and -i are left out, as an
        FFT kernel written out by hand would leave them out.
        """
        multiplies = self.nontrivial_multiplies if skip_trivial else self.complex_multiplies
        return (REAL_FLOPS_PER_COMPLEX_MULTIPLY * multiplies
                + REAL_FLOPS_PER_COMPLEX_ADDITION * self.complex_additions)


@dataclass(frozen=True)
class ButterflyStage:
    """The butterflies of one stage of the iterative FFT.

    Butterfly ``b`` reads positions ``top[b]`` and ``bottom[b]`` and writes back::

        a[top], a[bottom] = a[top] + w * a[bottom],  a[top] - w * a[bottom]

    with twiddle ``w = exp(-2*pi*i * twiddle_exponent[b] / span)``.
    ``span`` is the length of the sub-transforms this stage completes (2, 4, ..., n).
    """

    span: int
    top: np.ndarray
    bottom: np.ndarray
    twiddle_exponent: np.ndarray
    twiddles: np.ndarray

    def trivial_twiddles(self) -> int:
        """How many of this stage's twiddles are exactly 1 (exponent 0) or -i (a quarter turn)."""
        exponent = self.twiddle_exponent
        return int(np.count_nonzero((exponent == 0) | (4 * exponent == self.span)))


@dataclass(frozen=True)
class Plan:
    """What :func:`fft` runs for one length: the input order, then the butterfly stages.

    :func:`plan_fft` builds the radix-2 plan; a different plan (another order,
    other stages) makes :func:`fft` compute a different transform, which is how
    the explorer shows what a wrong reorder or a wrong twiddle does.
    """

    n: int
    order: np.ndarray
    stages: tuple[ButterflyStage, ...]


def is_power_of_two(n: int) -> bool:
    """True for 1, 2, 4, 8, ...; False for 0, negatives and everything else."""
    return n >= 1 and (n & (n - 1)) == 0


def _require_power_of_two(n: int, op: str) -> None:
    if is_power_of_two(n):
        return
    if n < 1:
        raise ValueError(f"{op}: length n={n}; the transform needs at least one sample")
    lower = 1 << (n.bit_length() - 1)
    raise ValueError(
        f"{op}: length n={n} is not a power of two; radix-2 needs n = 2^k "
        f"(nearest: {lower} or {2 * lower}; pad with zeros or use dft)"
    )


def _as_signal(x: object, op: str) -> np.ndarray:
    """``x`` as a 1-D complex128 array (a new copy), or a clear error naming ``op``."""
    kind = np.asarray(x).dtype.kind
    if kind not in "biufcO":
        raise TypeError(f"{op}: expected an array of numbers, got dtype {np.asarray(x).dtype}")
    try:
        signal = np.array(x, dtype=np.complex128)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: expected an array of numbers, got {type(x).__name__}") from None
    if signal.ndim != 1:
        raise ValueError(f"{op}: expected a 1-D signal, got shape {signal.shape}")
    return signal


# ---------------------------------------------------------------- the definition


def _dft_angles(n: int, start: int, stop: int) -> np.ndarray:
    """``j*k mod n`` for rows ``start..stop-1``; matrix entry (k, j) is exp(-2*pi*i * that / n)."""
    rows = np.arange(start, stop, dtype=np.int64)[:, None]
    cols = np.arange(n, dtype=np.int64)[None, :]
    # Reduce j*k modulo n in integers first: exp(-2*pi*i*jk/n) is periodic in jk,
    # and a small angle keeps full double precision even for large n.
    return (rows * cols) % n


def _twiddle(angles: np.ndarray, n: int) -> np.ndarray:
    return np.exp(-2j * np.pi * angles / n)


def dft_matrix(n: int) -> np.ndarray:
    """The n x n DFT matrix ``W[k, j] = exp(-2*pi*i * j*k / n)`` (any n >= 1)."""
    if n < 1:
        raise ValueError(f"dft_matrix: size n={n}; needs n >= 1")
    return _twiddle(_dft_angles(n, 0, n), n)


Summation = Literal["pairwise", "in-order"]


def dft(x: object, count: OperationCount | None = None, *, matrix: np.ndarray | None = None,
        summation: Summation = "pairwise") -> np.ndarray:
    """The DFT by its definition, ``X[k] = sum_j W[k, j] x[j]``: O(n^2) work, any n >= 1.

    Each block of rows is formed as the n^2 products ``W[k, j] * x[j]`` (one
    NumPy multiply whose result holds one element per product, which is what
    ``count`` counts), then summed along j. ``summation="pairwise"`` sums as
    NumPy's ``sum`` does, in a tree, so rounding errors grow like log n;
    ``"in-order"`` adds the products one after another as the formula reads
    (a running sum, ``cumsum``), whose rounding errors grow like n in the worst
    case. ``matrix`` gives a precomputed :func:`dft_matrix`; without it every
    call evaluates the n^2 exponentials afresh, which costs far more than the
    multiplies.
    """
    signal = _as_signal(x, "dft")
    n = signal.shape[0]
    if n < 1:
        raise ValueError("dft: length n=0; the transform needs at least one sample")
    if summation not in ("pairwise", "in-order"):
        raise ValueError(f"dft: summation must be 'pairwise' or 'in-order', got {summation!r}")
    if matrix is not None and np.shape(matrix) != (n, n):
        raise ValueError(f"dft: matrix has shape {np.shape(matrix)}, the signal needs ({n}, {n})")
    out = np.empty(n, dtype=np.complex128)
    block = max(1, _DFT_BLOCK_ELEMENTS // n)
    for start in range(0, n, block):
        stop = min(n, start + block)
        angles = _dft_angles(n, start, stop) if matrix is None or count is not None else None
        rows = _twiddle(angles, n) if matrix is None else matrix[start:stop]
        # An elementwise product and a sum along the row, not a BLAS call: BLAS worker
        # threads make small products erratic (milliseconds) on a busy machine, which
        # would blur the O(n^2) growth this function exists to show.
        products = rows * signal
        if summation == "pairwise":
            out[start:stop] = products.sum(axis=1)
        else:
            out[start:stop] = np.cumsum(products, axis=1)[:, -1]
        if count is not None:
            count.complex_multiplies += products.size
            count.trivial_multiplies += int(np.count_nonzero((angles == 0) | (4 * angles == n)))
            count.complex_additions += products.shape[0] * (n - 1)
            count.exponentials += rows.size if matrix is None else 0
    return out


def dft_two_factor(x: object) -> np.ndarray:
    """One Cooley-Tukey split n = n1*n2, both factors done by the definition: O(n (n1 + n2)).

    With ``j = j1 + n1*j2`` and ``k = k2 + n2*k1`` the DFT factors into n1
    DFTs of length n2, a twiddle ``exp(-2*pi*i * j1*k2 / n)`` per element, and
    n2 DFTs of length n1. Done by the definition, that is n*n2 + n*n1
    multiplies: about 2 n^1.5 when n1 and n2 are near sqrt(n) (they are the
    two factors of n closest to each other). The FFT is this split applied
    again and again; stopping after one level is an O(n^1.5) algorithm.
    """
    signal = _as_signal(x, "dft_two_factor")
    n = signal.shape[0]
    if n < 1:
        raise ValueError("dft_two_factor: length n=0; the transform needs at least one sample")
    n1 = max(d for d in range(1, int(np.sqrt(n)) + 1) if n % d == 0)
    n2 = n // n1
    grid = signal.reshape(n2, n1)  # grid[j2, j1] = x[j1 + n1*j2]
    inner = np.einsum("kj,jc->kc", dft_matrix(n2), grid)  # [k2, j1]: DFTs of length n2
    inner *= _twiddle(np.outer(np.arange(n2), np.arange(n1)) % n, n)
    outer = np.einsum("rj,jc->rc", inner, dft_matrix(n1))  # [k2, k1]: DFTs of length n1
    return outer.T.ravel()  # X[k2 + n2*k1] = outer[k2, k1]


# ---------------------------------------------------------------- the idea


def fft_recursive(x: object, count: OperationCount | None = None) -> np.ndarray:
    """Radix-2 FFT as recursion: transform the even and odd samples, then combine.

    Made to show the idea, not to be fast: it allocates at every level.
    """
    signal = _as_signal(x, "fft_recursive")
    _require_power_of_two(signal.shape[0], "fft_recursive")
    return _fft_recursive(signal, count)


def _fft_recursive(signal: np.ndarray, count: OperationCount | None) -> np.ndarray:
    n = signal.shape[0]
    if n == 1:
        return signal.copy()  # the DFT of one sample is that sample
    even = _fft_recursive(signal[0::2], count)
    odd = _fft_recursive(signal[1::2], count)
    half = n // 2
    exponent = np.arange(half)
    twiddled_odd = _twiddle(exponent, n) * odd
    if count is not None:
        count.butterflies += half
        count.complex_multiplies += half
        count.trivial_multiplies += int(np.count_nonzero((exponent == 0) | (4 * exponent == n)))
        count.complex_additions += 2 * half
        count.exponentials += half
    return np.concatenate([even + twiddled_odd, even - twiddled_odd])


# ---------------------------------------------------------------- the practice


@functools.lru_cache(maxsize=32)
def _bit_reversal(n: int) -> np.ndarray:
    order = np.zeros(1, dtype=np.int64)
    # Reading the bits of an index backwards: each new low bit of the index
    # becomes a new high bit of its position, so the order for 2m is the order
    # for m doubled, followed by the same doubled plus one.
    while order.shape[0] < n:
        order = np.concatenate([2 * order, 2 * order + 1])
    order.flags.writeable = False
    return order


def bit_reversal_permutation(n: int) -> np.ndarray:
    """``perm[i]`` = i with its log2(n) bits reversed; for n=8: 0 4 2 6 1 5 3 7.

    The iterative FFT starts from ``x[perm]``: after the recursion's repeated
    even/odd splits, that is the order in which the samples end up.
    """
    _require_power_of_two(n, "bit_reversal_permutation")
    return _bit_reversal(n)


@functools.lru_cache(maxsize=32)
def _stages(n: int) -> tuple[ButterflyStage, ...]:
    stages = []
    span = 2
    while span <= n:
        half = span // 2
        block_starts = np.arange(0, n, span, dtype=np.int64)
        offsets = np.arange(half, dtype=np.int64)
        top = (block_starts[:, None] + offsets[None, :]).ravel()
        exponent = np.tile(offsets, block_starts.shape[0])
        twiddles = _twiddle(exponent, span)
        bottom = top + half
        for array in (top, bottom, exponent, twiddles):
            array.flags.writeable = False
        stages.append(ButterflyStage(span, top, bottom, exponent, twiddles))
        span *= 2
    return tuple(stages)


def butterfly_stages(n: int) -> tuple[ButterflyStage, ...]:
    """The log2(n) stages of butterflies that :func:`fft` runs, in order."""
    _require_power_of_two(n, "butterfly_stages")
    return _stages(n)


def plan_fft(n: int) -> Plan:
    """The radix-2 plan for length n: bit-reversal order and log2(n) butterfly stages."""
    _require_power_of_two(n, "plan_fft")
    return Plan(n, _bit_reversal(n), _stages(n))


def _planned(signal: np.ndarray, plan: Plan | None, op: str) -> Plan:
    n = signal.shape[0]
    if plan is None:
        _require_power_of_two(n, op)
        return plan_fft(n)
    if plan.n != n:
        raise ValueError(f"{op}: the plan is for length {plan.n}, the signal has n={n}")
    return plan


def fft(x: object, count: OperationCount | None = None, plan: Plan | None = None) -> np.ndarray:
    """Iterative radix-2 FFT: bit-reversal reorder, then log2(n) butterfly stages.

    Works in place on one copy of the input. Matches ``numpy.fft.fft`` up to
    rounding. ``plan`` defaults to :func:`plan_fft` of the signal's length.
    """
    signal = _as_signal(x, "fft")
    plan = _planned(signal, plan, "fft")
    values = signal[plan.order]
    for _ in _run_stages(values, plan.stages, count):
        pass
    return values


def fft_stages(x: object, plan: Plan | None = None) -> list[np.ndarray]:
    """What :func:`fft` holds after each step: the reordered input, then every stage.

    The last array is the transform. Used to draw the butterfly network with the
    values that really flow through it.
    """
    signal = _as_signal(x, "fft_stages")
    plan = _planned(signal, plan, "fft_stages")
    values = signal[plan.order]
    snapshots = [values.copy()]
    for _ in _run_stages(values, plan.stages, None):
        snapshots.append(values.copy())
    return snapshots


def _run_stages(values: np.ndarray, stages: tuple[ButterflyStage, ...],
                count: OperationCount | None):
    """Apply every butterfly stage to ``values`` in place, yielding after each stage."""
    for stage in stages:
        upper = values[stage.top]
        twiddled_lower = stage.twiddles * values[stage.bottom]
        values[stage.top] = upper + twiddled_lower
        values[stage.bottom] = upper - twiddled_lower
        if count is not None:
            butterflies = stage.top.shape[0]
            count.butterflies += butterflies
            count.complex_multiplies += twiddled_lower.shape[0]
            count.trivial_multiplies += stage.trivial_twiddles()
            count.complex_additions += upper.shape[0] + twiddled_lower.shape[0]
        yield stage


def ifft(spectrum: object, count: OperationCount | None = None,
         plan: Plan | None = None) -> np.ndarray:
    """Inverse FFT: ``x = conj(fft(conj(X))) / n``, so that ``ifft(fft(x)) == x`` up to rounding.

    Conjugating turns exp(+2*pi*i*jk/n) of the inverse into the forward
    transform's exp(-2*pi*i*jk/n), so one plan serves both directions.
    """
    values = _as_signal(spectrum, "ifft")
    plan = _planned(values, plan, "ifft")
    return np.conj(fft(np.conj(values), count, plan)) / values.shape[0]


def count_fft_operations(n: int) -> OperationCount:
    """Butterflies, multiplies and additions that :func:`fft` does at length n.

    Counted by running :func:`fft` itself (on zeros), not by a formula.
    """
    _require_power_of_two(n, "count_fft_operations")
    count = OperationCount()
    fft(np.zeros(n), count)
    return count
