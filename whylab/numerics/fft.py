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

This module has three versions of the same transform:

* :func:`dft` -- the definition, as a matrix-vector product (the reference);
* :func:`fft_recursive` -- the even/odd split written as recursion (the idea);
* :func:`fft` -- the iterative in-place version real libraries use: reorder the
  input by bit reversal (:func:`bit_reversal_permutation`), then run log2(n)
  stages of butterflies (:func:`butterfly_stages`). Each stage is one vectorised
  NumPy step over all of its n/2 butterflies.

Pass an :class:`OperationCount` to any of them to count the arithmetic it did.
The length must be a power of two; anything else is rejected with an error that
names the function and the length.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

__all__ = [
    "OperationCount",
    "ButterflyStage",
    "dft",
    "dft_matrix",
    "fft",
    "fft_recursive",
    "fft_stages",
    "ifft",
    "bit_reversal_permutation",
    "butterfly_stages",
    "count_fft_operations",
    "is_power_of_two",
]

# The DFT is computed a block of matrix rows at a time so that memory stays
# bounded (a full 16384 x 16384 complex matrix would need 4 GiB).
_DFT_BLOCK_ELEMENTS = 1 << 20


@dataclass
class OperationCount:
    """Arithmetic done by one transform, counted as it runs.

    A butterfly is one twiddle multiply and two complex additions. The DFT does
    no butterflies: ``n`` multiplies and ``n - 1`` additions per output.
    """

    butterflies: int = 0
    complex_multiplies: int = 0
    complex_additions: int = 0


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


def _dft_rows(n: int, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop-1`` of the n x n DFT matrix."""
    rows = np.arange(start, stop, dtype=np.int64)[:, None]
    cols = np.arange(n, dtype=np.int64)[None, :]
    # Reduce j*k modulo n in integers first: exp(-2*pi*i*jk/n) is periodic in jk,
    # and a small angle keeps full double precision even for large n.
    angle = (rows * cols) % n
    return np.exp(-2j * np.pi * angle / n)


def dft_matrix(n: int) -> np.ndarray:
    """The n x n DFT matrix ``W[k, j] = exp(-2*pi*i * j*k / n)`` (any n >= 1)."""
    if n < 1:
        raise ValueError(f"dft_matrix: size n={n}; needs n >= 1")
    return _dft_rows(n, 0, n)


def dft(x: object, count: OperationCount | None = None) -> np.ndarray:
    """The DFT by its definition, the matrix-vector product ``W x``: O(n^2) work, any n >= 1."""
    signal = _as_signal(x, "dft")
    n = signal.shape[0]
    if n < 1:
        raise ValueError("dft: length n=0; the transform needs at least one sample")
    out = np.empty(n, dtype=np.complex128)
    block = max(1, _DFT_BLOCK_ELEMENTS // n)
    for start in range(0, n, block):
        stop = min(n, start + block)
        # einsum runs its own single-threaded loop rather than a BLAS call: BLAS worker
        # threads make small products erratic (milliseconds) on a busy machine, which
        # would blur the O(n^2) growth this function exists to show.
        out[start:stop] = np.einsum("kj,j->k", _dft_rows(n, start, stop), signal)
    if count is not None:
        count.complex_multiplies += n * n
        count.complex_additions += n * (n - 1)
    return out


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
    twiddled_odd = np.exp(-2j * np.pi * np.arange(half) / n) * odd
    if count is not None:
        count.butterflies += half
        count.complex_multiplies += half
        count.complex_additions += 2 * half
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
        twiddles = np.exp(-2j * np.pi * exponent / span)
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


def fft(x: object, count: OperationCount | None = None) -> np.ndarray:
    """Iterative radix-2 FFT: bit-reversal reorder, then log2(n) butterfly stages.

    Works in place on one copy of the input. Matches ``numpy.fft.fft`` to
    rounding error.
    """
    signal = _as_signal(x, "fft")
    _require_power_of_two(signal.shape[0], "fft")
    values = signal[_bit_reversal(signal.shape[0])]
    for _ in _run_stages(values, count):
        pass
    return values


def fft_stages(x: object) -> list[np.ndarray]:
    """What :func:`fft` holds after each step: the bit-reversed input, then every stage.

    The last array is the transform. Used to draw the butterfly network with the
    values that really flow through it.
    """
    signal = _as_signal(x, "fft_stages")
    _require_power_of_two(signal.shape[0], "fft_stages")
    values = signal[_bit_reversal(signal.shape[0])]
    snapshots = [values.copy()]
    for _ in _run_stages(values, None):
        snapshots.append(values.copy())
    return snapshots


def _run_stages(values: np.ndarray, count: OperationCount | None):
    """Apply every butterfly stage to ``values`` in place, yielding after each stage."""
    for stage in _stages(values.shape[0]):
        upper = values[stage.top]
        twiddled_lower = stage.twiddles * values[stage.bottom]
        values[stage.top] = upper + twiddled_lower
        values[stage.bottom] = upper - twiddled_lower
        if count is not None:
            count.butterflies += stage.top.shape[0]
            count.complex_multiplies += stage.top.shape[0]
            count.complex_additions += 2 * stage.top.shape[0]
        yield stage


def ifft(spectrum: object) -> np.ndarray:
    """Inverse FFT: ``x = conj(fft(conj(X))) / n``, so that ``ifft(fft(x)) == x``."""
    values = _as_signal(spectrum, "ifft")
    _require_power_of_two(values.shape[0], "ifft")
    return np.conj(fft(np.conj(values))) / values.shape[0]


def count_fft_operations(n: int) -> OperationCount:
    """Butterflies, multiplies and additions that :func:`fft` does at length n.

    Counted by running :func:`fft` itself (on zeros), not by a formula.
    """
    _require_power_of_two(n, "count_fft_operations")
    count = OperationCount()
    fft(np.zeros(n), count)
    return count
