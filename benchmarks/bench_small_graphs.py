"""Small graphs, where the engine's per-call cost is everything: whylab vs PyTorch eager.

Two workloads, each written once and run on ``whylab`` and on ``torch`` (one thread):

* ``tiny chain`` - five times ``x = relu(x @ w_i)`` on 4x4 tensors (five weight leaves
  that require grad), ``sum``, ``backward``: 12 recorded ops, 5 leaves;
* ``BPTT LIF`` - one training step of a small recurrent spiking network trained by
  backpropagation through time: 4 inputs, 100 leaky integrate-and-fire neurons
  (membrane ``v = beta * v + x_t @ W1.T - spike * threshold``, reset by
  subtraction), 3 leaky non-spiking readout neurons, 100 time steps, a batch of 16,
  cross-entropy on the readout's final potential, then SGD. The spike is a Heaviside
  step whose backward is a surrogate (the fast sigmoid's derivative
  ``1 / (1 + k |v - threshold|)^2``, Zenke & Ganguli 2018's SuperSpike), written as
  an ``autograd.Function`` of each library (``spike_function`` below). About 1,100
  recorded ops per step, each on a 16x100 tensor or smaller.

Both libraries start from the same weights and inputs; the first loss of each must
agree, or the comparison is void. A third column, ``replay``, runs the same whylab
workload under ``whylab.capture`` (eager while it warms up and records, replayed
afterwards); its first loss must equal eager whylab's exactly. The timing protocol is
the one of bench_mlp.py: warm-up, then interleaved rounds (the order rotates) with a
pause between switches; the table shows each library's median time per step and the per-round ratios
whylab/torch and replay/torch as median [first quartile, third quartile].

Python's cyclic garbage collector is part of the cost: a BPTT step keeps about a thousand
nodes and their saved tensors alive, so collections run during the step and the oldest
generation's traverse every object of the process. The last column is the collector's time
per step of each library (``gc.callbacks``, summed over the timed rounds). ``--freeze-gc``
moves everything alive after set-up into the permanent generation (``gc.freeze()``, for
both libraries alike), which shows how much of the gap that traversal is.

Run from the repository root:
``PYTHONPATH=. python benchmarks/bench_small_graphs.py [--rounds 9] [--dtypes float64]
[--freeze-gc]``
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np
import torch

import whylab
import whylab.nn
import whylab.optim
from whylab.bench import autorange, format_time, interleaved_rounds, per_round_ratios, quartiles

torch.set_num_threads(1)

PAUSE_S = 0.1
CHAIN_LENGTH = 5
INPUTS, HIDDEN, OUTPUTS = 4, 100, 3
TIME_STEPS, BATCH = 100, 16
BETA, THRESHOLD, SURROGATE_SLOPE = 0.9, 1.0, 10.0
LEARNING_RATE = 0.05


def spike_function(fw):
    """The surrogate spike as an ``autograd.Function`` of library ``fw``: a Heaviside
    step forward, the fast sigmoid's derivative backward."""

    class SurrogateSpike(fw.autograd.Function):
        @staticmethod
        def forward(ctx, above):  # above = v - threshold
            ctx.save_for_backward(above)
            return (above > 0).to(above.dtype)

        @staticmethod
        def backward(ctx, grad):
            (above,) = ctx.saved_tensors
            return grad / (1.0 + SURROGATE_SLOPE * above.abs()) ** 2

    return SurrogateSpike


