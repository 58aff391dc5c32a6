"""Per-op overhead and large-tensor throughput: whylab vs raw NumPy vs PyTorch eager.

Run from the repository root:  PYTHONPATH=. python benchmarks/bench_ops.py [--rounds N]

Method (see DESIGN.md, "Benchmark hygiene"): every case is warmed up first;
the three frameworks are timed in interleaved rounds (the order rotates each
round) with a short pause between framework switches so OpenBLAS worker threads
stop spinning; each round's time per call is the best of a few repeats. The
table shows median time per call and the median [first quartile, third
quartile] over rounds of the ratios whylab/numpy and whylab/torch.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import whylab
from whylab.bench import compare, format_time

PAUSE_S = 0.15


def small_cases():
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((4, 4)).astype(np.float32)
    b_np = rng.standard_normal((4, 4)).astype(np.float32)
    a_w, b_w = whylab.from_numpy(a_np.copy()), whylab.from_numpy(b_np.copy())
    a_t, b_t = torch.from_numpy(a_np.copy()), torch.from_numpy(b_np.copy())

    def chain(a, b):
        """Ten ops in a row; the same code runs on whylab and on torch tensors."""
        x = a + b
        x = x * b
        x = x.relu()
        x = x - 0.5
        x = x.tanh()
        x = x @ b
        x = x / 3.0
        x = x.t()
        x = x.sigmoid()
        return x.sum(1)

    def chain_np():
        x = a_np + b_np
        x = x * b_np
        x = np.maximum(x, 0)
        x = x - np.float32(0.5)
        x = np.tanh(x)
        x = x @ b_np
        x = x / np.float32(3.0)
        x = x.T
        x = 1 / (1 + np.exp(-x))
        return x.sum(1)

    return {
        "add 4x4": (lambda: a_w + b_w, lambda: a_np + b_np, lambda: a_t + b_t),
        "mul 4x4": (lambda: a_w * b_w, lambda: a_np * b_np, lambda: a_t * b_t),
        "matmul 4x4": (lambda: a_w @ b_w, lambda: a_np @ b_np, lambda: a_t @ b_t),
        "sum 4x4": (lambda: a_w.sum(), lambda: a_np.sum(), lambda: a_t.sum()),
        "relu 4x4": (lambda: a_w.relu(), lambda: np.maximum(a_np, 0), lambda: a_t.relu()),
        "10-op chain 4x4": (lambda: chain(a_w, b_w), chain_np, lambda: chain(a_t, b_t)),
        "transpose 4x4": (lambda: a_w.t(), lambda: a_np.T, lambda: a_t.t()),
        "view 4x4": (lambda: a_w.view(16), lambda: a_np.reshape(16), lambda: a_t.view(16)),
        "getitem [1] 4x4": (lambda: a_w[1], lambda: a_np[1], lambda: a_t[1]),
        "getitem [:, 1:3] 4x4": (lambda: a_w[:, 1:3], lambda: a_np[:, 1:3], lambda: a_t[:, 1:3]),
    }


def large_cases():
    rng = np.random.default_rng(1)
    m_np = rng.standard_normal((1024, 1024)).astype(np.float32)
    n_np = rng.standard_normal((1024, 1024)).astype(np.float32)
    big_np = rng.standard_normal((2048, 2048)).astype(np.float32)  # 4M elements
    big2_np = rng.standard_normal((2048, 2048)).astype(np.float32)
    m_w, n_w = whylab.from_numpy(m_np), whylab.from_numpy(n_np)
    m_t, n_t = torch.from_numpy(m_np), torch.from_numpy(n_np)
    big_w, big2_w = whylab.from_numpy(big_np), whylab.from_numpy(big2_np)
    big_t, big2_t = torch.from_numpy(big_np), torch.from_numpy(big2_np)
    return {
        "matmul 1024x1024 f32": (lambda: m_w @ n_w, lambda: m_np @ n_np, lambda: m_t @ n_t),
        "add 4M f32": (lambda: big_w + big2_w, lambda: big_np + big2_np, lambda: big_t + big2_t),
        "mul 4M f32": (lambda: big_w * big2_w, lambda: big_np * big2_np, lambda: big_t * big2_t),
        "sum 4M f32": (lambda: big_w.sum(), lambda: big_np.sum(), lambda: big_t.sum()),
    }


def run_case(name, fns, rounds: int, target_s: float, clock=time.perf_counter):
    """Time whylab, numpy and torch on one case; medians and ratio quartiles over rounds."""
    candidates = dict(zip(("whylab", "numpy", "torch"), fns, strict=True))
    result = compare(
        candidates, rounds, target_s, warmup=3, repeats=3, pause_s=PAUSE_S, clock=clock
    )
    return {
        "name": name,
        "medians": {label: result.median(label) for label in candidates},
        "vs_numpy": result.ratio_quartiles("whylab", "numpy"),
        "vs_torch": result.ratio_quartiles("whylab", "torch"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=["small", "large"], default=None)
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by this thread's CPU time (time.thread_time), not wall time: on a machine "
        "shared with other work it leaves out the time others hold the core (not their "
        "effect on the caches)",
    )
    args = parser.parse_args()
    clock = time.thread_time if args.cpu_time else time.perf_counter
    print(
        f"numpy {np.__version__}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"{args.rounds} interleaved rounds, {'thread CPU' if args.cpu_time else 'wall'} time"
    )
    header = (
        f"{'case':24} {'whylab':>11} {'numpy':>11} {'torch':>11}   "
        f"{'whylab/numpy [q1, q3]':>24}   {'whylab/torch [q1, q3]':>24}"
    )
    print(header)
    print("-" * len(header))
    groups = []
    if args.only in (None, "small"):
        groups.append((small_cases(), 0.02))
    if args.only in (None, "large"):
        groups.append((large_cases(), 0.2))
    for cases, target_s in groups:
        for name, fns in cases.items():
            result = run_case(name, fns, args.rounds, target_s, clock)
            whylab_t, numpy_t, torch_t = (
                format_time(result["medians"][label]) for label in ("whylab", "numpy", "torch")
            )
            ratio_n = result["vs_numpy"].format()
            ratio_t = result["vs_torch"].format()
            print(
                f"{name:24} {whylab_t:>11} {numpy_t:>11} {torch_t:>11}   "
                f"{ratio_n:>24}   {ratio_t:>24}",
                flush=True,
            )


if __name__ == "__main__":
    main()
