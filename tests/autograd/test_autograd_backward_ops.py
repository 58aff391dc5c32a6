"""The fused backward operators (threshold_backward, _softmax_backward_data,
_log_softmax_backward_data, tanh_backward, sigmoid_backward) against PyTorch's.

Each op is checked as an operator in its own right: values, gradients of both
inputs and second derivatives against ``torch.ops.aten``, on contiguous,
transposed and strided inputs, plus whylab's gradcheck/gradgradcheck. The relu
formula's NaN/inf rules (PyTorch's threshold_backward) get their own tests.
"""

from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from autograd_helpers import LAYOUTS, Pair, assert_close, sample

import whylab
from whylab.autograd import gradcheck, gradgradcheck


@dataclass
class OpCase:
    name: str
    whylab_fn: object  # (grad_output, other) -> tensor
    torch_fn: object
    grad_shape: tuple
    other_shape: tuple
    other_kind: str = "normal"


def _softmax_case(name, op, torch_op, dim, shape):
    return OpCase(
        f"{op}_dim{dim}_{len(shape)}d",
        lambda g, y: getattr(whylab.ops, op)(g, y, dim),
        lambda g, y: torch_op(g, y, dim, torch.float64),
        shape,
        shape,
        "unit",
    )


CASES = [
    OpCase(
        "threshold_backward",
        lambda g, x: whylab.ops.threshold_backward(g, x, 0.0),
        lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.0),
        (3, 4),
        (3, 4),
    ),
    OpCase(
        "threshold_backward_broadcast_threshold_0.3",
        lambda g, x: whylab.ops.threshold_backward(g, x, 0.3),
        lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.3),
        (3, 4),
        (4,),
    ),
    OpCase(
        "tanh_backward",
        whylab.ops.tanh_backward,
        torch.ops.aten.tanh_backward,
        (3, 4),
        (3, 4),
        "unit",
    ),
    OpCase(
        "tanh_backward_broadcast",
        whylab.ops.tanh_backward,
        torch.ops.aten.tanh_backward,
        (2, 3, 4),
        (3, 4),
        "unit",
    ),
    OpCase(
        "sigmoid_backward",
        whylab.ops.sigmoid_backward,
        torch.ops.aten.sigmoid_backward,
        (3, 4),
        (3, 4),
        "unit",
    ),
    _softmax_case(
        "softmax", "_softmax_backward_data", torch.ops.aten._softmax_backward_data, 1, (3, 4)
    ),
    _softmax_case(
        "softmax", "_softmax_backward_data", torch.ops.aten._softmax_backward_data, 0, (3, 4)
    ),
    _softmax_case(
        "softmax", "_softmax_backward_data", torch.ops.aten._softmax_backward_data, -2, (2, 3, 4)
    ),
    _softmax_case(
        "log_softmax",
        "_log_softmax_backward_data",
        torch.ops.aten._log_softmax_backward_data,
        1,
        (3, 4),
    ),
    _softmax_case(
        "log_softmax",
        "_log_softmax_backward_data",
        torch.ops.aten._log_softmax_backward_data,
        0,
        (2, 3, 4),
    ),
]


def _seed(*parts) -> int:
    return zlib.crc32("/".join(parts).encode())


