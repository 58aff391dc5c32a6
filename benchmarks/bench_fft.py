"""Time the radix-2 FFT (iterative and recursive) against the O(n^2) DFT and numpy.fft.

Run from the repository root:  PYTHONPATH=. python benchmarks/bench_fft.py [--rounds 7]

For every n the implementations are timed in interleaved rounds (so a slow spell of
the VM hits them all alike); each timing is the best-of-a-few mean over enough calls
to last ~20 ms. Reported: median and quartiles per implementation, and the ratio
to numpy.fft.fft (median of per-round ratios, with quartiles).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from whylab.numerics.fft import dft, fft, fft_recursive

DFT_MAX_N = 4096  # n^2 work: 4096 already takes tens of milliseconds per call


def seconds_per_call(func, x, budget_s=0.02) -> float:
    """Mean seconds per call over a loop lasting about ``budget_s`` (after one warm-up)."""
    func(x)
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            func(x)
        elapsed = time.perf_counter() - start
        if elapsed >= budget_s or calls >= 1 << 16:
            return elapsed / calls
        calls *= 2


def quartiles(values):
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return median, q1, q3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--max-log2n", type=int, default=16)
    args = parser.parse_args()

    implementations = {
        "numpy.fft": np.fft.fft,
        "fft (iterative)": fft,
        "fft_recursive": fft_recursive,
        "dft (matrix)": dft,
    }
    rng = np.random.default_rng(0)
    print(f"{'n':>7} {'implementation':<16} {'median µs':>12} {'[q1, q3] µs':>22} "
          f"{'x numpy (median [q1, q3])':>30}")
    for log2n in range(3, args.max_log2n + 1, 1):
        n = 2**log2n
        x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        active = {name: f for name, f in implementations.items()
                  if not (name.startswith("dft") and n > DFT_MAX_N)}
        times = {name: [] for name in active}
        for _ in range(args.rounds):
            for name, func in active.items():
                times[name].append(seconds_per_call(func, x))
        reference = np.array(times["numpy.fft"])
        for name, samples in times.items():
            median, q1, q3 = quartiles(np.array(samples) * 1e6)
            ratio, r1, r3 = quartiles(np.array(samples) / reference)
            print(f"{n:>7} {name:<16} {median:>12.1f} {f'[{q1:.1f}, {q3:.1f}]':>22} "
                  f"{f'{ratio:.1f} [{r1:.1f}, {r3:.1f}]':>30}")
        if "dft (matrix)" in times:
            per_round = np.array(times["dft (matrix)"]) / np.array(times["fft (iterative)"])
            speedup = quartiles(per_round)
            print(f"{n:>7} {'dft / fft':<16} {'':>12} {'':>22} "
                  f"{f'{speedup[0]:.1f} [{speedup[1]:.1f}, {speedup[2]:.1f}]':>30}")


if __name__ == "__main__":
    main()
