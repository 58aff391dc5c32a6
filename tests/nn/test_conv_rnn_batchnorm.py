"""Conv2d, pooling, BatchNorm and the recurrent layers against torch, with torch's parameters."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF
from nn_testing import assert_close, compare_module, copy_weights, pair

import whylab
import whylab.nn as nn
import whylab.nn.functional as F

RNG = np.random.default_rng(1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"stride": 2},
        {"padding": 1},
        {"padding": (2, 0), "dilation": 2},
        {"padding": "same"},
        {"groups": 2},
        {"bias": False, "stride": (1, 2)},
    ],
)
def test_conv2d_matches_torch(kwargs):
    module = nn.Conv2d(4, 6, (3, 2), **kwargs).double()
    compare_module(
        module, tnn.Conv2d(4, 6, (3, 2), **kwargs).double(), RNG.standard_normal((2, 4, 7, 6))
    )


def test_conv1d_matches_torch():
    compare_module(
        nn.Conv1d(3, 5, 3, padding=1).double(),
        tnn.Conv1d(3, 5, 3, padding=1).double(),
        RNG.standard_normal((2, 3, 9)),
    )


@pytest.mark.parametrize(
    "fn, kwargs",
    [
        ("max_pool2d", {"kernel_size": 2}),
        ("max_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1}),
        ("max_pool2d", {"kernel_size": 2, "dilation": 2}),
        ("avg_pool2d", {"kernel_size": 2}),
        ("avg_pool2d", {"kernel_size": 3, "stride": 1, "padding": 1}),
        ("avg_pool2d", {"kernel_size": 3, "padding": 1, "count_include_pad": False}),
        ("adaptive_avg_pool2d", {"output_size": (3, 2)}),
    ],
)
def test_pooling_matches_torch(fn, kwargs):
    x, tx = pair(RNG.standard_normal((2, 3, 7, 6)))
    y, ty = getattr(F, fn)(x, **kwargs), getattr(TF, fn)(tx, **kwargs)
    assert_close(y, ty)
    upstream = RNG.standard_normal(tuple(ty.shape))
    y.backward(whylab.tensor(upstream))
    ty.backward(torch.tensor(upstream))
    assert_close(x.grad, tx.grad)


def test_conv_errors_name_the_shapes():
    with pytest.raises(RuntimeError, match="expects 4 input channels"):
        F.conv2d(whylab.ones(1, 3, 5, 5), whylab.ones(2, 4, 3, 3))
    with pytest.raises(RuntimeError, match="expected 4-D input"):
        F.conv2d(whylab.ones(3, 5, 5), whylab.ones(2, 3, 3, 3))


@pytest.mark.parametrize(
    "cls, shape",
    [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (6, 3, 4)), ("BatchNorm2d", (4, 3, 2, 5))],
)
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_matches_torch_in_train_and_eval(cls, shape, momentum):
    ours, theirs = (
        getattr(nn, cls)(3, momentum=momentum).double(),
        getattr(tnn, cls)(3, momentum=momentum).double(),
    )
    for step in range(3):
        x, tx = pair(RNG.standard_normal(shape) * (step + 1) + step)
        y, ty = ours(x), theirs(tx)
        assert_close(y, ty)
        y.pow(2).sum().backward()
        ty.pow(2).sum().backward()
        assert_close(x.grad, tx.grad)
        assert_close(ours.weight.grad, theirs.weight.grad)
    for name in ("running_mean", "running_var"):
        assert_close(getattr(ours, name), getattr(theirs, name))
    assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item() == 3
    ours.eval()
    theirs.eval()
    x, tx = pair(RNG.standard_normal(shape))
    assert_close(ours(x), theirs(tx))


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize(
    "kwargs, batched",
    [
        ({}, True),
        ({"num_layers": 2}, True),
        ({"batch_first": True}, True),
        ({"bidirectional": True}, True),
        ({"num_layers": 2, "bidirectional": True, "bias": False}, True),
        ({}, False),
    ],
)
def test_recurrent_layers_match_torch(cls, kwargs, batched):
    ours = getattr(nn, cls)(3, 4, **kwargs).double()
    theirs = getattr(tnn, cls)(3, 4, **kwargs).double()
    copy_weights(ours, theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    shape = (5, 2, 3) if batched else (5, 3)
    x, tx = pair(RNG.standard_normal(shape))
    out, state = ours(x)
    t_out, t_state = theirs(tx)
    assert_close(out, t_out)
    states = state if isinstance(state, tuple) else (state,)
    t_states = t_state if isinstance(t_state, tuple) else (t_state,)
    for mine, reference in zip(states, t_states, strict=True):
        assert_close(mine, reference)
    (out.sum() + states[0].pow(2).sum()).backward()
    (t_out.sum() + t_states[0].pow(2).sum()).backward()
    assert_close(x.grad, tx.grad)
    t_params = dict(theirs.named_parameters())
    for name, param in ours.named_parameters():
        assert_close(param.grad, t_params[name].grad)


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell", "RNNCell"])
def test_recurrent_cells_match_torch(cls):
    ours, theirs = getattr(nn, cls)(3, 4).double(), getattr(tnn, cls)(3, 4).double()
    copy_weights(ours, theirs)
    x, tx = pair(RNG.standard_normal((2, 3)))
    out, t_out = ours(x), theirs(tx)
    first = out[0] if isinstance(out, tuple) else out
    t_first = t_out[0] if isinstance(t_out, tuple) else t_out
    assert_close(first, t_first)
    first.sum().backward()
    t_first.sum().backward()
    assert_close(x.grad, tx.grad)
