"""zero_grads (behind Module.zero_grad and Optimizer.zero_grad), and the shared step loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import whylab
from whylab.autograd.grad_reset import zero_grads
from whylab.optim.optimizer import Optimizer

# the create_graph gradient below is what is being tested; torch warns about its cycle
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")


def _leaves_with_grads(module):
    a = module.tensor([1.0, 2.0], dtype=module.float64, requires_grad=True)
    b = module.tensor([3.0], dtype=module.float64, requires_grad=True)
    unused = module.tensor([0.5], dtype=module.float64, requires_grad=True)
    (a * a).sum().backward(create_graph=True)
    b.sum().backward()
    return a, b, unused


def test_zero_grads_sets_to_none_and_skips_missing_grads():
    a, b, unused = _leaves_with_grads(whylab)
    zero_grads([a, b, unused])
    assert a.grad is None and b.grad is None and unused.grad is None


def test_zero_grads_in_place_matches_torch_zero_grad():
    ours = _leaves_with_grads(whylab)
    theirs = _leaves_with_grads(torch)
    keep_b = ours[1].grad
    zero_grads(ours, set_to_none=False)
    torch.optim.SGD(list(theirs), lr=0.1).zero_grad(set_to_none=False)
    for mine, reference in zip(ours, theirs, strict=True):
        assert (mine.grad is None) == (reference.grad is None)
        if reference.grad is not None:
            np.testing.assert_array_equal(mine.grad.numpy(), reference.grad.numpy())
            assert mine.grad.grad_fn is None and not mine.grad.requires_grad
            assert reference.grad.grad_fn is None and not reference.grad.requires_grad
    assert ours[1].grad is keep_b  # a plain gradient is zeroed in place, not replaced


def test_optimizer_without_update_names_itself():
    class NoUpdate(Optimizer):
        pass

    param = whylab.tensor([1.0], requires_grad=True)
    param.sum().backward()
    with pytest.raises(NotImplementedError, match="NoUpdate does not implement _update"):
        NoUpdate([param], {}).step()