class TinyChain:
    """``x -> relu(x @ w)`` five times, ``sum``, ``backward``; gradients reset each call."""

    def __init__(self, fw, dtype, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        to = _dtype_of(fw, dtype)
        self.x = fw.from_numpy(rng.standard_normal((4, 4)).astype(dtype)).to(to)
        self.weights = [
            fw.from_numpy(rng.standard_normal((4, 4)).astype(dtype)).requires_grad_()
            for _ in range(CHAIN_LENGTH)
        ]

    def train(self):
        """One forward and backward; returns the loss tensor."""
        for w in self.weights:
            w.grad = None
        x = self.x
        for w in self.weights:
            x = (x @ w).relu()
        loss = x.sum()
        loss.backward()
        return loss

    def __call__(self) -> float:
        return self.train().item()


class LifStep:
    """One BPTT training step of the 4-100-3 LIF network (see the module docstring)."""

    def __init__(self, fw, dtype, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.fw = fw
        self.spike = spike_function(fw).apply
        self.hidden = fw.nn.Linear(INPUTS, HIDDEN, bias=False)
        self.readout = fw.nn.Linear(HIDDEN, OUTPUTS, bias=False)
        w1 = rng.uniform(-1, 1, (HIDDEN, INPUTS)).astype(dtype)
        w2 = rng.uniform(-0.3, 0.3, (OUTPUTS, HIDDEN)).astype(dtype)
        to = _dtype_of(fw, dtype)
        self.hidden.to(to)
        self.readout.to(to)
        self.hidden.load_state_dict({"weight": fw.from_numpy(w1)})
        self.readout.load_state_dict({"weight": fw.from_numpy(w2)})
        params = list(self.hidden.parameters()) + list(self.readout.parameters())
        self.optimizer = fw.optim.SGD(params, lr=LEARNING_RATE)
        inputs = rng.uniform(0, 2.5, (TIME_STEPS, BATCH, INPUTS)).astype(dtype)
        self.inputs = [fw.from_numpy(frame.copy()) for frame in inputs]
        self.labels = fw.from_numpy(rng.integers(0, OUTPUTS, BATCH))
        self.zeros_hidden = fw.from_numpy(np.zeros((BATCH, HIDDEN), dtype=dtype))
        self.zeros_out = fw.from_numpy(np.zeros((BATCH, OUTPUTS), dtype=dtype))

    def train(self):
        """One BPTT step over the stored inputs; returns the loss tensor."""
        self.optimizer.zero_grad(set_to_none=True)
        v, spikes, v_out = self.zeros_hidden, self.zeros_hidden, self.zeros_out
        for frame in self.inputs:
            v = BETA * v + self.hidden(frame) - spikes * THRESHOLD
            spikes = self.spike(v - THRESHOLD)
            v_out = BETA * v_out + self.readout(spikes)
        loss = self.fw.nn.functional.cross_entropy(v_out, self.labels)
        loss.backward()
        self.optimizer.step()
        return loss

    def __call__(self) -> float:
        return self.train().item()


class Replayed:
    """A whylab workload's ``train`` under ``whylab.capture``: eager on its first calls
    (warm-up and recording), replayed afterwards."""

    def __init__(self, workload) -> None:
        self.captured = whylab.capture.capture(workload.train)

    def __call__(self) -> float:
        return self.captured().item()


def _dtype_of(fw, numpy_dtype):
    return fw.float64 if np.dtype(numpy_dtype) == np.float64 else fw.float32


class CollectorTime:
    """Seconds the cyclic garbage collector ran, per label of whoever was running."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.current = None
        self.seconds: dict[str, float] = {}
        self._started = 0.0

    def turn(self, label: str) -> None:
        self.current = label

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = self.clock()
        elif self.current is not None:
            elapsed = self.clock() - self._started
            self.seconds[self.current] = self.seconds.get(self.current, 0.0) + elapsed


def compare(name: str, make, dtype, rounds: int, block_s: float, freeze: bool, clock) -> None:
    steps = {
        "whylab": make(whylab, dtype),
        "replay": Replayed(make(whylab, dtype)),
        "torch": make(torch, dtype),
    }
    first = {label: step() for label, step in steps.items()}
    tolerance = 1e-9 if np.dtype(dtype) == np.float64 else 1e-4
    agree = abs(first["whylab"] - first["torch"]) <= tolerance * max(1.0, abs(first["torch"]))
    agree = agree and first["replay"] == first["whylab"]  # the same step, to the last bit
    for step in steps.values():
        for _ in range(3):
            step()
        time.sleep(PAUSE_S)
    counts = {
        label: autorange(step, block_s, max_calls=1000, clock=clock)[0]
        for label, step in steps.items()
    }
    if freeze:
        gc.freeze()
    collector = CollectorTime(clock)
    gc.callbacks.append(collector)
    try:
        per_call = interleaved_rounds(
            steps, rounds, counts, pause_s=PAUSE_S, on_turn=collector.turn, clock=clock
        )
    finally:
        gc.callbacks.remove(collector)
        gc.unfreeze()
    gc_per_step = {
        label: format_time(collector.seconds.get(label, 0.0) / (rounds * counts[label]))
        for label in steps
    }
    ratio = quartiles(per_round_ratios(per_call["whylab"], per_call["torch"]))
    replay_ratio = quartiles(per_round_ratios(per_call["replay"], per_call["torch"]))
    medians = {label: format_time(quartiles(t).median) for label, t in per_call.items()}
    captured = steps["replay"].captured
    replayed = "replayed" if captured.refusal is None else f"refused: {captured.refusal}"
    print(
        f"{name:12} {np.dtype(dtype).name:8} {medians['whylab']:>11} {medians['replay']:>11} "
        f"{medians['torch']:>11}   {ratio.q1:6.2f} [{ratio.median:5.2f}] {ratio.q3:5.2f}   "
        f"{replay_ratio.q1:6.2f} [{replay_ratio.median:5.2f}] {replay_ratio.q3:5.2f}   "
        f"{gc_per_step['whylab']:>10} {gc_per_step['torch']:>10}   "
        f"first loss {first['whylab']:.6g} / {first['torch']:.6g} {'ok' if agree else 'MISMATCH'}"
        f" ({replayed})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument("--only", choices=["chain", "lif"], default=None)
    parser.add_argument("--freeze-gc", action="store_true", help="gc.freeze() after set-up")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by this thread's CPU time (time.thread_time): on a shared machine it leaves "
        "out the time others hold the core (both libraries compute in this thread)",
    )
    args = parser.parse_args()
    print(
        f"numpy {np.__version__}, torch {torch.__version__} ({torch.get_num_threads()} thread), "
        f"{args.rounds} interleaved rounds{', gc frozen after set-up' if args.freeze_gc else ''}, "
        f"{'thread CPU' if args.cpu_time else 'wall'} time"
    )
    clock = time.thread_time if args.cpu_time else time.perf_counter
    print(
        f"{'workload':12} {'dtype':8} {'whylab':>11} {'replay':>11} {'torch':>11}   "
        f"whylab/torch q1 [med] q3   replay/torch q1 [med] q3   {'gc whylab':>10} {'gc torch':>10}"
    )
    for dtype in args.dtypes:
        if args.only in (None, "chain"):
            compare(
                "tiny chain", TinyChain, np.dtype(dtype), args.rounds, 0.03, args.freeze_gc, clock
            )
        if args.only in (None, "lif"):
            compare("BPTT LIF", LifStep, np.dtype(dtype), args.rounds, 0.2, args.freeze_gc, clock)


if __name__ == "__main__":
    main()
