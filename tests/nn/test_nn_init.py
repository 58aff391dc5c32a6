"""nn.init: fans and gains equal torch's; drawn values follow the intended distributions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

import whylab
import whylab.nn as wnn
from whylab.nn import init

SHAPES = [(3, 5), (64, 32), (8, 4, 3), (6, 2, 3, 5), (2, 7, 1, 1, 4)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fan_in_and_fan_out_match_torch(shape):
    expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init._calculate_fan_in_and_fan_out(whylab.empty(*shape)) == expected


@pytest.mark.parametrize("shape", [(4,), ()])
def test_fan_needs_two_dimensions(shape):
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(whylab.zeros(shape))


@pytest.mark.parametrize(
    "nonlinearity,param",
    [("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None),
     ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
     ("leaky_relu", 3), ("selu", None)],
)
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(
        nonlinearity, param
    )


def test_calculate_gain_rejects_unknown_inputs():
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def uniform_bound_and_normal_std(name, shape, **options):
    """The bound (uniform) or std (normal) torch's formula gives for this shape."""
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    if name.startswith("xavier"):
        std = options.get("gain", 1.0) * math.sqrt(2.0 / (fan_in + fan_out))
    else:
        fan = fan_in if options.get("mode", "fan_in") == "fan_in" else fan_out
        gain = torch.nn.init.calculate_gain(
            options.get("nonlinearity", "leaky_relu"), options.get("a", 0)
        )
        std = gain / math.sqrt(fan)
    return math.sqrt(3.0) * std, std


INIT_CASES = [
    ("xavier_uniform_", {}),
    ("xavier_uniform_", {"gain": 2.5}),
    ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_uniform_", {}),
    ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {"nonlinearity": "tanh"}),
    ("kaiming_normal_", {"mode": "fan_out", "a": 0.1}),
]


@pytest.mark.parametrize("name,options", INIT_CASES)
def test_init_distribution(name, options):
    """Kolmogorov-Smirnov test of 20k draws against the exact distribution torch's formula
    implies (p > 1e-4: a false alarm once in 10 000 runs; a wrong scale fails by far)."""
    shape = (100, 50, 4)
    whylab.manual_seed(1234)
    tensor = whylab.empty(*shape, dtype=whylab.float64)
    returned = getattr(init, name)(tensor, **options)
    assert returned is tensor
    values = tensor.numpy().ravel()
    bound, std = uniform_bound_and_normal_std(name, shape, **options)
    if name.endswith("uniform_"):
        assert values.min() >= -bound and values.max() <= bound
        reference = stats.uniform(loc=-bound, scale=2 * bound).cdf
    else:
        reference = stats.norm(loc=0.0, scale=std).cdf
    assert stats.kstest(values, reference).pvalue > 1e-4


def test_uniform_normal_and_constants():
    whylab.manual_seed(0)
    t = whylab.empty(20000, dtype=whylab.float64)
    init.uniform_(t, -2.0, 3.0)
    assert stats.kstest(t.numpy(), stats.uniform(-2.0, 5.0).cdf).pvalue > 1e-4
    init.normal_(t, 1.5, 0.25)
    assert stats.kstest(t.numpy(), stats.norm(1.5, 0.25).cdf).pvalue > 1e-4
    np.testing.assert_array_equal(init.constant_(t, 0.7).numpy(), 0.7)
    np.testing.assert_array_equal(init.zeros_(t).numpy(), 0.0)
    np.testing.assert_array_equal(init.ones_(t).numpy(), 1.0)


def test_init_runs_without_recording_gradients():
    layer = wnn.Linear(4, 3)
    init.xavier_normal_(layer.weight)
    assert layer.weight.is_leaf and layer.weight.grad_fn is None


def test_bad_mode_and_zero_element_tensor():
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(whylab.empty(3, 3), mode="fan_avg")
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_normal_(whylab.empty(0, 3))


def test_linear_default_init_range_matches_torch():
    """torch's Linear default (kaiming_uniform_ with a=sqrt(5)) is U(-1/sqrt(in), 1/sqrt(in))."""
    whylab.manual_seed(3)
    layer = wnn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
        assert values.min() >= -bound and values.max() <= bound
    weight = layer.weight.detach().numpy().ravel()
    assert stats.kstest(weight, stats.uniform(-bound, 2 * bound).cdf).pvalue > 1e-4
