"""Time the radix-2 FFT (iterative and recursive) against the O(n^2) DFT and numpy.fft.

Also timed: the DFT with its matrix precomputed (how much of the DFT's time is the
n^2 exponentials it evaluates per call) and dft_two_factor, the O(n^1.5) one-split
algorithm that the fft topic uses as a negative control for its n log n check.

Run from the repository root:  PYTHONPATH=. python benchmarks/bench_fft.py [--rounds 7]

For every n the implementations are timed in interleaved rounds (so a slow spell of
the VM hits them all alike); each timing is the mean over a batch of calls sized
(by ``whylab.bench.autorange``, after one warm-up call) to last ~20 ms. Reported:
median and quartiles per implementation, and the ratio to numpy.fft.fft (median of
per-round ratios, with quartiles).
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np

from whylab.bench import compare, quartiles
from whylab.numerics.fft import dft, dft_matrix, dft_two_factor, fft, fft_recursive

DFT_MAX_N = 4096  # n^2 work: 4096 already takes tens of milliseconds per call
BUDGET_S = 0.02  # each timed batch of calls lasts at least this long


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--max-log2n", type=int, default=16)
    args = parser.parse_args()

    implementations = {
        "numpy.fft": np.fft.fft,
        "fft (iterative)": fft,
        "fft_recursive": fft_recursive,
        "dft_two_factor": dft_two_factor,
        "dft (matrix)": dft,
    }
    rng = np.random.default_rng(0)
    print(f"{'n':>7} {'implementation':<20} {'median µs':>12} {'[q1, q3] µs':>22} "
          f"{'x numpy (median [q1, q3])':>30}")
    for log2n in range(3, args.max_log2n + 1, 1):
        n = 2**log2n
        x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        active = {name: f for name, f in implementations.items()
                  if not (name.startswith("dft (") and n > DFT_MAX_N)}
        if n <= DFT_MAX_N:
            active["dft (cached matrix)"] = partial(dft, matrix=dft_matrix(n))
        result = compare({name: partial(f, x) for name, f in active.items()}, args.rounds,
                         BUDGET_S, rotate=False, max_calls=1 << 16)
        for name, samples in result.times.items():
            micros = quartiles([t * 1e6 for t in samples])
            vs_numpy = result.ratio_quartiles(name, "numpy.fft")
            print(f"{n:>7} {name:<20} {micros.median:>12.1f} "
                  f"{f'[{micros.q1:.1f}, {micros.q3:.1f}]':>22} {vs_numpy.format('.1f'):>30}")
        if "dft (matrix)" in result.times:
            speedup = result.ratio_quartiles("dft (matrix)", "fft (iterative)")
            print(f"{n:>7} {'dft / fft':<20} {'':>12} {'':>22} {speedup.format('.1f'):>30}")
            cached = result.ratio_quartiles("dft (matrix)", "dft (cached matrix)")
            print(f"{n:>7} {'dft / cached':<20} {'':>12} {'':>22} {cached.format('.1f'):>30}")

if __name__ == "__main__":
    main()
