"""Every layer's forward and gradients (parameters and input) against torch.nn, float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from nn_testing import assert_close, compare_module, copy_weights, pair

import whylab
import whylab.nn as wnn

SETTINGS = settings(max_examples=25, deadline=None)
sizes = st.integers(1, 6)


@SETTINGS
@given(batch=st.lists(sizes, min_size=0, max_size=2), n_in=sizes, n_out=sizes,
       bias=st.booleans(), seed=st.integers(0, 2**16))
def test_linear(batch, n_in, n_out, bias, seed):
    rng = np.random.default_rng(seed)
    w_layer = wnn.Linear(n_in, n_out, bias=bias).double()
    t_layer = torch.nn.Linear(n_in, n_out, bias=bias).double()
    compare_module(w_layer, t_layer, rng.standard_normal((*batch, n_in)), seed)


@pytest.mark.parametrize("name", ["ReLU", "Tanh", "Sigmoid", "Identity"])
@SETTINGS
@given(shape=st.lists(sizes, min_size=0, max_size=3), seed=st.integers(0, 2**16))
def test_elementwise_activations(name, shape, seed):
    data = np.random.default_rng(seed).standard_normal(shape)
    compare_module(getattr(wnn, name)(), getattr(torch.nn, name)(), data, seed)


def test_relu_inplace_matches_torch():
    data = np.random.default_rng(0).standard_normal((4, 5))
    w_x, t_x = pair(data)
    w_out = wnn.ReLU(inplace=True)(w_x * 2)
    t_out = torch.nn.ReLU(inplace=True)(t_x * 2)
    assert_close(w_out, t_out)
    w_out.sum().backward()
    t_out.sum().backward()
    assert_close(w_x.grad, t_x.grad)


@SETTINGS
@given(shape=st.lists(sizes, min_size=2, max_size=4), seed=st.integers(0, 2**16), data=st.data())
def test_flatten(shape, seed, data):
    start = data.draw(st.integers(-len(shape), len(shape) - 1))
    end = data.draw(st.integers(-len(shape), len(shape) - 1))
    if start % len(shape) > end % len(shape):
        end = start
    values = np.random.default_rng(seed).standard_normal(shape)
    compare_module(wnn.Flatten(start, end), torch.nn.Flatten(start, end), values, seed)


@SETTINGS
@given(lead=st.lists(sizes, min_size=0, max_size=2), normalized=st.lists(sizes, min_size=1,
       max_size=2), affine=st.booleans(), bias=st.booleans(), seed=st.integers(0, 2**16))
def test_layer_norm(lead, normalized, affine, bias, seed):
    rng = np.random.default_rng(seed)
    w_layer = wnn.LayerNorm(normalized, elementwise_affine=affine, bias=bias).double()
    t_layer = torch.nn.LayerNorm(normalized, elementwise_affine=affine, bias=bias).double()
    if affine:
        with whylab.no_grad():
            for param in w_layer.parameters():
                param.copy_(whylab.tensor(rng.standard_normal(tuple(param.shape))))
    compare_module(w_layer, t_layer, 3 + 2 * rng.standard_normal((*lead, *normalized)), seed)


@SETTINGS
@given(num=st.integers(2, 8), dim=sizes, index_shape=st.lists(sizes, min_size=0, max_size=2),
       use_padding=st.booleans(), seed=st.integers(0, 2**16))
def test_embedding(num, dim, index_shape, use_padding, seed):
    rng = np.random.default_rng(seed)
    padding_idx = int(rng.integers(-num, num)) if use_padding else None
    w_layer = wnn.Embedding(num, dim, padding_idx=padding_idx).double()
    t_layer = torch.nn.Embedding(num, dim, padding_idx=padding_idx).double()
    if padding_idx is not None:
        np.testing.assert_array_equal(w_layer.weight[padding_idx].detach().numpy(), 0.0)
    copy_weights(w_layer, t_layer)
    indices = rng.integers(0, num, index_shape)
    w_out = w_layer(whylab.tensor(indices))
    t_out = t_layer(torch.tensor(indices))
    assert_close(w_out, t_out)
    upstream = rng.standard_normal(tuple(t_out.shape))
    w_out.backward(whylab.tensor(upstream))
    t_out.backward(torch.tensor(upstream))
    assert_close(w_layer.weight.grad, t_layer.weight.grad)


def test_embedding_rejects_out_of_range_padding():
    with pytest.raises(ValueError, match="padding_idx 5"):
        wnn.Embedding(5, 3, padding_idx=5)


def test_sequential_mlp_matches_torch():
    rng = np.random.default_rng(7)
    w_model = wnn.Sequential(
        wnn.Linear(6, 5), wnn.LayerNorm(5), wnn.Tanh(), wnn.Linear(5, 4), wnn.Sigmoid(),
        wnn.Dropout(0.3), wnn.Flatten(0),
    ).double().eval()
    t_model = torch.nn.Sequential(
        torch.nn.Linear(6, 5), torch.nn.LayerNorm(5), torch.nn.Tanh(), torch.nn.Linear(5, 4),
        torch.nn.Sigmoid(), torch.nn.Dropout(0.3), torch.nn.Flatten(0),
    ).double().eval()
    compare_module(w_model, t_model, rng.standard_normal((3, 6)))


def test_dropout_training_statistics_and_eval_identity():
    whylab.manual_seed(0)
    layer = wnn.Dropout(0.25)
    x = whylab.ones(200, 500, dtype=whylab.float64)
    out = layer(x).numpy()
    kept = out != 0
    # kept entries are scaled by 1/(1-p); the kept fraction is 0.75 within 5 sigma
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-15)
    sigma = np.sqrt(0.25 * 0.75 / out.size)
    assert abs(kept.mean() - 0.75) < 5 * sigma
    layer.eval()
    assert np.array_equal(layer(x).numpy(), x.numpy())


def test_dropout_gradient_uses_the_same_mask():
    whylab.manual_seed(1)
    x = whylab.ones(50, 40, dtype=whylab.float64, requires_grad=True)
    out = wnn.functional.dropout(x, 0.5, training=True)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_dropout_edge_probabilities(p):
    x = whylab.ones(10, 10, dtype=whylab.float64)
    expected = x.numpy() if p == 0 else np.zeros((10, 10))
    np.testing.assert_array_equal(wnn.functional.dropout(x, p, training=True).numpy(), expected)


def test_dropout_rejects_bad_probability():
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        wnn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
        wnn.functional.dropout(whylab.ones(2), -0.1)


def test_linear_shape_error_names_the_shapes():
    layer = wnn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=r"\(4, 5\)|4x5"):
        layer(whylab.ones(4, 5))
