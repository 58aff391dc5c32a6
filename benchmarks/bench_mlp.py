"""One training step of a 784-256-10 MLP: whylab vs hand-written NumPy vs PyTorch eager.

A step is: forward through Linear-ReLU-Linear, cross-entropy on integer labels, backward,
and a plain SGD update. Three implementations run in the same process on the same data:

* ``numpy``  - the step written by hand with a manual backward pass. It never computes the
  gradient of the data batch, so it is the floor a NumPy-backed engine can approach. It
  takes each product in the fastest form measured on OpenBLAS (one thread), not the most
  idiomatic one:

  - the weight gradients ``grad.T @ x`` use ``np.dot``: at batch 1 (inner dimension 1)
    NumPy's matmul takes about 225 us for it where ``np.dot`` takes 31 us (float32), and
    at larger batches the two cost the same;
  - in float32, for 8 <= batch < out_features / 2, the forward ``x @ W.T`` is taken as
    ``(W @ x.T).T`` (then made row-major, as whylab's linear does): at batch 16 through the
    784->256 layer OpenBLAS takes 160 us the first way and 85 us the second;
* ``whylab`` - whylab.nn / whylab.optim, the same code as the torch version;
* ``replay``  - that same whylab step under ``whylab.capture`` (recorded during the
  warm-up, then replayed: its kernels without the dispatcher, autograd or the engine);
* ``torch``  - PyTorch eager on the CPU.

Timing protocol (see "Performance facts" in shared/DESIGN.md): every implementation is
warmed up first; then, for a number of interleaved rounds, each one times a block of steps
long enough to be measurable, with a short pause between switches so that the previous
library's BLAS threads have gone idle. Each round gives one ratio whylab/numpy and one
whylab/torch; the table shows the median and the quartiles of those ratios over rounds.

Peak memory per step is the peak that ``tracemalloc`` sees during one step, which covers
NumPy's array allocations (and therefore whylab's); torch's allocator is invisible to it.

Run from the repository root:  ``PYTHONPATH=. python benchmarks/bench_mlp.py [--quick]``
Add ``--profile BATCH`` to print a cProfile of whylab steps at that batch size, and
``--threads N`` to limit both BLAS libraries to N threads (useful on a busy machine, where
two-thread BLAS calls wait on each other).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time
import tracemalloc


def _threads_from_argv(argv: list[str]) -> int | None:
    """Read ``--threads N`` before NumPy loads: OpenBLAS reads its thread count at import."""
    for index, arg in enumerate(argv):
        if arg == "--threads" and index + 1 < len(argv):
            return int(argv[index + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return None


_THREADS = _threads_from_argv(sys.argv)
if _THREADS is not None:
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(_THREADS)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import whylab  # noqa: E402
import whylab.nn  # noqa: E402
import whylab.optim  # noqa: E402
from whylab.bench import (  # noqa: E402
    autorange,
    interleaved_rounds,
    per_round_ratios,
    quartiles,
    warm_up,
)

IN_FEATURES, HIDDEN, CLASSES = 784, 256, 10
LEARNING_RATE = 0.01
SWITCH_PAUSE_S = 0.1


def make_initial_weights(dtype: np.dtype, seed: int = 0) -> dict[str, np.ndarray]:
    """Weights in torch's Linear layout (out, in), drawn once and shared by all three."""
    rng = np.random.default_rng(seed)
    bound1, bound2 = 1 / np.sqrt(IN_FEATURES), 1 / np.sqrt(HIDDEN)
    return {
        "0.weight": rng.uniform(-bound1, bound1, (HIDDEN, IN_FEATURES)).astype(dtype),
        "0.bias": rng.uniform(-bound1, bound1, HIDDEN).astype(dtype),
        "2.weight": rng.uniform(-bound2, bound2, (CLASSES, HIDDEN)).astype(dtype),
        "2.bias": rng.uniform(-bound2, bound2, CLASSES).astype(dtype),
    }


