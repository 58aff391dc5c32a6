"""Compiled loop orders, blocked and packed matmul against BLAS dgemm, one thread, in one run.

Run from the repository root:  PYTHONPATH=. python benchmarks/bench_loops.py [--rounds 3]

Two claims of the loop-order topic, measured side by side (whylab.bench: one warm-up
call, each timing a batch autoranged to >= 0.2 s, interleaved rounds with the order
rotating; ratios are medians of per-round ratios with quartiles):

* at n = 1024, the best compiled loop order (ikj, kij) runs within 10x of dgemm;
* at n = 2048 (``--n-blocked``), the packed Goto-style form runs >= 3x faster than the
  naive blocked loops.

BLAS is held to one thread with threadpoolctl, so both sides use one core. On machines
where OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are set (see the environment notes), unset
both for this command only; the kernel OpenBLAS picked is printed first.
"""

from __future__ import annotations

import argparse
import os
from functools import partial

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from whylab.bench import compare, quartiles
from whylab.numerics.loops import compile_all, matmul_blocked, matmul_loop, matmul_packed

BUDGET_S = 0.2


def report(title: str, n: int, candidates: dict, reference: str, rounds: int) -> None:
    with threadpool_limits(limits=1, user_api="blas"):
        result = compare(candidates, rounds, BUDGET_S, max_calls=64, pause_s=0.2)
    flops = 2 * n**3
    print(f"\n{title} (n = {n}, {rounds} rounds)")
    print(f"{'candidate':<18} {'GFLOP/s median':>15} {'[q1, q3]':>18} "
          f"{f'time / {reference} (median [q1, q3])':>36}")
    for name, samples in result.times.items():
        rates = quartiles([flops / t / 1e9 for t in samples])
        ratio = result.ratio_quartiles(name, reference)
        print(f"{name:<18} {rates.median:>15.2f} {f'[{rates.q1:.2f}, {rates.q3:.2f}]':>18} "
              f"{ratio.format('.2f'):>36}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n-orders", type=int, default=1024)
    parser.add_argument("--n-blocked", type=int, default=2048)
    args = parser.parse_args()

    blas = [(i["internal_api"], i["version"], i.get("architecture")) for i in threadpool_info()
            if i["user_api"] == "blas"]
    print(f"BLAS: {blas}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    compile_all()
    rng = np.random.default_rng(0)

    n = args.n_orders
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    report("best compiled loop orders against dgemm", n, {
        "dgemm (1 thread)": partial(np.matmul, A, B),
        "ikj": partial(matmul_loop, A, B, "ikj"),
        "kij": partial(matmul_loop, A, B, "kij"),
        "packed": partial(matmul_packed, A, B),
    }, "dgemm (1 thread)", args.rounds)

    n = args.n_blocked
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    report("packed against naive blocked loops", n, {
        "packed": partial(matmul_packed, A, B),
        "blocked b=32": partial(matmul_blocked, A, B, 32),
        "blocked b=64": partial(matmul_blocked, A, B, 64),
        "ikj (unblocked)": partial(matmul_loop, A, B, "ikj"),
        "dgemm (1 thread)": partial(np.matmul, A, B),
    }, "packed", args.rounds)


if __name__ == "__main__":
    main()
