"""Activation functions of ``nn.functional`` (beyond relu and the softmaxes), composed of
differentiable ops.

Each is written so that its gradient equals torch's everywhere, kinks included:
torch's backward kernels pick one side at a kink (``hardtanh`` has gradient 0 at
its corners, ``leaky_relu`` the slope at 0, ``hardswish`` the outer pieces at
±3), and ``where`` with the same comparison picks the same side. ``softplus``
is computed as ``m + log(exp(-m) + exp(x - m))`` with ``m = max(x, 0)``: it
never overflows and, unlike the ``log1p(exp(-|x|))`` form, its derivative at 0
is sigmoid(0) = 1/2.
"""

from __future__ import annotations

import warnings

import whylab


def stable_softplus(x):
    """``log(1 + exp(x))`` without overflow, with the exact derivative ``sigmoid(x)``."""
    m = x.relu()
    return m + ((-m).exp() + (x - m).exp()).log()


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    scaled = input * beta
    smooth = stable_softplus(scaled) if beta == 1 else stable_softplus(scaled) / beta
    return whylab.where(scaled > threshold, input, smooth)


def gelu(input, approximate: str = "none"):
    """``x Φ(x)``; ``approximate="tanh"`` uses the tanh formula of Hendrycks and Gimpel.

    The ``gelu`` operator, as in torch (node ``GeluBackward0``)."""
    return whylab.ops.gelu(input, approximate)


def silu(input, inplace: bool = False):
    """``x sigmoid(x)`` (also called swish)."""
    return input * input.sigmoid()


def mish(input, inplace: bool = False):
    """``x tanh(softplus(x))``."""
    return input * stable_softplus(input).tanh()


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` where ``x > 0``, else ``negative_slope x``."""
    return whylab.where(input > 0, input, input * negative_slope)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``x`` where ``x > 0``, else ``alpha (exp(x) - 1)``."""
    return whylab.where(input > 0, input, (input.exp() - 1) * alpha)


def selu(input, inplace: bool = False):
    """``scale * elu(x, alpha)`` with Klambauer et al.'s constants."""
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return elu(input, alpha) * scale


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``."""
    return whylab.where(input > 0, input, ((input / alpha).exp() - 1) * alpha)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``x`` clamped to ``[min_val, max_val]``; gradient 0 outside and at the corners."""
    if min_val > max_val:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    upper = whylab.where(input >= max_val, max_val, input)
    return whylab.where(input <= min_val, min_val, upper)


def relu6(input, inplace: bool = False):
    """``min(max(x, 0), 6)`` (torch computes it as ``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0)


def hardsigmoid(input, inplace: bool = False):
    """``x / 6 + 1/2`` between -3 and 3, 0 below, 1 above."""
    outside = whylab.where(input <= -3, 0.0, 1.0).to(input.dtype)
    return whylab.where((input > -3) & (input < 3), input / 6 + 0.5, outside)


def hardswish(input, inplace: bool = False):
    """``x (x + 3) / 6`` strictly between -3 and 3, 0 below, ``x`` above (torch's gradient
    at -3 is 0 and at 3 is 1: the outer pieces own the corners)."""
    middle = input * (input + 3) / 6
    return whylab.where(input <= -3, 0.0, whylab.where(input < 3, middle, input))


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably."""
    return -stable_softplus(-input)


def tanhshrink(input):
    """``x - tanh(x)``."""
    return input - input.tanh()


def prelu(input, weight):
    """``x`` where ``x > 0``, else ``weight x``, with one weight or one per channel (dim 1)."""
    if weight.numel() != 1:
        if input.ndim < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(
                f"prelu: mismatch of parameter numbers and input channel size. Found "
                f"parameter numbers = {weight.numel()} and channel size = "
                f"{input.shape[1] if input.ndim > 1 else 1}."
            )
        shape = [1] * input.ndim
        shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return whylab.where(input > 0, input, input * weight)


def softmin(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):
    """``softmax(-x)`` along ``dim`` (without one, torch's implicit choice, with its warning)."""
    if dim is None:
        warnings.warn(
            "Implicit dimension choice for softmin has been deprecated. "
            "Change the call to include dim=X as an argument.",
            UserWarning,
            stacklevel=_stacklevel,
        )
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return (-input).softmax(dim, dtype)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12):
    """``x / max(||x||_p, eps)`` along ``dim``."""
    norm = input.abs().pow(p).sum(dim, keepdim=True).pow(1.0 / p)
    return input / norm.clamp(min=eps)
