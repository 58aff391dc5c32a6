"""Spiking layers on whylab's engine, trained by backpropagation through time (BPTT).

On a grid of step dt a LIF membrane decays by β = e^(−dt/τ_m) per step. One step
of :class:`Leaky`, with the conventions of snnTorch 1.0's ``snntorch.Leaky`` (which
the tests compare it with, trace by trace and gradient by gradient):

    r_t   = H(U_{t−1} − ϑ)                     (the previous step's spike, detached)
    U_t   = β·U_{t−1} + I_t − r_t·ϑ            (reset by subtraction), or
    U_t   = β·(1 − r_t)·U_{t−1} + I_t          (reset to zero)
    S_t   = spike(U_t − ϑ)                     (Heaviside forward, surrogate backward)

Every operation is a whylab op, so ``loss.backward()`` runs BPTT on whylab's own
graph: the gradient reaches step t through U_{t+1} = β·U_t + ... (the leak) and
through the spikes the surrogate lets through.

:class:`SpikingClassifier` is the Yin-Yang network: latency-coded input spikes
into a hidden layer of :class:`Leaky` neurons, whose spikes drive non-spiking leaky
read-out neurons; the class scores are the read-outs' maximal membrane potentials
over time (as in Cramer et al. 2022's surrogate-gradient networks).
"""

from __future__ import annotations

import math

import numpy as np

import whylab
from whylab import nn
from whylab.snn import _validate
from whylab.snn.surrogate import spike_function


def decay_factor(dt: float, tau: float) -> float:
    """β = e^(−dt/τ), the per-step leak of a membrane with time constant ``tau``."""
    tau = _validate.positive("decay_factor", "tau", tau)
    dt = _validate.time_step("decay_factor", dt, tau)
    return math.exp(-dt / tau)


def _check_beta(where: str, beta: float) -> float:
    beta = float(beta)
    if not 0.0 < beta < 1.0:
        raise ValueError(f"{where}: beta must lie in (0, 1) (a decay per step; got {beta!r})")
    return beta


class Leaky(nn.Module):
    """One step of a LIF layer, ``(current, mem) -> (spikes, mem)``, as snnTorch's Leaky."""

    def __init__(self, beta: float, threshold: float = 1.0, reset: str = "subtract",
                 spike=None):
        super().__init__()
        self.beta = _check_beta("Leaky", beta)
        self.threshold = _validate.positive("Leaky", "threshold", threshold)
        if reset not in ("subtract", "zero"):
            raise ValueError(f"Leaky: reset must be 'subtract' or 'zero', got {reset!r}")
        self.reset = reset
        self.spike = spike_function() if spike is None else spike

    def forward(self, current, mem):
        fired = (mem.detach() > self.threshold).to(mem.dtype)
        if self.reset == "subtract":
            mem = self.beta * mem + current - fired * self.threshold
        else:
            mem = self.beta * (1.0 - fired) * mem + current
        return self.spike(mem - self.threshold), mem


def decay_kernel(steps: int, beta: float, dtype=None) -> whylab.Tensor:
    """K with K[t, s] = β^(t−s) for s ≤ t, else 0: U = K @ I runs U_t = β·U_{t−1} + I_t."""
    t = np.arange(steps)
    lag = t[:, None] - t[None, :]
    kernel = np.where(lag >= 0, float(beta) ** np.maximum(lag, 0), 0.0)
    return whylab.tensor(kernel, dtype=dtype or whylab.get_default_dtype())


class SpikingClassifier(nn.Module):
    """Input spikes -> Leaky hidden layer -> leaky read-outs; scores = max over time.

    ``forward(raster)`` takes spikes of shape (steps, batch, inputs) and returns
    (scores (batch, outputs), hidden spikes (steps, batch, hidden)).
    """

    def __init__(self, inputs: int, hidden: int, outputs: int, *, beta_hidden: float,
                 beta_out: float, threshold: float = 1.0, reset: str = "subtract",
                 spike=None, input_gain: float = 1.0, dtype=None):
        super().__init__()
        for name, value in (("inputs", inputs), ("hidden", hidden), ("outputs", outputs)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"SpikingClassifier: {name} must be an int >= 1 (got {value!r})")
        self.fc_in = nn.Linear(inputs, hidden, dtype=dtype)
        self.fc_out = nn.Linear(hidden, outputs, bias=False, dtype=dtype)
        with whylab.no_grad():
            self.fc_in.weight.mul_(input_gain)
        self.lif = Leaky(beta_hidden, threshold, reset, spike)
        self.beta_out = _check_beta("SpikingClassifier", beta_out)
        self.inputs = inputs

    def forward(self, raster):
        if raster.dim() != 3 or raster.shape[2] != self.inputs:
            raise ValueError(f"SpikingClassifier: raster must have shape (steps, batch, "
                             f"{self.inputs}), got {tuple(raster.shape)}")
        steps, batch, _ = raster.shape
        # One product for all steps: the input layer has no state of its own.
        currents = self.fc_in(raster.reshape(steps * batch, self.inputs))
        currents = currents.reshape(steps, batch, -1)
        mem = whylab.zeros(batch, currents.shape[2], dtype=currents.dtype)
        spikes = []
        for step in range(steps):
            spk, mem = self.lif(currents[step], mem)
            spikes.append(spk)
        hidden = whylab.stack(spikes)
        drive = self.fc_out(hidden.reshape(steps * batch, -1)).reshape(steps, -1)
        kernel = decay_kernel(steps, self.beta_out, drive.dtype)
        readout = (kernel @ drive).reshape(steps, batch, -1)
        return readout.max(dim=0).values, hidden
