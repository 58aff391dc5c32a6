"""In-place writes through views (CopySlices, regenerated view history), compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from autograd_helpers import assert_close

import whylab


def _stale_view_after_base_write(m, x):
    y = x * 1
    view = y[0]
    y.mul_(2)
    return (view * view).sum()


def _write_through_view_then_use_it(m, x):
    y = x * 1
    view = y[1]
    view.mul_(3)
    return (view * y).sum()


def _fill_buffer_without_grad(m, x):
    buffer = m.zeros(3, 4, dtype=m.float64)
    buffer[1] = x[0] * 2
    buffer[:, 0] = x[:, 1]
    return (buffer * buffer).sum()


def _sibling_view_sees_write(m, x):
    y = x * 1
    column, row = y[:, 0], y[0]
    column.mul_(5)
    return (row * 2).sum()


def _view_of_view(m, x):
    y = x.clone()
    y[1:][:, 2].add_(x[0, :2].sum())
    return y.sum()


def _transposed_view_write(m, x):
    y = x.clone()
    y.t()[1].mul_(x[:, 2])
    return (y**2).sum()


def _advanced_index_write(m, x):
    y = x.clone()
    y[[0, 2], 1:3] = x[1, :2] * 4
    return (y * x).sum()


def _clone_then_zero_row(m, x):
    y = x.clone()
    y[0] = 0
    return (y * y).sum()


CASES = [
    _stale_view_after_base_write,
    _write_through_view_then_use_it,
    _fill_buffer_without_grad,
    _sibling_view_sees_write,
    _view_of_view,
    _transposed_view_write,
    _advanced_index_write,
    _clone_then_zero_row,
]


@pytest.mark.parametrize("build", CASES, ids=lambda f: f.__name__.strip("_"))
def test_write_through_view_matches_torch(build):
    data = np.arange(12.0).reshape(3, 4) / 7 - 0.6
    grads = []
    for module in (whylab, torch):
        x = module.tensor(data, requires_grad=True, dtype=module.float64)
        build(module, x).backward()
        grads.append(x.grad.numpy() if module is torch else x.grad.numpy())
    assert_close(grads[0], grads[1])


def test_base_history_becomes_copy_slices():
    x = whylab.ones(3, 4, requires_grad=True)
    y = x.clone()
    y[:, 1].mul_(2)
    assert y.grad_fn.name() == "CopySlices"
    assert y.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    assert y.grad_fn.fn.name() == "MulBackward0"


def test_base_without_grad_starts_requiring_grad_after_write():
    x = whylab.ones(2, requires_grad=True)
    buffer = whylab.zeros(3, 2)
    assert not buffer.requires_grad
    buffer[0] = x
    assert buffer.requires_grad and buffer.grad_fn.name() == "CopySlices"


def test_write_through_view_under_autograd_grad():
    x = whylab.ones(3, 4, requires_grad=True, dtype=whylab.float64)
    other = whylab.ones(4, requires_grad=True, dtype=whylab.float64)
    y = x * 1
    y[1].mul_(other)
    (gx,) = whylab.autograd.grad((y * 2).sum(), [x])
    expected = np.full((3, 4), 2.0)
    assert_close(gx.numpy(), expected)
