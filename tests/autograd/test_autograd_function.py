"""autograd.Function: custom forward/backward, ctx features, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from autograd_helpers import assert_close

import whylab
from whylab.autograd import Function, gradcheck, gradgradcheck


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class ScaledAdd(Function):
    """Mixed tensor and non-tensor arguments; needs_input_grad decides what to compute."""

    @staticmethod
    def forward(ctx, a, scale, b):
        ctx.scale = scale
        ctx.seen_needs = ctx.needs_input_grad
        return a * scale + b

    @staticmethod
    def backward(ctx, grad):
        grad_a = grad * ctx.scale if ctx.needs_input_grad[0] else None
        grad_b = grad if ctx.needs_input_grad[2] else None
        return grad_a, None, grad_b


class SpikeFunction(Function):
    """Heaviside forward, fast-sigmoid surrogate backward (as spiking neurons use)."""

    @staticmethod
    def forward(ctx, membrane):
        ctx.save_for_backward(membrane)
        return (membrane > 0).to(membrane.dtype)

    @staticmethod
    def backward(ctx, grad):
        (membrane,) = ctx.saved_tensors
        return grad / (1 + 10 * membrane.abs()) ** 2


def test_function_forward_backward_and_node():
    x = whylab.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    assert type(y.grad_fn).__name__ == "SquareBackward"
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    y.sum().backward()
    assert_close(x.grad.numpy(), [2.0, -4.0, 6.0])


def test_function_needs_input_grad_and_non_tensor_args():
    a = whylab.ones(2, requires_grad=True)
    b = whylab.ones(2)
    out = ScaledAdd.apply(a, 3.0, b)
    assert out.grad_fn.seen_needs == (True, False, False)
    out.sum().backward()
    assert_close(a.grad.numpy(), [3.0, 3.0])


def test_function_without_grad_records_nothing():
    x = whylab.ones(2)
    assert Square.apply(x).grad_fn is None
    with whylab.no_grad():
        assert Square.apply(whylab.ones(2, requires_grad=True)).grad_fn is None


def test_function_gradcheck_and_double_backward():
    x = whylab.tensor(np.array([0.3, -1.2, 2.0]), dtype=whylab.float64, requires_grad=True)
    assert gradcheck(Square.apply, (x,))
    assert gradgradcheck(Square.apply, (x,))


def test_surrogate_gradient_function():
    v = whylab.tensor([-0.5, 0.0, 0.2], requires_grad=True)
    spikes = SpikeFunction.apply(v)
    assert spikes.tolist() == [0.0, 0.0, 1.0]
    spikes.sum().backward()
    expected = 1 / (1 + 10 * np.abs(np.array([-0.5, 0.0, 0.2]))) ** 2
    assert_close(v.grad.numpy(), expected, atol=1e-6)


def test_saved_tensors_are_freed_and_version_checked():
    x = whylab.ones(2, requires_grad=True)
    y = Square.apply(x * 1)
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = node.saved_tensors
    h = x * 1
    y = Square.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_mark_non_differentiable_and_materialized_grads():
    class MaxWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            values, indices = x.max(0)
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            ctx.shape = x.shape
            return values, indices

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            (indices,) = ctx.saved_tensors
            assert not np.any(grad_indices.numpy())  # materialized zeros
            return whylab.zeros(ctx.shape, dtype=grad_values.dtype).scatter_add(
                0, indices.unsqueeze(0), grad_values.unsqueeze(0)
            )

    x = whylab.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    values, indices = MaxWithIndex.apply(x)
    assert values.requires_grad and not indices.requires_grad
    values.sum().backward()
    assert_close(x.grad.numpy(), [[0.0, 1.0], [1.0, 0.0]])


def test_function_errors_like_torch():
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return whylab.ones(5)

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    a = whylab.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Function WrongShapeBackward returned an invalid gradient "
        r"at index 0 - got \[5\] but expected shape compatible with \[2\]",
    ):
        WrongShape.apply(a).sum().backward()
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        TooMany.apply(a).sum().backward()

    ta = torch.ones(2, requires_grad=True)

    class TorchWrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return torch.ones(5)

    with pytest.raises(RuntimeError, match="returned an invalid gradient at index 0 - got \\[5\\]"):
        TorchWrongShape.apply(ta).sum().backward()


def test_function_returning_its_input_keeps_input_history():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = whylab.ones(2, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert_close(x.grad.numpy(), [2.0, 2.0])


def test_mark_dirty_rebases_history():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    leaf = whylab.ones(2, requires_grad=True)
    h = leaf * 1
    out = AddOneInPlace.apply(h)
    assert out is h and h.grad_fn.name() == "AddOneInPlaceBackward"
    out.sum().backward()
    assert_close(leaf.grad.numpy(), [3.0, 3.0])


def test_backward_can_run_a_nested_backward_pass():
    class InnerGrad(Function):
        """Backward computes its gradient with a nested autograd.grad call."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            with whylab.enable_grad():
                inner = x.detach().requires_grad_()
                (local,) = whylab.autograd.grad(inner.sin().sum(), [inner])
            return grad * local

    x = whylab.tensor([0.1, 0.7, -1.3], dtype=whylab.float64, requires_grad=True)
    other = whylab.tensor([2.0, 3.0, 4.0], dtype=whylab.float64, requires_grad=True)
    (InnerGrad.apply(x) * other).sum().backward()
    assert_close(x.grad.numpy(), np.cos([0.1, 0.7, -1.3]) * [2.0, 3.0, 4.0])
    assert_close(other.grad.numpy(), np.sin([0.1, 0.7, -1.3]))
