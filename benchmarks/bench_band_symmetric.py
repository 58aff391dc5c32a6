"""Time band_gaxpy against BLAS dgbmv, and sym_gaxpy against dspmv/dsymv, side by side.

Run from the repository root:  PYTHONPATH=. python benchmarks/bench_band_symmetric.py [--quick]

Targets (issue 10): band_gaxpy(order="diagonal") at least as fast as dgbmv at n = 10^4 for
stored widths w = 5 and 11; sym_gaxpy within 2x of dspmv at n = 2000.

Each array is handed over in the memory order its routine streams through, made once before
any timing: the band array ``ab`` in C order for the diagonal loop (each diagonal a
contiguous row) and in Fortran order for dgbmv (f2py would otherwise copy it on every
call); the full symmetric matrix in Fortran order for dsymv. BLAS runs on one thread
(``--threads`` to change), like our loops. Candidates are timed in interleaved rounds with
``whylab.bench.compare``; reported are the median [q1, q3] time per call and the median
[q1, q3] of the per-round ratios to the BLAS reference.
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
from scipy.linalg import blas
from threadpoolctl import threadpool_limits

from whylab.bench import compare, format_table
from whylab.numerics.banded import band_gaxpy
from whylab.numerics.symmetric import pack, sym_gaxpy

BAND_N = 10_000
BAND_WIDTHS = (3, 5, 11, 21)
SYM_N = 2000


def band_candidates(n: int, width: int, with_column_loop: bool) -> dict:
    q = (width - 1) // 2
    p = width - 1 - q
    rng = np.random.default_rng(width)
    ab = rng.standard_normal((width, n))  # corner slots are never read by any candidate
    ab_fortran = np.asfortranarray(ab)
    x = rng.standard_normal(n)
    candidates = {
        "dgbmv (Fortran ab)": partial(blas.dgbmv, n, n, p, q, 1.0, ab_fortran, x),
        "band_gaxpy diagonal (C ab)": partial(band_gaxpy, ab, p, q, x, None, "diagonal"),
        "band_gaxpy diagonal (Fortran ab)": partial(band_gaxpy, ab_fortran, p, q, x, None,
                                                    "diagonal"),
        "dgbmv (C ab: copied per call)": partial(blas.dgbmv, n, n, p, q, 1.0, ab, x),
    }
    if with_column_loop:
        candidates["band_gaxpy column"] = partial(band_gaxpy, ab, p, q, x, None, "column")
    reference = candidates["dgbmv (Fortran ab)"]()
    for name, func in candidates.items():
        np.testing.assert_allclose(func(), reference, rtol=1e-12, atol=1e-12, err_msg=name)
    return candidates


def sym_candidates(n: int) -> dict:
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    A = A + A.T
    ap = pack(A, "L")
    A_fortran = np.asfortranarray(A)
    x = rng.standard_normal(n)
    candidates = {
        "dspmv (packed)": partial(blas.dspmv, n, 1.0, ap, x, lower=1),
        "sym_gaxpy (packed, numba)": partial(sym_gaxpy, ap, x),
        "dsymv (full, Fortran)": partial(blas.dsymv, 1.0, A_fortran, x, lower=1),
        "A @ x (full, NumPy)": partial(np.matmul, A, x),
    }
    reference = A @ x
    for name, func in candidates.items():
        np.testing.assert_allclose(func(), reference, rtol=1e-11, atol=1e-11, err_msg=name)
    return candidates


def report(title: str, candidates: dict, reference: str, rounds: int, budget_s: float) -> None:
    result = compare(candidates, rounds, budget_s, repeats=3, pause_s=0.02)
    rows = []
    for name in candidates:
        micros = result.quartiles(name)
        rows.append([name, f"{micros.median * 1e6:.1f} [{micros.q1 * 1e6:.1f}, "
                           f"{micros.q3 * 1e6:.1f}]",
                     result.ratio_quartiles(name, reference).format(".2f")])
    print(f"\n{title}")
    print(format_table(["candidate", "µs per call, median [q1, q3]",
                        f"÷ {reference}, median [q1, q3]"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--quick", action="store_true",
                        help="5 rounds, shorter batches, no column loop")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    args = parser.parse_args()
    rounds = 5 if args.quick else args.rounds
    budget_s = 0.005 if args.quick else 0.02

    with threadpool_limits(limits=args.threads, user_api="blas"):
        for width in BAND_WIDTHS:
            report(f"band, n = {BAND_N}, w = {width} (p + q + 1), {args.threads} BLAS thread(s)",
                   band_candidates(BAND_N, width, with_column_loop=not args.quick),
                   "dgbmv (Fortran ab)", rounds, budget_s)
        report(f"symmetric, n = {SYM_N}, {args.threads} BLAS thread(s)", sym_candidates(SYM_N),
               "dspmv (packed)", rounds, budget_s)


if __name__ == "__main__":
    main()
