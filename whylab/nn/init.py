"""Weight initialisation, with torch.nn.init's names, fan computation and gains.

Why initialisation matters: if each layer multiplies the variance of its signal by a factor,
depth turns that factor into an exponential. The schemes here choose the weights' spread
from the layer's *fan* (how many inputs feed one output, or how many outputs one input feeds)
so that the variance stays about constant through the network:

* Xavier/Glorot (2010): ``std = gain * sqrt(2 / (fan_in + fan_out))`` - balances the forward
  and backward pass, derived for roughly linear activations such as tanh;
* Kaiming/He (2015): ``std = gain / sqrt(fan)`` with ``gain = sqrt(2)`` for ReLU - ReLU zeroes
  half the signal, so the weights must make up a factor of two.

A uniform distribution on ``[-b, b]`` has standard deviation ``b / sqrt(3)``; the ``*_uniform_``
variants therefore use ``b = sqrt(3) * std``.

For a weight of shape ``(out, in, k1, k2, ...)`` (a linear or convolution layer),
``fan_in = in * k1 * k2 * ...`` and ``fan_out = out * k1 * k2 * ...``.

All functions fill the given tensor in place (under ``no_grad``) and return it. Random
draws come from whylab's generator (``whylab.manual_seed``), so values differ from torch's
for the same seed; the distributions are the same.
"""

from __future__ import annotations

import math
import warnings

import whylab

_LINEAR_LIKE = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """Return the recommended gain for a nonlinearity, as ``torch.nn.init.calculate_gain``.

    ``linear``/``conv*``/``sigmoid`` -> 1, ``tanh`` -> 5/3, ``relu`` -> sqrt(2),
    ``leaky_relu`` -> sqrt(2 / (1 + slope**2)) (slope ``param``, default 0.01),
    ``selu`` -> 3/4.
    """
    if nonlinearity in _LINEAR_LIKE or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor) -> tuple[int, int]:
    """Return ``(fan_in, fan_out)`` of a weight shaped ``(out, in, *kernel)``."""
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {shape})"
        )
    receptive_field_size = math.prod(shape[2:])
    fan_in = shape[1] * receptive_field_size
    fan_out = shape[0] * receptive_field_size
    return fan_in, fan_out


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor) -> bool:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill ``tensor`` with draws from U(a, b)."""
    if a > b:
        raise ValueError(f"uniform_ expects a <= b, but got a={a}, b={b}")
    draws = whylab.rand(tuple(tensor.shape), generator=generator, dtype=tensor.dtype)
    with whylab.no_grad():
        return tensor.copy_(draws * (b - a) + a)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill ``tensor`` with draws from N(mean, std**2)."""
    if std < 0:
        raise ValueError(f"normal_ expects std >= 0.0, but found std {std}")
    draws = whylab.randn(tuple(tensor.shape), generator=generator, dtype=tensor.dtype)
    with whylab.no_grad():
        return tensor.copy_(draws * std + mean)


def constant_(tensor, val: float):
    """Fill ``tensor`` with the value ``val``."""
    with whylab.no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    """Fill ``tensor`` with zeros."""
    with whylab.no_grad():
        return tensor.zero_()


def ones_(tensor):
    """Fill ``tensor`` with ones."""
    with whylab.no_grad():
        return tensor.fill_(1.0)


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot uniform: U(-b, b) with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator=generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """Glorot normal: N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator=generator)


def kaiming_uniform_(
    tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
):
    """He uniform: U(-b, b) with ``b = sqrt(3) * gain / sqrt(fan)``.

    Args:
        a: negative slope of the leaky ReLU that follows (only used by ``leaky_relu``).
        mode: ``"fan_in"`` keeps the forward pass's variance, ``"fan_out"`` the backward's.
        nonlinearity: the activation after this layer, for :func:`calculate_gain`.
    """
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator=generator)


def kaiming_normal_(
    tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
):
    """He normal: N(0, std**2) with ``std = gain / sqrt(fan)`` (arguments as kaiming_uniform_)."""
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator=generator)


def eye_(tensor):
    """Fill a 2-D tensor with the identity (ones on the diagonal, as many as fit)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with whylab.no_grad():
        return tensor.copy_(whylab.eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups: int = 1):
    """Fill a 3-, 4- or 5-D convolution weight so the convolution is the identity map.

    Each of the ``groups`` blocks of output channels copies the matching input channels
    through the kernel's centre tap.
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    centre = tuple(size // 2 for size in tensor.shape[2:])
    with whylab.no_grad():
        tensor.zero_()
        for group in range(groups):
            for channel in range(min(out_per_group, tensor.shape[1])):
                tensor[(group * out_per_group + channel, channel) + centre] = 1.0
    return tensor


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std²) conditioned on ``[a, b]``, by the inverse-CDF method torch uses."""
    from scipy.special import erfinv

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    low, high = cdf((a - mean) / std), cdf((b - mean) / std)
    draws = whylab.rand(tuple(tensor.shape), generator=generator, dtype=whylab.float64)
    uniform = draws.numpy() * (2 * high - 2 * low) + (2 * low - 1)
    values = erfinv(uniform) * (std * math.sqrt(2.0)) + mean
    with whylab.no_grad():
        return tensor.copy_(whylab.from_numpy(values.clip(a, b)))


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix from the QR factorisation of a normal draw (Saxe et al.).

    Tensors of more dimensions are flattened to (size(0), rest) first.
    """
    import numpy as np

    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = whylab.randn(rows, cols, generator=generator, dtype=whylab.float64).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with whylab.no_grad():
        return tensor.copy_(whylab.from_numpy(np.ascontiguousarray(q * gain)).reshape(tensor.shape))