def _pairs(case, rng, layout):
    grad = Pair(sample(rng, case.grad_shape), layout)
    other = Pair(sample(rng, case.other_shape, case.other_kind), layout)
    return grad, other


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_values_and_gradients_match_torch(case, layout):
    rng = np.random.default_rng(_seed(case.name, layout))
    grad, other = _pairs(case, rng, layout)
    w_out = case.whylab_fn(grad.w, other.w)
    t_out = case.torch_fn(grad.t, other.t)
    assert w_out.dtype is whylab.float64
    assert_close(w_out.detach().numpy(), t_out.detach().numpy(), what=f"{case.name} values")

    seed = sample(rng, tuple(t_out.shape))
    w_grads = whylab.autograd.grad(w_out, [grad.w_leaf, other.w_leaf], whylab.tensor(seed))
    t_grads = torch.autograd.grad(t_out, [grad.t_leaf, other.t_leaf], torch.tensor(seed))
    for name, w, t in zip(("grad_output", "other"), w_grads, t_grads, strict=True):
        assert_close(w.numpy(), t.numpy(), what=f"{case.name} gradient of {name}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_second_derivatives_match_torch(case):
    rng = np.random.default_rng(_seed("second", case.name))
    grad, other = _pairs(case, rng, "contiguous")
    results = {}
    for module, fn in ((whylab, case.whylab_fn), (torch, case.torch_fn)):
        leaves = [grad.w_leaf, other.w_leaf] if module is whylab else [grad.t_leaf, other.t_leaf]
        out = fn(*leaves)
        seed = module.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        seed.requires_grad_(True)
        firsts = module.autograd.grad(out, leaves, seed, create_graph=True)
        total = sum((g * g.detach().sin()).sum() for g in firsts)
        results[module.__name__] = module.autograd.grad(
            total, leaves + [seed], allow_unused=True, materialize_grads=True
        )
    for index, (w, t) in enumerate(zip(results["whylab"], results["torch"], strict=True)):
        assert_close(w.numpy(), t.detach().numpy(), what=f"{case.name} second derivative {index}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradcheck_and_gradgradcheck(case):
    rng = np.random.default_rng(_seed("check", case.name))
    # keep threshold inputs away from the kink, where the numeric derivative is undefined
    other_data = sample(rng, case.other_shape, case.other_kind)
    if case.name.startswith("threshold"):
        other_data = np.where(np.abs(other_data - 0.3) < 0.05, 1.0, other_data)
        other_data = np.where(np.abs(other_data) < 0.05, -1.0, other_data)
    inputs = (
        whylab.tensor(sample(rng, case.grad_shape), requires_grad=True, dtype=whylab.float64),
        whylab.tensor(other_data, requires_grad=True, dtype=whylab.float64),
    )
    assert gradcheck(case.whylab_fn, inputs)
    assert gradgradcheck(case.whylab_fn, inputs)


def test_threshold_backward_blocks_nan_and_inf_gradients_like_torch():
    grad = np.array([np.nan, np.inf, -np.inf, np.nan, 2.0, -3.0, 4.0, np.inf])
    values = np.array([-1.0, 0.0, -2.0, 1.0, np.nan, 0.0, 5.0, 3.0])
    w = whylab.ops.threshold_backward(whylab.tensor(grad), whylab.tensor(values), 0.0)
    t = torch.ops.aten.threshold_backward(torch.tensor(grad), torch.tensor(values), 0.0)
    expected = np.array([0.0, 0.0, 0.0, np.nan, 2.0, 0.0, 4.0, np.inf])
    np.testing.assert_array_equal(t.numpy(), expected)  # what torch does
    np.testing.assert_array_equal(w.numpy(), expected)


def test_threshold_backward_float32_with_non_finite_gradient_on_a_large_tensor():
    rng = np.random.default_rng(7)
    values = rng.standard_normal((64, 64)).astype(np.float32)
    grad = rng.standard_normal((64, 64)).astype(np.float32)
    grad[values <= 0] = np.inf  # every blocked position holds inf
    grad[0, values[0] > 0] = np.nan  # a NaN that passes stays NaN
    w = whylab.ops.threshold_backward(whylab.from_numpy(grad), whylab.from_numpy(values), 0)
    t = torch.ops.aten.threshold_backward(torch.from_numpy(grad), torch.from_numpy(values), 0)
    assert w.dtype is whylab.float32
    np.testing.assert_array_equal(w.numpy(), t.numpy())


@pytest.mark.parametrize("blocked_gradient", [2.0, np.inf, np.nan])
def test_threshold_backward_warns_of_nothing_with_finite_or_blocked_non_finite_gradients(
    blocked_gradient,
):
    """PyTorch is silent; the finite-gradient fast path must not trade that for speed."""
    values = np.array([-1.0, 1.0, 0.0, 3.0])
    grad = np.array([blocked_gradient, 1.0, blocked_gradient, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = whylab.ops.threshold_backward(whylab.tensor(grad), whylab.tensor(values), 0.0)
    np.testing.assert_array_equal(np.abs(w.numpy()), [0.0, 1.0, 0.0, 2.0])


def test_relu_backward_follows_threshold_backward_for_nan_inputs_and_gradients():
    data = [np.nan, -1.0, 2.0, 0.0, -4.0]
    upstream = [1.0, np.nan, np.inf, 5.0, -np.inf]
    results = []
    for module in (whylab, torch):
        x = module.tensor(data, requires_grad=True, dtype=module.float64)
        x.relu().backward(module.tensor(upstream, dtype=module.float64))
        results.append(x.grad.numpy())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], [1.0, 0.0, np.inf, 0.0, 0.0])


def test_fused_backward_nodes_are_named_like_torch():
    x = whylab.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    tx = torch.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    for fn in (
        lambda m, a: a.relu(),
        lambda m, a: a.tanh(),
        lambda m, a: a.sigmoid(),
        lambda m, a: a.softmax(1),
        lambda m, a: a.log_softmax(1),
    ):
        (w_grad,) = whylab.autograd.grad(fn(whylab, x).sum(), [x], create_graph=True)
        (t_grad,) = torch.autograd.grad(fn(torch, tx).sum(), [tx], create_graph=True)
        assert type(w_grad.grad_fn).__name__ == type(t_grad.grad_fn).__name__


def test_softmax_backward_data_rejects_a_gradient_of_another_shape():
    with pytest.raises(RuntimeError, match=r"_softmax_backward_data: grad_output of shape \[4\]"):
        whylab.ops._softmax_backward_data(whylab.ones(4), whylab.ones(3, 4), 1)


def test_fused_backward_ops_on_meta_tensors_predict_the_cpu_result():
    grad = whylab.empty((3, 4), device="meta")
    out = whylab.empty((3, 4), device="meta")
    for result in (
        whylab.ops.threshold_backward(grad, out, 0),
        whylab.ops._softmax_backward_data(grad, out, 1),
        whylab.ops._log_softmax_backward_data(grad, out, 1),
        whylab.ops.tanh_backward(grad, out),
        whylab.ops.sigmoid_backward(grad, out),
    ):
        assert result.shape == (3, 4)
        assert result.dtype is whylab.float32
        assert result.device.type == "meta"
