"""Test helpers for the engine: the same data as a whylab tensor and a torch tensor.

``pair`` builds both from one NumPy array; ``layouts`` yields the same values
laid out contiguously, transposed, and sliced with a step, so every op is
checked on non-contiguous inputs too.
"""

from __future__ import annotations

import numpy as np
import torch

import whylab

DTYPE_PAIRS = {
    whylab.float32: torch.float32,
    whylab.float64: torch.float64,
    whylab.int64: torch.int64,
    whylab.int32: torch.int32,
    whylab.bool: torch.bool,
}
TORCH_TO_WHYLAB = {v: k for k, v in DTYPE_PAIRS.items()}


def random_array(shape, dtype=np.float64, seed=0, low=-3.0, high=3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def pair(array: np.ndarray):
    """(whylab tensor, torch tensor) holding copies of ``array``."""
    array = np.array(array)
    # torch.tensor(ndarray) gives empty tensors unusual strides; clone() to row-major ones.
    torch_tensor = torch.from_numpy(array).clone(memory_format=torch.contiguous_format)
    return whylab.tensor(array), torch_tensor


def layouts(shape, dtype=np.float64, seed=0, low=-3.0, high=3.0):
    """Yield (name, whylab tensor, torch tensor) with equal values in different layouts."""
    values = random_array(shape, dtype, seed, low, high)
    w, t = pair(values)
    yield "contiguous", w, t
    if len(shape) >= 2:
        w, t = pair(np.ascontiguousarray(np.swapaxes(values, -1, -2)))
        yield "transposed", w.transpose(-1, -2), t.transpose(-1, -2)
    if len(shape) >= 1:
        bigger = np.repeat(values, 2, axis=0)
        w, t = pair(bigger)
        yield "strided", w[::2], t[::2]


def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return x.detach().numpy()


def assert_same(w, t, rtol=1e-7, atol=1e-10, check_dtype=True):
    """Values (and dtype, shape) of a whylab result equal a torch result."""
    assert tuple(w.shape) == tuple(t.shape), (w.shape, t.shape)
    if check_dtype:
        assert DTYPE_PAIRS[w.dtype] == t.dtype, (w.dtype, t.dtype)
    np.testing.assert_allclose(to_numpy(w), to_numpy(t), rtol=rtol, atol=atol)


def geometry(x):
    """(sizes, strides, storage offset) of a whylab or torch tensor."""
    return tuple(x.shape), tuple(x.stride()), x.storage_offset()