def make_batch(batch: int, dtype: np.dtype, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    inputs = rng.standard_normal((batch, IN_FEATURES)).astype(dtype)
    labels = rng.integers(0, CLASSES, batch)
    return inputs, labels


def _times_weight_t(rows: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``rows @ weight.T`` in the faster form for OpenBLAS (see the module docstring)."""
    if rows.dtype == np.float32 and 8 <= rows.shape[0] < weight.shape[0] // 2:
        return np.ascontiguousarray(np.dot(weight, rows.T).T)
    return np.dot(rows, weight.T)


class NumpyStep:
    """The hand-written step: explicit forward, manual backward, in-place SGD."""

    name = "numpy"

    def __init__(self, weights: dict[str, np.ndarray], inputs, labels) -> None:
        self.w1 = weights["0.weight"].copy()
        self.b1 = weights["0.bias"].copy()
        self.w2 = weights["2.weight"].copy()
        self.b2 = weights["2.bias"].copy()
        self.inputs, self.labels = inputs, labels
        self.rows = np.arange(len(labels))

    def __call__(self) -> float:
        x, rows, labels = self.inputs, self.rows, self.labels
        hidden = _times_weight_t(x, self.w1)
        hidden += self.b1
        activated = np.maximum(hidden, 0)
        logits = _times_weight_t(activated, self.w2)
        logits += self.b2

        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        loss = np.log(total[:, 0]).sum() - shifted[rows, labels].sum()
        loss /= len(labels)

        grad_logits = exp / total
        grad_logits[rows, labels] -= 1
        grad_logits /= len(labels)
        grad_w2 = np.dot(grad_logits.T, activated)
        grad_b2 = grad_logits.sum(axis=0)
        grad_hidden = grad_logits @ self.w2
        grad_hidden *= hidden > 0
        grad_w1 = np.dot(grad_hidden.T, x)  # no gradient for x: the data needs none
        grad_b1 = grad_hidden.sum(axis=0)

        self.w1 -= LEARNING_RATE * grad_w1
        self.b1 -= LEARNING_RATE * grad_b1
        self.w2 -= LEARNING_RATE * grad_w2
        self.b2 -= LEARNING_RATE * grad_b2
        return float(loss)


class FrameworkStep:
    """The same training-step code for whylab and torch: only the module ``fw`` differs."""

    def __init__(self, fw, weights: dict[str, np.ndarray], inputs, labels) -> None:
        self.name = fw.__name__
        self.fw = fw
        self.model = fw.nn.Sequential(
            fw.nn.Linear(IN_FEATURES, HIDDEN),
            fw.nn.ReLU(),
            fw.nn.Linear(HIDDEN, CLASSES),
        )
        self.model.to(_framework_dtype(fw, inputs.dtype))
        self.model.load_state_dict({name: fw.from_numpy(w.copy()) for name, w in weights.items()})
        self.optimizer = fw.optim.SGD(self.model.parameters(), lr=LEARNING_RATE)
        self.inputs = fw.from_numpy(inputs)
        self.labels = fw.from_numpy(labels)

    def train(self, inputs, labels):
        """One step on a batch; returns the loss tensor."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.fw.nn.functional.cross_entropy(self.model(inputs), labels)
        loss.backward()
        self.optimizer.step()
        return loss

    def __call__(self) -> float:
        return self.train(self.inputs, self.labels).item()


class ReplayStep(FrameworkStep):
    """whylab's step under ``whylab.capture``: the same ``train``, recorded on its first
    calls and replayed afterwards (the warm-up calls run it eagerly and record it)."""

    def __init__(self, weights: dict[str, np.ndarray], inputs, labels) -> None:
        super().__init__(whylab, weights, inputs, labels)
        self.name = "replay"
        self.captured = whylab.capture.capture(self.train)

    def __call__(self) -> float:
        return self.captured(self.inputs, self.labels).item()


def _framework_dtype(fw, numpy_dtype):
    return fw.float64 if numpy_dtype == np.float64 else fw.float32


def peak_memory_per_step(step, repeats: int = 3) -> int:
    """Smallest tracemalloc peak (bytes) over a few single steps, after a warm step."""
    step()
    peaks = []
    for _ in range(repeats):
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        step()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        peaks.append(peak)
    return min(peaks)


def bench_one(
    batch: int, dtype, rounds: int, block_s: float, warmup: int, clock=time.perf_counter
) -> dict:
    weights = make_initial_weights(dtype)
    inputs, labels = make_batch(batch, dtype)
    steps = {
        "numpy": NumpyStep(weights, inputs, labels),
        "whylab": FrameworkStep(whylab, weights, inputs, labels),
        "replay": ReplayStep(weights, inputs, labels),
        "torch": FrameworkStep(torch, weights, inputs, labels),
    }
    first_losses = {name: step() for name, step in steps.items()}
    for step in steps.values():
        warm_up(step, warmup)
        time.sleep(SWITCH_PAUSE_S)
    counts = {
        name: autorange(step, block_s, max_calls=2000, clock=clock)[0]
        for name, step in steps.items()
    }
    per_step = interleaved_rounds(steps, rounds, counts, pause_s=SWITCH_PAUSE_S, clock=clock)

    ratio_numpy = per_round_ratios(per_step["whylab"], per_step["numpy"])
    ratio_torch = per_round_ratios(per_step["whylab"], per_step["torch"])
    replay_numpy = per_round_ratios(per_step["replay"], per_step["numpy"])
    replay_torch = per_round_ratios(per_step["replay"], per_step["torch"])
    captured = steps["replay"].captured
    memory = {name: peak_memory_per_step(steps[name]) for name in ("numpy", "whylab")}
    best = {name: min(t) for name, t in per_step.items()}
    return {
        "batch": batch,
        "dtype": np.dtype(dtype).name,
        "median_us": {name: quartiles(t).median * 1e6 for name, t in per_step.items()},
        "best_ratios": (best["whylab"] / best["numpy"], best["whylab"] / best["torch"]),
        "vs_numpy": quartiles(ratio_numpy),
        "vs_torch": quartiles(ratio_torch),
        "replay_vs_numpy": quartiles(replay_numpy),
        "replay_vs_torch": quartiles(replay_torch),
        "replay_state": f"{captured.replays} replayed, fallbacks {dict(captured.fallbacks)}",
        "memory": memory,
        "first_losses": first_losses,
    }


def print_table(results: list[dict]) -> None:
    """One row per (dtype, batch). The "best" columns divide the fastest block of each
    implementation: on a machine shared with other work they are steadier than medians."""
    header = (
        f"{'dtype':8} {'batch':>5} | {'numpy us':>9} {'whylab us':>10} {'torch us':>9} | "
        f"{'whylab/numpy  q1 [med] q3':>27} | {'whylab/torch  q1 [med] q3':>27} | "
        f"{'peak MiB np':>11} {'wl':>7} {'wl/np':>6} | {'best w/n':>8} {'w/t':>5}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        med = r["median_us"]
        vn, vt = r["vs_numpy"], r["vs_torch"]
        mem_np, mem_wl = r["memory"]["numpy"], r["memory"]["whylab"]
        print(
            f"{r['dtype']:8} {r['batch']:>5} | {med['numpy']:>9.1f} {med['whylab']:>10.1f} "
            f"{med['torch']:>9.1f} | {vn[0]:>8.2f} [{vn[1]:>5.2f}] {vn[2]:>6.2f}    | "
            f"{vt[0]:>8.2f} [{vt[1]:>5.2f}] {vt[2]:>6.2f}    | "
            f"{mem_np / 2**20:>11.2f} {mem_wl / 2**20:>7.2f} {mem_wl / mem_np:>6.2f} | "
            f"{r['best_ratios'][0]:>8.2f} {r['best_ratios'][1]:>5.2f}"
        )
    print("\nreplay (whylab.capture): the same step recorded once, then replayed")
    header = (
        f"{'dtype':8} {'batch':>5} | {'replay us':>9} | {'replay/numpy q1 [med] q3':>27} | "
        f"{'replay/torch q1 [med] q3':>27} | calls"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        rn, rt = r["replay_vs_numpy"], r["replay_vs_torch"]
        print(
            f"{r['dtype']:8} {r['batch']:>5} | {r['median_us']['replay']:>9.1f} | "
            f"{rn[0]:>8.2f} [{rn[1]:>5.2f}] {rn[2]:>6.2f}    | "
            f"{rt[0]:>8.2f} [{rt[1]:>5.2f}] {rt[2]:>6.2f}    | {r['replay_state']}"
        )


def check_same_loss(results: list[dict]) -> None:
    """All three compute the same first loss; a mismatch means the comparison is void."""
    for r in results:
        losses = r["first_losses"]
        tolerance = 1e-9 if r["dtype"] == "float64" else 1e-4
        spread = max(losses.values()) - min(losses.values())
        status = "ok" if spread <= tolerance * max(1.0, abs(losses["numpy"])) else "MISMATCH"
        print(f"first-step loss {r['dtype']} batch {r['batch']}: {losses} -> {status}")


def profile_whylab(batch: int, dtype, steps: int = 200) -> None:
    weights = make_initial_weights(dtype)
    inputs, labels = make_batch(batch, dtype)
    step = FrameworkStep(whylab, weights, inputs, labels)
    for _ in range(10):
        step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        step()
    profiler.disable()
    print(f"cProfile of {steps} whylab steps, batch {batch}, {np.dtype(dtype).name}:")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, shorter blocks")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16, 256, 4096])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--profile", type=int, metavar="BATCH", default=None)
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads (default: all)")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by this thread's CPU time (time.thread_time), not wall time: on a machine "
        "shared with other work it leaves out the time others hold the core; valid with "
        "--threads 1, where every library computes in the calling thread",
    )
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    if args.profile is not None:
        for name in args.dtypes:
            profile_whylab(args.profile, np.dtype(name))
        return

    rounds = args.rounds or (5 if args.quick else 15)
    block_s = 0.015 if args.quick else 0.03
    warmup = 3 if args.quick else 10
    print(
        f"784-256-10 MLP training step; numpy {np.__version__}, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads); {rounds} interleaved rounds, "
        f"{'thread CPU' if args.cpu_time else 'wall'} time"
    )
    clock = time.thread_time if args.cpu_time else time.perf_counter
    results = []
    for name in args.dtypes:
        for batch in args.batches:
            results.append(bench_one(batch, np.dtype(name), rounds, block_s, warmup, clock))
    print_table(results)
    check_same_loss(results)


if __name__ == "__main__":
    main()
