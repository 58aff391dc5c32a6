"""Shared helpers for the autograd tests: paired whylab/torch inputs and comparisons."""

from __future__ import annotations

import numpy as np
import torch

import whylab

LAYOUTS = ("contiguous", "transposed", "strided")


def sample(rng, shape, kind="normal"):
    """Random float64 data of ``shape``; ``kind`` keeps it inside an op's domain."""
    data = rng.standard_normal(shape)
    if kind == "positive":
        return np.abs(data) + 0.5
    if kind == "unit":
        return np.tanh(data) * 0.9
    if kind == "distinct":
        # values far apart, so max/min/sort-like ops have no ties near the perturbation
        flat = rng.permutation(int(np.prod(shape, dtype=np.int64))).astype(np.float64)
        return (flat.reshape(shape) - flat.size / 2) * 0.37
    return data


class Pair:
    """One input in both libraries: the leaves that get ``.grad``, and the op inputs.

    With layout ``transposed`` or ``strided`` the op receives a non-contiguous
    view of the leaf (``leaf.transpose(-1, -2)`` or ``leaf[..., ::2]``), so
    gradients also flow through a view.
    """

    def __init__(self, data, layout="contiguous", requires_grad=True):
        self.data = data
        if layout == "transposed" and data.ndim >= 2:
            stored = np.ascontiguousarray(np.swapaxes(data, -1, -2))
            self.w_leaf = whylab.tensor(stored, dtype=whylab.float64, requires_grad=requires_grad)
            self.t_leaf = torch.tensor(stored, requires_grad=requires_grad)
            self.w = self.w_leaf.transpose(-1, -2)
            self.t = self.t_leaf.transpose(-1, -2)
        elif layout == "strided" and data.ndim >= 1:
            stored = np.repeat(data, 2, axis=-1)
            self.w_leaf = whylab.tensor(stored, dtype=whylab.float64, requires_grad=requires_grad)
            self.t_leaf = torch.tensor(stored, requires_grad=requires_grad)
            self.w = self.w_leaf[..., ::2]
            self.t = self.t_leaf[..., ::2]
        else:
            self.w_leaf = whylab.tensor(data, dtype=whylab.float64, requires_grad=requires_grad)
            self.t_leaf = torch.tensor(data, requires_grad=requires_grad)
            self.w, self.t = self.w_leaf, self.t_leaf


def first(value):
    return value[0] if isinstance(value, (tuple, list)) else value


def to_numpy(value):
    if isinstance(value, whylab.Tensor):
        return value.detach().numpy()
    return value.detach().numpy()


def assert_close(actual, expected, atol=1e-10, rtol=1e-8, what=""):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, atol=atol, rtol=rtol, err_msg=what)
