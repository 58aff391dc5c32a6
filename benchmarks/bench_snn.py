"""Training steps per second of the Yin-Yang SNN: whylab vs PyTorch eager vs snnTorch.

One step of the network the spiking-neurons topic trains (latency-coded inputs, a
hidden layer of LIF neurons, leaky read-outs, scores = max over time): forward
through all time steps, cross-entropy, BPTT, an Adam update. Three implementations,
the same network and the same batch:

* ``whylab``   - :class:`whylab.snn.SpikingClassifier` on whylab's engine;
* ``torch``    - the same equations written with torch ops and a torch.autograd.Function
  for the surrogate (PyTorch eager, one thread);
* ``snntorch`` - the hidden layer as ``snntorch.Leaky`` with snnTorch's sigmoid surrogate
  (skipped when snnTorch is not installed).

BPTT over many steps of small tensors is exactly where an engine's per-op cost shows:
each time step is a handful of ops on (batch, hidden) tensors. Timing protocol: warm-up,
autorange to a budget, interleaved rounds with a pause between switches
(:func:`whylab.bench.compare`); the table shows median [q1, q3] seconds per step and the
per-round ratios against torch. Before timing, the three are run once from the same
weights and their losses compared, so the comparison is of one computation.

Run from the repository root:  ``PYTHONPATH=. python benchmarks/bench_snn.py [--quick]``
"""

from __future__ import annotations

import argparse
import math
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import whylab  # noqa: E402
from whylab.bench import compare, format_table  # noqa: E402
from whylab.nn import functional as F  # noqa: E402
from whylab.snn import (  # noqa: E402
    SpikingClassifier,
    latency_code,
    spike_function,
    spike_raster,
    yin_yang,
)

STEPS, DT, SLOPE = 24, 1.0, 5.0
BETA_HIDDEN, BETA_OUT = math.exp(-DT / 10.0), math.exp(-DT / 20.0)


def batch_of(size: int, seed: int = 0):
    points, labels = yin_yang(size, seed)
    raster = spike_raster(latency_code(points, 0.0, STEPS - 6.0, 0.0), STEPS, DT)
    return raster.astype(np.float32), labels


def whylab_step(hidden: int, raster, labels):
    whylab.manual_seed(0)
    model = SpikingClassifier(5, hidden, 3, beta_hidden=BETA_HIDDEN, beta_out=BETA_OUT,
                              spike=spike_function("sigmoid", SLOPE))
    optimizer = whylab.optim.Adam(model.parameters(), lr=1e-3)
    x, y = whylab.tensor(raster), whylab.tensor(labels)
    weights = [model.fc_in.weight.detach().numpy().copy(), model.fc_in.bias.detach().numpy().copy(),
               model.fc_out.weight.detach().numpy().copy()]

    def step():
        scores, _ = model(x)
        loss = F.cross_entropy(scores, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(loss.item())

    return step, weights


def torch_steps(hidden: int, raster, labels, weights):
    import torch

    torch.set_num_threads(1)

    class Spike(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x > 0).to(x.dtype)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            s = torch.sigmoid(SLOPE * x)
            return grad * SLOPE * s * (1 - s)

    t = torch.arange(STEPS)
    lag = t[:, None] - t[None, :]
    kernel = torch.where(lag >= 0, BETA_OUT ** lag.clamp(min=0).float(), torch.tensor(0.0))
    x, y = torch.tensor(raster), torch.tensor(labels)

    def make(use_snntorch: bool):
        w_in = torch.tensor(weights[0], requires_grad=True)
        b_in = torch.tensor(weights[1], requires_grad=True)
        w_out = torch.tensor(weights[2], requires_grad=True)
        optimizer = torch.optim.Adam([w_in, b_in, w_out], lr=1e-3)
        if use_snntorch:
            import snntorch
            from snntorch import surrogate

            lif = snntorch.Leaky(beta=BETA_HIDDEN, spike_grad=surrogate.sigmoid(SLOPE))

        def step():
            batch = x.shape[1]
            currents = (x.reshape(STEPS * batch, 5) @ w_in.T + b_in).reshape(STEPS, batch, -1)
            mem = torch.zeros(batch, hidden)
            spikes = []
            for k in range(STEPS):
                if use_snntorch:
                    spk, mem = lif(currents[k], mem)
                else:
                    fired = (mem.detach() > 1.0).to(mem.dtype)
                    mem = BETA_HIDDEN * mem + currents[k] - fired
                    spk = Spike.apply(mem - 1.0)
                spikes.append(spk)
            drive = (torch.stack(spikes).reshape(STEPS * batch, -1) @ w_out.T).reshape(STEPS, -1)
            scores = (kernel @ drive).reshape(STEPS, batch, -1).max(dim=0).values
            loss = torch.nn.functional.cross_entropy(scores, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return float(loss.item())

        return step

    steps = {"torch": make(False)}
    try:
        import snntorch  # noqa: F401

        steps["snntorch"] = make(True)
    except ImportError:
        pass
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, one size")
    args = parser.parse_args()
    sizes = [(32, 100)] if args.quick else [(32, 100), (8, 30), (128, 100)]
    rows = []
    for batch, hidden in sizes:
        raster, labels = batch_of(batch)
        ours, weights = whylab_step(hidden, raster, labels)
        candidates = {"whylab": ours, **torch_steps(hidden, raster, labels, weights)}
        first = {name: step() for name, step in candidates.items()}  # same weights, one step
        spread = max(first.values()) - min(first.values())
        if spread > 1e-4 * max(abs(v) for v in first.values()):
            raise SystemExit(f"the implementations disagree on the first loss: {first}")
        result = compare(candidates, rounds=5 if args.quick else 9, budget_s=0.3, pause_s=0.1)
        for name in candidates:
            q = result.quartiles(name)
            ratio = result.ratio_quartiles(name, "torch")
            rows.append([f"{batch}x{hidden}", name, f"{1 / q.median:.1f}",
                         f"{q.median * 1e3:.1f} [{q.q1 * 1e3:.1f}, {q.q3 * 1e3:.1f}]",
                         ratio.format(".2f")])
    print(format_table(["batch x hidden", "implementation", "steps/s", "ms/step [q1, q3]",
                        "ratio to torch [q1, q3]"], rows))


if __name__ == "__main__":
    main()
