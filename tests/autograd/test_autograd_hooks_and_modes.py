"""Hooks (tensor, retain_grad, node pre/post) and grad modes, compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from autograd_helpers import assert_close

import whylab


def _record_hook_order(module):
    events = []
    x = module.tensor([1.0, 2.0], requires_grad=True, dtype=module.float64)
    y = x * 3
    z = (y * y).sum()
    x.register_hook(lambda g: events.append(("leaf_hook", g.tolist())))
    y.register_hook(lambda g: events.append(("tensor_hook_1", g.tolist())))
    y.register_hook(lambda g: events.append(("tensor_hook_2", g.tolist())) or g * 10)
    y.retain_grad()
    y.grad_fn.register_prehook(lambda grads: events.append(("node_pre", grads[0].tolist())))
    y.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: events.append(
            ("node_post", grad_inputs[0].tolist(), grad_outputs[0].tolist())
        )
    )
    z.backward()
    events.append(("y.grad", y.grad.tolist()))
    events.append(("x.grad", x.grad.tolist()))
    return events


def test_hook_order_and_replacement_match_torch():
    assert _record_hook_order(whylab) == _record_hook_order(torch)


def test_hook_handle_remove_and_context():
    x = whylab.ones(2, requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    (x * 2).sum().backward()
    handle.remove()
    (x * 2).sum().backward()
    assert calls == [1]
    y = x * 1
    with y.register_hook(lambda g: g * 0):
        pass  # removed on exit
    (y * 2).sum().backward()
    assert_close(x.grad.numpy(), [6.0, 6.0])


def test_leaf_hook_can_change_what_is_accumulated():
    for module in (whylab, torch):
        x = module.ones(3, requires_grad=True)
        x.register_hook(lambda g: g.clamp(max=1.5))
        (x * module.tensor([1.0, 2.0, 3.0])).sum().backward()
        assert x.grad.tolist() == [1.0, 1.5, 1.5]


def test_register_hook_requires_grad():
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        whylab.ones(2).register_hook(lambda g: g)


def test_retain_grad_semantics_like_torch():
    for module in (whylab, torch):
        x = module.tensor([1.0, -1.0], requires_grad=True)
        y = x.exp()
        y.retain_grad()
        assert y.retains_grad
        (y * 2).sum().backward(retain_graph=True)
        (y * 2).sum().backward()
        assert y.grad.tolist() == [4.0, 4.0]
        x.retain_grad()  # no-op on a leaf
        assert not x.retains_grad
    with pytest.raises(
        RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"
    ):
        whylab.ones(2).retain_grad()


def test_retain_grad_survives_inplace_like_torch():
    results = []
    for module in (whylab, torch):
        x = module.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        (y * y).sum().backward()
        results.append(y.grad.tolist())
    assert results[0] == results[1]


def test_no_grad_enable_grad_and_set_grad_enabled():
    x = whylab.ones(2, requires_grad=True)
    with whylab.no_grad():
        assert not (x * 2).requires_grad
        with whylab.enable_grad():
            assert (x * 2).requires_grad
    whylab.set_grad_enabled(False)
    try:
        assert not whylab.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        whylab.set_grad_enabled(True)
    with whylab.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert whylab.is_grad_enabled()


def test_grad_modes_as_decorators():
    x = whylab.ones(2, requires_grad=True)

    @whylab.no_grad()
    def doubled(t):
        return t * 2

    @whylab.enable_grad()
    def tripled(t):
        return t * 3

    @whylab.set_grad_enabled(False)
    def halved(t):
        return t / 2

    assert whylab.is_grad_enabled()  # decorating with set_grad_enabled(False) changed nothing
    assert not doubled(x).requires_grad
    with whylab.no_grad():
        assert tripled(x).requires_grad
    assert not halved(x).requires_grad

    @whylab.no_grad()
    def generator():
        yield (x * 2).requires_grad
        yield whylab.is_grad_enabled()

    assert list(generator()) == [False, False]
    assert whylab.is_grad_enabled()


def test_inference_mode_makes_inference_tensors():
    x = whylab.ones(2, requires_grad=True)
    with whylab.inference_mode():
        assert whylab.is_inference_mode_enabled()
        y = x * 2
        z = whylab.zeros(3)
        version = z._version_counter.value
        z.add_(1)
        assert z._version_counter.value == version  # no version counting inside
    assert not y.requires_grad and y.grad_fn is None
    assert y.is_inference() and z.is_inference()
    assert not x.is_inference()
    with whylab.inference_mode(False):
        assert (x * 2).requires_grad


def test_inference_tensor_cannot_be_saved_for_backward():
    with whylab.inference_mode():
        frozen = whylab.ones(2)
    x = whylab.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * frozen
    assert_close(
        (x + frozen).detach().numpy(), [2.0, 2.0]
    )  # add saves nothing: allowed, as in torch


def _version(tensor) -> int:
    """``_version`` is an int in both frameworks."""
    return tensor._version


def _inference_mode_observations(module):
    """What inference mode does to an ordinary tensor, a view of it and a new tensor."""
    x = module.tensor([0.3, 1.2], dtype=module.float64, requires_grad=True)
    y = x * 2
    z = y.sin()  # saves y for backward
    before = _version(y)
    with module.inference_mode():
        y.mul_(3.0)
        view = y[1:]
        made = module.ones(3)
        made_view = made[1:]
        x.add_(0.5)  # allowed on a leaf: Autograd, which would refuse it, is excluded
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
        z.sum().backward()
    return {
        "y bumped": _version(y) - before,
        "x bumped": _version(x),
        "view is inference": view.is_inference(),
        "view tracks y": view._base is y and _version(view) == _version(y),
        "made is inference": made.is_inference(),
        "view of made is inference": made_view.is_inference(),
        "view of made has a base": made_view._base is not None,
        "error names the version": "is at version 1; expected version 0" in str(error.value),
    }


def test_inference_mode_keeps_version_counting_for_ordinary_tensors_like_torch():
    # Before the fix, whylab excluded ADInplaceOrView too: y.mul_ went unnoticed and
    # backward silently gave the gradient of the modified y.
    ours = _inference_mode_observations(whylab)
    assert ours == _inference_mode_observations(torch)
    assert ours["y bumped"] == 1 and ours["error names the version"]


def test_inplace_write_to_a_view_in_inference_mode_bumps_the_base_like_torch():
    def versions(module):
        base = module.zeros(4, dtype=module.float64) * 1
        view = base[::2]
        with module.inference_mode():
            view.fill_(2.0)
            base.zero_()
        return _version(base), _version(view)

    assert versions(whylab) == versions(torch) == (2, 2)


def test_requires_grad_rules_like_torch():
    x = whylab.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(
        RuntimeError, match="you can only change requires_grad flags of leaf variables"
    ):
        y.requires_grad = False
    with pytest.raises(
        RuntimeError, match="only Tensors of floating point dtype can require gradients"
    ):
        whylab.ones(2, dtype=whylab.int64).requires_grad_()
    assert y.requires_grad and not y.is_leaf
    assert x.detach().is_leaf and not x.detach().requires_grad


def test_integer_outputs_do_not_require_grad():
    x = whylab.tensor(np.array([[1.0, 5.0], [3.0, 2.0]]), requires_grad=True)
    values, indices = x.max(1)
    assert values.requires_grad and not indices.requires_grad
    assert not (x > 1).requires_grad
    assert not x.argmax().requires_grad
