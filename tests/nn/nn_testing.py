"""Shared helpers for comparing whylab.nn with torch.nn in float64."""

from __future__ import annotations

import numpy as np
import torch

import whylab


def to_torch(tensor, requires_grad: bool = False) -> torch.Tensor:
    """A torch copy of a whylab tensor's values."""
    result = torch.tensor(tensor.detach().numpy().copy())
    return result.requires_grad_(requires_grad)


def to_numpy(tensor) -> np.ndarray:
    """Values of a whylab or torch tensor as a NumPy array."""
    return tensor.detach().numpy()


def pair(array: np.ndarray, requires_grad: bool = True):
    """The same values as a whylab tensor and a torch tensor (both leaves)."""
    w = whylab.tensor(array.copy(), requires_grad=requires_grad)
    t = torch.tensor(array.copy(), requires_grad=requires_grad)
    return w, t


def copy_weights(w_module, t_module) -> None:
    """Load the whylab module's parameters and buffers into the torch module."""
    state = {name: to_torch(value) for name, value in w_module.state_dict().items()}
    t_module.load_state_dict(state)


def assert_close(w_value, t_value, atol: float = 1e-12, rtol: float = 1e-10) -> None:
    np.testing.assert_allclose(to_numpy(w_value), to_numpy(t_value), atol=atol, rtol=rtol)


def compare_module(w_module, t_module, input_array: np.ndarray, seed: int = 0) -> None:
    """Forward the same input through both modules; compare outputs, the input's gradient
    and every parameter's gradient under a random upstream gradient."""
    copy_weights(w_module, t_module)
    w_in, t_in = pair(input_array)
    w_out, t_out = w_module(w_in), t_module(t_in)
    assert tuple(w_out.shape) == tuple(t_out.shape)
    assert_close(w_out, t_out)

    upstream = np.random.default_rng(seed).standard_normal(tuple(t_out.shape))
    w_out.backward(whylab.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    assert_close(w_in.grad, t_in.grad)
    t_params = dict(t_module.named_parameters())
    for name, w_param in w_module.named_parameters():
        assert w_param.grad is not None, f"no gradient reached {name}"
        assert_close(w_param.grad, t_params[name].grad)
