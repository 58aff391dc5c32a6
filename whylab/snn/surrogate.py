"""Surrogate spike functions: a Heaviside step forward, a smooth slope backward.

A spike is s = H(V − V_th): its derivative is zero everywhere except at the
threshold, where it is undefined, so backpropagation through it carries no signal.
A surrogate gradient keeps the step in the forward pass and, in the backward pass
only, uses the derivative of a smooth stand-in of slope ``slope`` (Neftci, Mostafa
& Zenke 2019). Each is a :class:`whylab.autograd.Function`, so a spiking network
is trained by BPTT through whylab's own engine and graph:

* ``fast_sigmoid`` (SuperSpike, Zenke & Ganguli 2018): ∂s/∂x = 1 / (slope·|x| + 1)²;
* ``sigmoid``: ∂s/∂x = slope·σ(slope·x)·(1 − σ(slope·x));
* ``atan`` (Fang et al. 2021): ∂s/∂x = (slope/2) / (1 + (π/2 · slope · x)²).

These are the formulas and the parameter names (slope; alpha for atan) of
snnTorch 1.0's ``surrogate`` module, against which the tests compare them.
The step is H(x) = 1 for x > 0 and 0 otherwise, as there.
"""

from __future__ import annotations

import math

import numpy as np

import whylab
from whylab.autograd import Function
from whylab.snn import _validate


def _step(x):
    return (x > 0).to(x.dtype)


class _HeavisideSpike(Function):
    """H(x) forward, the same for every surrogate; each subclass gives its own backward."""

    @staticmethod
    def forward(ctx, x, slope):
        ctx.save_for_backward(x)
        ctx.slope = slope
        return _step(x)


class FastSigmoidSpike(_HeavisideSpike):
    """H(x) forward; 1/(slope·|x| + 1)² backward (SuperSpike)."""

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (ctx.slope * x.abs() + 1.0) ** 2, None


class SigmoidSpike(_HeavisideSpike):
    """H(x) forward; the logistic function's derivative at slope·x, times slope, backward."""

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = whylab.sigmoid(ctx.slope * x)
        return grad * ctx.slope * s * (1.0 - s), None


class ATanSpike(_HeavisideSpike):
    """H(x) forward; (slope/2)/(1 + (π/2·slope·x)²) backward."""

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (ctx.slope / 2) / (1.0 + (math.pi / 2 * ctx.slope * x) ** 2), None


SURROGATES = {"fast_sigmoid": FastSigmoidSpike, "sigmoid": SigmoidSpike, "atan": ATanSpike}
DEFAULT_SLOPES = {"fast_sigmoid": 25.0, "sigmoid": 25.0, "atan": 2.0}  # snnTorch's defaults


def spike_function(name: str = "fast_sigmoid", slope: float | None = None):
    """``x -> spikes`` with the named surrogate gradient; ``slope`` defaults as in snnTorch."""
    if name not in SURROGATES:
        raise ValueError(f"spike_function: name must be one of {tuple(SURROGATES)}, got {name!r}")
    slope = DEFAULT_SLOPES[name] if slope is None else _validate.positive(
        "spike_function", "slope", slope)
    fn = SURROGATES[name]

    def spike(x):
        return fn.apply(x, slope)

    spike.surrogate = name
    spike.slope = slope
    return spike


def surrogate_derivative(name: str, slope: float, x) -> np.ndarray:
    """The surrogate's ∂s/∂x at ``x``, in NumPy (what its backward multiplies by)."""
    x = np.asarray(x, dtype=np.float64)
    if name == "fast_sigmoid":
        return 1.0 / (slope * np.abs(x) + 1.0) ** 2
    if name == "sigmoid":
        s = 1.0 / (1.0 + np.exp(-slope * x))
        return slope * s * (1.0 - s)
    if name == "atan":
        return (slope / 2) / (1.0 + (math.pi / 2 * slope * x) ** 2)
    raise ValueError(f"surrogate_derivative: unknown surrogate {name!r}")

