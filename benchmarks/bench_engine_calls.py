"""Python function calls per operator (forward, backward) and per MLP training step.

The engine's cost on small tensors is the number of Python calls on the path of one
operator, so this benchmark counts them (``sys.setprofile`` "call" events, see
``whylab/bench/calls.py``): the same numbers on every machine and at every load.
``tests/autograd/test_call_budget.py`` holds the counts below a budget per family, so
a change that lengthens the hot path fails there; this script prints the counts and
the functions called most often, to find what to cut next.

Families (4x4 float64 tensors; ``x`` and ``w`` are leaves that require grad):

* forward: one call of the op with grad recording on (``x + w``, ``x.tanh()`` ...);
* backward: ``out.backward(g)`` for that op's output: the engine's pass, the op's
  backward node and AccumulateGrad for each leaf;
* ``no_grad``: the op without recording (what an optimiser's update costs);
* tracked: the objects tracked by Python's cyclic garbage collector that the
  recorded forward's output keeps alive (``tracked_objects_kept``: its node, edges,
  saved tensors, the leaves' AccumulateGrad nodes ...), which decide how often a
  long graph triggers full collections;
* the training step: bench_mlp.py's 784-256-10 MLP step at batch 16 (forward,
  cross_entropy, backward, SGD), warmed up first; then the same step replayed by
  ``whylab.capture`` (its kernel calls only).

Run from the repository root:  ``PYTHONPATH=. python benchmarks/bench_engine_calls.py
[--top 15]``
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import whylab
from whylab.bench.calls import count_calls, tracked_objects_kept

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mlp import FrameworkStep, ReplayStep, make_batch, make_initial_weights  # noqa: E402

SHAPE = (4, 4)


def _leaves(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = whylab.from_numpy(rng.standard_normal(SHAPE)).requires_grad_()
    w = whylab.from_numpy(rng.standard_normal(SHAPE) + 2.0).requires_grad_()
    return x, w


#: One entry per op family: (name, the op applied to the leaves x and w).
FAMILIES = {
    "add (binary)": lambda x, w: x + w,
    "mul (binary)": lambda x, w: x * w,
    "tanh (unary)": lambda x, w: x.tanh(),
    "relu (unary)": lambda x, w: x.relu(),
    "sum (reduction)": lambda x, w: x.sum(),
    "mm (matmul)": lambda x, w: x @ w,
    "t (view)": lambda x, w: x.t(),
    "getitem (view)": lambda x, w: x[1],
    "log_softmax": lambda x, w: x.log_softmax(1),
}


def forward_calls(op) -> int:
    """whylab calls of one forward call of ``op`` with recording on."""
    x, w = _leaves()
    op(x, w)  # the first call may fill caches (saving plans, node classes)
    return count_calls(lambda: op(x, w)).whylab


def backward_calls(op) -> int:
    """whylab calls of ``out.backward(g)`` for the output of ``op``."""
    x, w = _leaves()
    warm = op(x, w)
    warm.backward(whylab.ones_like(warm))
    out = op(x, w)
    grad = whylab.ones_like(out)
    return count_calls(lambda: out.backward(grad)).whylab


def tracked_objects(op) -> int:
    """Objects tracked by the cyclic collector that one recorded output of ``op`` keeps alive."""
    x, w = _leaves()
    op(x, w)  # fill caches first
    return tracked_objects_kept(lambda: op(x, w))


def no_grad_calls(op) -> int:
    """whylab calls of one call of ``op`` under ``no_grad``."""
    x, w = _leaves()
    with whylab.no_grad():
        op(x, w)
        return count_calls(lambda: op(x, w)).whylab


def inplace_update_calls() -> int:
    """whylab calls of ``p.add_(g, alpha=-0.1)`` under ``no_grad`` (one SGD update)."""
    p, g = _leaves()
    with whylab.no_grad():
        p.add_(g, alpha=-0.1)
        return count_calls(lambda: p.add_(g, alpha=-0.1)).whylab


def training_step(batch: int = 16, dtype=np.float32, replay: bool = False) -> FrameworkStep:
    """bench_mlp.py's whylab training step, warmed up (and recorded, with ``replay``)."""
    weights = make_initial_weights(dtype)
    inputs, labels = make_batch(batch, dtype)
    if replay:
        step = ReplayStep(weights, inputs, labels)
    else:
        step = FrameworkStep(whylab, weights, inputs, labels)
    for _ in range(3):
        step()
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15, help="functions to list for the step")
    args = parser.parse_args()
    print(f"{'family':18} {'forward':>8} {'backward':>9} {'no_grad':>8} {'tracked':>8}")
    for name, op in FAMILIES.items():
        print(
            f"{name:18} {forward_calls(op):>8} {backward_calls(op):>9} {no_grad_calls(op):>8} "
            f"{tracked_objects(op):>8}"
        )
    print(f"{'add_ (in place)':18} {'':>8} {'':>9} {inplace_update_calls():>8}")
    for dtype in (np.float32, np.float64):
        counts = count_calls(training_step(16, dtype))
        print(
            f"\nMLP training step, batch 16, {np.dtype(dtype).name}: {counts.total} Python calls "
            f"({counts.whylab} in whylab's code)"
        )
    for label, n in counts.top(args.top):
        print(f"{n:5d}  {label}")
    for dtype in (np.float32, np.float64):
        replayed = count_calls(training_step(16, dtype, replay=True))
        print(
            f"\nthe same step replayed (whylab.capture), {np.dtype(dtype).name}: "
            f"{replayed.total} Python calls ({replayed.whylab} in whylab's code)"
        )
    for label, n in replayed.top(args.top):
        print(f"{n:5d}  {label}")


if __name__ == "__main__":
    main()
