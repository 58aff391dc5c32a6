"""Loss modules and activation functions against torch: values, gradients, reductions, kinks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF
from nn_testing import assert_close, pair

import whylab
import whylab.nn as nn
import whylab.nn.functional as F

RNG = np.random.default_rng(0)
PRED = RNG.standard_normal((4, 3))
TARGET = RNG.standard_normal((4, 3))
BINARY = RNG.integers(0, 2, (4, 3)).astype(np.float64)


def _compare_loss(make, make_torch, pred, target, needs_grad_target=False):
    w_pred, t_pred = pair(pred)
    w_target, t_target = pair(target, requires_grad=needs_grad_target)
    w_loss, t_loss = make(w_pred, w_target), make_torch(t_pred, t_target)
    assert_close(w_loss, t_loss)
    upstream = np.ones(tuple(t_loss.shape))
    w_loss.backward(whylab.tensor(upstream))
    t_loss.backward(torch.tensor(upstream))
    assert_close(w_pred.grad, t_pred.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "name, kwargs, inputs",
    [
        ("MSELoss", {}, "regression"),
        ("L1Loss", {}, "regression"),
        ("SmoothL1Loss", {"beta": 0.5}, "regression"),
        ("SmoothL1Loss", {"beta": 0.0}, "regression"),
        ("HuberLoss", {"delta": 0.7}, "regression"),
        ("BCELoss", {}, "probabilities"),
        ("BCEWithLogitsLoss", {}, "logits"),
        ("KLDivLoss", {}, "distributions"),
    ],
)
def test_loss_modules_match_torch(name, kwargs, inputs, reduction):
    pred, target = PRED, TARGET
    if inputs == "probabilities":
        pred, target = 1 / (1 + np.exp(-PRED)), BINARY
    elif inputs == "logits":
        target = BINARY
    elif inputs == "distributions":
        pred = PRED - np.log(np.exp(PRED).sum(1, keepdims=True))
        target = np.exp(TARGET) / np.exp(TARGET).sum(1, keepdims=True)
    _compare_loss(
        getattr(nn, name)(reduction=reduction, **kwargs),
        getattr(tnn, name)(reduction=reduction, **kwargs),
        pred,
        target,
    )


def test_bce_with_logits_weights_and_gradient_at_zero():
    pos_weight = np.array([1.0, 2.0, 0.5])
    weight = np.array([0.5, 1.0, 2.0])
    logits = PRED.copy()
    logits[0, 0] = 0.0  # the kink of |x| in the naive stable form: the gradient must be smooth
    _compare_loss(
        lambda p, t: F.binary_cross_entropy_with_logits(
            p, t, whylab.tensor(weight), pos_weight=whylab.tensor(pos_weight)
        ),
        lambda p, t: TF.binary_cross_entropy_with_logits(
            p, t, torch.tensor(weight), pos_weight=torch.tensor(pos_weight)
        ),
        logits,
        BINARY,
    )


def test_losses_name_the_problem():
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.l1_loss(whylab.ones(2), whylab.ones(2), reduction="avg")
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(whylab.ones(2), whylab.ones(3))
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(whylab.ones(2, 1), whylab.ones(2))
    assert nn.MSELoss(size_average=False).reduction == "sum"  # the legacy flags


ACTIVATIONS = [
    ("ReLU", {}),
    ("Tanh", {}),
    ("Sigmoid", {}),
    ("GELU", {}),
    ("GELU", {"approximate": "tanh"}),
    ("SiLU", {}),
    ("Mish", {}),
    ("Softplus", {"beta": 2.0}),
    ("Softplus", {"threshold": 1.0}),
    ("LeakyReLU", {"negative_slope": 0.1}),
    ("ELU", {"alpha": 0.7}),
    ("CELU", {"alpha": 2.0}),
    ("SELU", {}),
    ("Hardtanh", {"min_val": -2.0, "max_val": 1.0}),
    ("ReLU6", {}),
    ("Hardsigmoid", {}),
    ("Hardswish", {}),
    ("Softsign", {}),
    ("LogSigmoid", {}),
    ("Tanhshrink", {}),
]


@pytest.mark.parametrize("name, kwargs", ACTIVATIONS, ids=[f"{n}{k}" for n, k in ACTIVATIONS])
def test_activations_match_torch_including_kinks(name, kwargs):
    # Integers and the corners at ±1, ±2, ±3, 6 are where a wrong side of a kink would show.
    values = np.concatenate([np.arange(-7.0, 8.0), np.linspace(-4, 4, 17) + 0.013])
    x, tx = pair(values)
    y, ty = getattr(nn, name)(**kwargs)(x), getattr(tnn, name)(**kwargs)(tx)
    assert_close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    # torch's hardsigmoid backward multiplies by 1/6 rounded to float32, even for float64.
    assert_close(x.grad, tx.grad, rtol=1e-7 if name == "Hardsigmoid" else 1e-10)


def test_prelu_softmax_modules_and_second_order():
    x, tx = pair(RNG.standard_normal((3, 4)))
    prelu, t_prelu = nn.PReLU(4, init=0.3).double(), tnn.PReLU(4, init=0.3).double()
    assert_close(prelu(x), t_prelu(tx))
    assert_close(nn.Softmax(dim=1)(x), tnn.Softmax(dim=1)(tx))
    assert_close(nn.LogSoftmax(dim=0)(x), tnn.LogSoftmax(dim=0)(tx))
    assert_close(F.normalize(x, dim=1), TF.normalize(tx, dim=1))
    (g,) = whylab.autograd.grad(F.gelu(x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(TF.gelu(tx).sum(), tx, create_graph=True)
    (gg,) = whylab.autograd.grad(g.sum(), x)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    assert_close(gg, tgg)
