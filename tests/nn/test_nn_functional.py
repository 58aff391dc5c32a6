"""whylab.nn.functional against torch.nn.functional, float64, including double backward."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from nn_testing import assert_close, pair

import whylab
import whylab.nn.functional as F


def first_and_second_order(w_fn, t_fn, w_inputs, t_inputs, seed=0):
    """Compare f, df/dx (via autograd.grad with create_graph) and d(v . df/dx)/dx."""
    w_out, t_out = w_fn(*w_inputs), t_fn(*t_inputs)
    assert tuple(w_out.shape) == tuple(t_out.shape)
    assert_close(w_out, t_out)

    rng = np.random.default_rng(seed)
    upstream = rng.standard_normal(tuple(t_out.shape))
    w_grads = whylab.autograd.grad(w_out, w_inputs, whylab.tensor(upstream), create_graph=True)
    t_grads = torch.autograd.grad(t_out, t_inputs, torch.tensor(upstream), create_graph=True)
    for w_grad, t_grad in zip(w_grads, t_grads, strict=True):
        assert_close(w_grad, t_grad)

    directions = [rng.standard_normal(tuple(g.shape)) for g in t_grads]
    w_dot = sum((g * whylab.tensor(d)).sum() for g, d in zip(w_grads, directions, strict=True))
    t_dot = sum((g * torch.tensor(d)).sum() for g, d in zip(t_grads, directions, strict=True))
    t_second = torch.autograd.grad(t_dot, t_inputs, allow_unused=True)
    if not w_dot.requires_grad:
        # The first derivative does not depend on the inputs here (e.g. nll_loss is linear);
        # torch still records a node, whose derivative must then be zero.
        assert all(g is None or not g.any() for g in t_second)
        return
    w_second = whylab.autograd.grad(w_dot, w_inputs, allow_unused=True)
    for w_grad, t_grad in zip(w_second, t_second, strict=True):
        if t_grad is None:
            assert w_grad is None or np.all(w_grad.numpy() == 0)
        else:
            assert_close(w_grad, t_grad)


INPUT_SHAPES = [(5, 4), (4,), (3, 4, 2), (2, 3, 2, 2)]


def class_targets(rng, input_shape, ignore_index, ignored_fraction=0.3):
    target_shape = input_shape[:1] + input_shape[2:] if len(input_shape) > 1 else ()
    classes = input_shape[1] if len(input_shape) > 1 else input_shape[0]
    target = rng.integers(0, classes, target_shape)
    mask = rng.random(target_shape) < ignored_fraction
    return np.where(mask, ignore_index, target)


CROSS_ENTROPY_CASES = list(
    itertools.product(
        INPUT_SHAPES,
        ["none", "mean", "sum"],
        [-100, 1],  # the default, and an ignore_index that is also a real class
        [0.0, 0.15],
        [False, True],
    )
)


@pytest.mark.parametrize("shape,reduction,ignore_index,smoothing,weighted", CROSS_ENTROPY_CASES)
def test_cross_entropy_class_targets(shape, reduction, ignore_index, smoothing, weighted):
    case = (shape, reduction, ignore_index, smoothing, weighted)
    rng = np.random.default_rng(CROSS_ENTROPY_CASES.index(case))
    logits = 3 * rng.standard_normal(shape)
    target = class_targets(rng, shape, ignore_index)
    classes = shape[1] if len(shape) > 1 else shape[0]
    weight = rng.uniform(0.2, 2.0, classes) if weighted else None
    options = dict(reduction=reduction, ignore_index=ignore_index, label_smoothing=smoothing)

    def w_fn(x):
        w_weight = None if weight is None else whylab.tensor(weight)
        return F.cross_entropy(x, whylab.tensor(target), weight=w_weight, **options)

    def t_fn(x):
        t_weight = None if weight is None else torch.tensor(weight)
        return TF.cross_entropy(x, torch.tensor(target), weight=t_weight, **options)

    w_x, t_x = pair(logits)
    first_and_second_order(w_fn, t_fn, [w_x], [t_x])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(5, 4), (4,), (3, 4, 2)])
def test_cross_entropy_probability_targets(reduction, smoothing, weighted, shape):
    rng = np.random.default_rng(11)
    logits = rng.standard_normal(shape)
    probabilities = rng.random(shape)
    probabilities /= probabilities.sum(axis=1 if len(shape) > 1 else 0, keepdims=True)
    classes = shape[1] if len(shape) > 1 else shape[0]
    weight = rng.uniform(0.2, 2.0, classes) if weighted else None
    options = dict(reduction=reduction, label_smoothing=smoothing)

    def w_fn(x, p):
        w_weight = None if weight is None else whylab.tensor(weight)
        return F.cross_entropy(x, p, weight=w_weight, **options)

    def t_fn(x, p):
        t_weight = None if weight is None else torch.tensor(weight)
        return TF.cross_entropy(x, p, weight=t_weight, **options)

    w_x, t_x = pair(logits)
    w_p, t_p = pair(probabilities)
    first_and_second_order(w_fn, t_fn, [w_x, w_p], [t_x, t_p])


@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_all_targets_ignored(weighted):
    """torch gives nan for mean over no targets and 0 for sum; so must we."""
    logits = np.random.default_rng(0).standard_normal((3, 4))
    target = np.full(3, -100)
    weight = np.array([1.0, 2.0, 3.0, 4.0]) if weighted else None
    for reduction in ["mean", "sum"]:
        for smoothing in [0.0, 0.1]:
            w = F.cross_entropy(
                whylab.tensor(logits), whylab.tensor(target),
                weight=None if weight is None else whylab.tensor(weight),
                reduction=reduction, label_smoothing=smoothing,
            )
            t = TF.cross_entropy(
                torch.tensor(logits), torch.tensor(target),
                weight=None if weight is None else torch.tensor(weight),
                reduction=reduction, label_smoothing=smoothing,
            )
            np.testing.assert_array_equal(w.numpy(), t.numpy())


def test_cross_entropy_errors_name_the_problem():
    logits = whylab.zeros(3, 4)
    with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(logits, whylab.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, whylab.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(ValueError, match=r"target.*\(2,\).*\(3, 4\)|\(3, 4\).*\(2,\)"):
        F.cross_entropy(logits, whylab.tensor([0, 1]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(logits, whylab.tensor([0, 7, 1]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", INPUT_SHAPES)
def test_nll_loss(reduction, weighted, shape):
    rng = np.random.default_rng(5)
    log_probs = rng.standard_normal(shape)
    target = class_targets(rng, shape, 2)
    classes = shape[1] if len(shape) > 1 else shape[0]
    weight = rng.uniform(0.2, 2.0, classes) if weighted else None

    def w_fn(x):
        w_weight = None if weight is None else whylab.tensor(weight)
        return F.nll_loss(x, whylab.tensor(target), weight=w_weight, ignore_index=2,
                          reduction=reduction)

    def t_fn(x):
        t_weight = None if weight is None else torch.tensor(weight)
        return TF.nll_loss(x, torch.tensor(target), weight=t_weight, ignore_index=2,
                           reduction=reduction)

    w_x, t_x = pair(log_probs)
    first_and_second_order(w_fn, t_fn, [w_x], [t_x])


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family(name, dim):
    data = 4 * np.random.default_rng(2).standard_normal((3, 5))
    w_x, t_x = pair(data)
    first_and_second_order(
        lambda x: getattr(F, name)(x, dim), lambda x: getattr(TF, name)(x, dim), [w_x], [t_x]
    )


def test_log_softmax_is_stable_for_large_logits():
    logits = np.array([[1000.0, 0.0, -1000.0]])
    out = F.log_softmax(whylab.tensor(logits), dim=1).numpy()
    np.testing.assert_allclose(out, TF.log_softmax(torch.tensor(logits), 1).numpy())
    assert np.all(np.isfinite(out[:, :2]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_mse_loss(reduction):
    rng = np.random.default_rng(3)
    w_a, t_a = pair(rng.standard_normal((4, 3)))
    w_b, t_b = pair(rng.standard_normal((4, 3)))
    first_and_second_order(
        lambda a, b: F.mse_loss(a, b, reduction=reduction),
        lambda a, b: TF.mse_loss(a, b, reduction=reduction),
        [w_a, w_b], [t_a, t_b],
    )


def test_linear_and_layer_norm_functional():
    rng = np.random.default_rng(4)
    w_x, t_x = pair(rng.standard_normal((2, 3, 4)))
    w_w, t_w = pair(rng.standard_normal((5, 4)))
    w_b, t_b = pair(rng.standard_normal(5))
    first_and_second_order(F.linear, TF.linear, [w_x, w_w, w_b], [t_x, t_w, t_b])
    w_g, t_g = pair(rng.standard_normal(4))
    w_h, t_h = pair(rng.standard_normal(4))
    first_and_second_order(
        lambda x, g, h: F.layer_norm(x, (4,), g, h, 1e-5),
        lambda x, g, h: TF.layer_norm(x, (4,), g, h, 1e-5),
        [w_x, w_g, w_h], [t_x, t_g, t_h],
    )


def test_relu_functional_double_backward():
    w_x, t_x = pair(np.random.default_rng(6).standard_normal((4, 4)))
    first_and_second_order(lambda x: F.relu(x) ** 2, lambda x: TF.relu(x) ** 2, [w_x], [t_x])


def test_linear_and_cross_entropy_accept_non_contiguous_inputs():
    """Transposed views go through the same code as contiguous tensors."""
    rng = np.random.default_rng(8)
    w_x, t_x = pair(rng.standard_normal((4, 6)))  # used as x.t(): shape (6, 4), strided
    w_w, t_w = pair(rng.standard_normal((4, 3))[:, ::-1].copy())
    w_b, t_b = pair(rng.standard_normal(3))
    target = rng.integers(0, 3, 6)
    first_and_second_order(
        lambda x, w, b: F.cross_entropy(F.linear(x.t(), w.t(), b), whylab.tensor(target)),
        lambda x, w, b: TF.cross_entropy(TF.linear(x.t(), w.t(), b), torch.tensor(target)),
        [w_x, w_w, w_b], [t_x, t_w, t_b],
    )


@pytest.mark.parametrize("leading", [(1,), (7,), (8,), (16,), (2, 12), (31,), (40,)])
def test_linear_float32_matches_torch_in_both_product_orders(leading):
    """In float32 a few rows through many outputs take ``(W @ x.T).T`` (faster in OpenBLAS);
    values, gradients and the row-major layout must not depend on which order was taken."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((*leading, 24)).astype(np.float32)
    weight = rng.standard_normal((80, 24)).astype(np.float32)
    bias = rng.standard_normal(80).astype(np.float32)
    w_x, t_x = whylab.from_numpy(x.copy()), torch.from_numpy(x.copy())
    w_w = whylab.from_numpy(weight.copy()).requires_grad_()
    t_w = torch.from_numpy(weight.copy()).requires_grad_()
    w_b, t_b = whylab.from_numpy(bias.copy()), torch.from_numpy(bias.copy())
    w_out, t_out = F.linear(w_x, w_w, w_b), TF.linear(t_x, t_w, t_b)
    assert w_out.dtype == whylab.float32
    assert w_out.is_contiguous() and w_out.stride() == t_out.stride()
    np.testing.assert_allclose(w_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5, atol=1e-5)
    w_out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(w_w.grad.numpy(), t_w.grad.numpy(), rtol=1e-5, atol=1e-4)


def test_linear_errors_name_the_shapes_and_dtypes():
    with pytest.raises(RuntimeError, match=r"linear: input of shape \(2, 5\).*\(3, 4\)"):
        F.linear(whylab.zeros(2, 5), whylab.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"bias of shape \(4,\)"):
        F.linear(whylab.zeros(2, 4), whylab.zeros(3, 4), whylab.zeros(4))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(whylab.zeros(2, 4, dtype=whylab.float64), whylab.zeros(3, 4))
