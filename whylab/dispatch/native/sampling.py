"""Sampling: bernoulli, normal, multinomial, randperm and the in-place fills
(``uniform_``, ``normal_``, ``bernoulli_``), all composed over the rand/randn factories.

Deviation, as for every random function here: the numbers come from NumPy's PCG64
through whylab's generators, so a seed gives other values than in torch. The
results carry no gradient (torch's sampling ops are not differentiable either).
"""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.generator import default_generator
from whylab._tensor.tensor import Tensor
from whylab.dispatch.native.factory import from_numpy, rand, randn, tensor


def _numbers(generator):
    return (default_generator if generator is None else generator).numpy


def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (or ``p``) elementwise, else 0; same dtype as ``input``."""
    probabilities = input if p is None else p
    draws = rand(tuple(input.shape), generator=generator, dtype=input.dtype)
    return (draws < probabilities).to(input.dtype)


def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
):
    """Normal samples: ``normal(mean, std, size)`` with numbers, or elementwise from tensors.

    With numbers it is a factory and takes torch's factory keywords (``dtype``,
    ``device``, ``requires_grad``; ``layout`` and ``pin_memory`` only at their
    defaults); ``out=`` receives the samples in both forms.
    """
    result = _normal(mean, std, size, generator, dtype, device)
    if layout not in (None, "strided") or pin_memory:
        raise NotImplementedError(
            "torch.normal(layout=..., pin_memory=True) is not supported yet by whylab"
        )
    if out is not None:
        return out.copy_(result)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _normal(mean, std, size, generator, dtype, device):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if isinstance(std, Tensor) and (std < 0).any().item():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = tuple((mean if isinstance(mean, Tensor) else std).shape)
        if isinstance(mean, Tensor) and isinstance(std, Tensor):
            shape = tuple(np.broadcast_shapes(tuple(mean.shape), tuple(std.shape)))
        like = mean if isinstance(mean, Tensor) else std
        draws = randn(shape, generator=generator, dtype=like.dtype)
        return draws * std + mean
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    samples = randn(tuple(size), generator=generator, dtype=dtype, device=device)
    return samples * std + mean


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None):
    """Draw category indices in proportion to the (unnormalised) weights in each row."""
    weights = input.detach().numpy().astype(np.float64)
    single = weights.ndim == 1
    rows = weights.reshape(1, -1) if single else weights
    if rows.ndim != 2:
        raise RuntimeError("multinomial: prob_dist must be 1 or 2 dim")
    if (rows < 0).any() or not np.isfinite(rows).all():
        raise RuntimeError(
            "multinomial: probability tensor contains either inf, nan or element < 0"
        )
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError(
            "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"
        )
    if not replacement and num_samples > (rows > 0).sum(axis=1).min():
        raise RuntimeError(
            "multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    source = _numbers(generator)
    picks = [
        source.choice(rows.shape[1], size=num_samples, replace=replacement, p=row / row.sum())
        for row in rows
    ]
    result = np.asarray(picks, dtype=np.int64)
    return from_numpy(result[0] if single else result)


def randperm(
    n: int, *, generator=None, dtype=dtypes.int64, device=None, requires_grad=False
):
    """A random permutation of ``0 .. n-1`` (int64 by default)."""
    order = _numbers(generator).permutation(int(n))
    return tensor(order, dtype=dtypes.int64 if dtype is None else dtype, device=device)


def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
    """Fill with U(a, b) samples."""
    draws = rand(tuple(self.shape), generator=generator, dtype=self.dtype)
    return self.copy_(draws * (b - a) + a)


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    """Fill with N(mean, std²) samples."""
    return self.copy_(randn(tuple(self.shape), generator=generator, dtype=self.dtype) * std + mean)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability ``p``) or 0."""
    draws = rand(tuple(self.shape), generator=generator, dtype=dtypes.float64)
    return self.copy_((draws < p).to(self.dtype))


def random_(self, *bounds, generator=None, **named):
    """Fill with integers drawn uniformly from ``[from, to)``: ``random_(to)``,
    ``random_(from, to)`` (``from``/``to`` also by keyword, as torch takes them).
    ``random_()`` draws from ``[0, 2**24]`` for float32 (2**53 for float64, torch's
    mantissa bound) and from the dtype's non-negative range for integers."""
    low, high = 0, None
    if len(bounds) == 1:
        high = bounds[0]
    elif len(bounds) == 2:
        low, high = bounds
    low, high = named.get("from", low), named.get("to", high)
    if high is None:
        if self.dtype.is_floating_point:
            high = 2 ** {"float64": 53, "float32": 24}.get(self.dtype.name, 11) + 1
        else:
            high = int(np.iinfo(self.dtype.numpy).max)
    draws = _numbers(generator).integers(int(low), int(high), size=tuple(self.shape))
    return self.copy_(tensor(draws, dtype=self.dtype))
