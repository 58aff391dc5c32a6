"""The backward engine: accumulation, ordering, retain_graph, errors, big graphs, memory."""

from __future__ import annotations

import gc
import threading
import tracemalloc
import weakref

import numpy as np
import pytest
import torch
from autograd_helpers import assert_close

import whylab
from whylab.autograd import engine_trace


def _pair(data, requires_grad=True):
    data = np.asarray(data, dtype=np.float64)
    return (
        whylab.tensor(data, dtype=whylab.float64, requires_grad=requires_grad),
        torch.tensor(data, requires_grad=requires_grad),
    )


def test_fan_out_accumulates_like_torch():
    wa, ta = _pair([1.0, -2.0, 3.0])
    for a in (wa, ta):
        b = a + a
        c = b * b
        c.sum().backward()
    assert_close(wa.grad.numpy(), ta.grad.numpy())
    assert_close(wa.grad.numpy(), 8 * np.array([1.0, -2.0, 3.0]))


def test_shared_subgraph_used_twice():
    wx, tx = _pair(np.linspace(-1, 1, 6).reshape(2, 3))
    for x in (wx, tx):
        shared = (x * 2).exp()
        left = shared.sum(0)
        right = (shared * x).sum(1)
        (left.sum() + right.prod()).backward()
    assert_close(wx.grad.numpy(), tx.grad.numpy())


def test_input_buffer_sums_contributions_once_per_node():
    a = whylab.ones(3, requires_grad=True)
    b = a * 2
    with engine_trace() as trace:
        (b + b + b).sum().backward()
    executed = trace.execution_order()
    assert sum(1 for label in executed if label.startswith("MulBackward0")) == 1
    adds = [e for e in trace.events if e["kind"] == "buffer_add"]
    assert len(adds) >= 1
    assert_close(a.grad.numpy(), [6.0, 6.0, 6.0])


def test_execution_order_follows_sequence_numbers_like_torch():
    orders = {}
    for module in (whylab, torch):
        x = module.ones(2, requires_grad=True, dtype=module.float64)
        first = x * 2
        second = x * 3
        third = first.exp() + second.sin()
        order = []
        nodes = {"first": first.grad_fn, "second": second.grad_fn, "third": third.grad_fn}
        nodes["exp"] = third.grad_fn.next_functions[0][0]
        nodes["sin"] = third.grad_fn.next_functions[1][0]
        for name, node in nodes.items():
            node.register_prehook(lambda grads, name=name, order=order: order.append(name))
        third.sum().backward()
        orders[module.__name__] = order
    assert orders["whylab"] == orders["torch"]


def test_retain_graph_allows_a_second_backward_and_accumulates():
    wx, tx = _pair([0.5, 1.5])
    for x in (wx, tx):
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
    assert_close(wx.grad.numpy(), tx.grad.numpy())


def test_second_backward_without_retain_graph_raises_torch_error():
    x = whylab.ones(3, requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_graph_without_saved_tensors_can_run_twice_like_torch():
    x = whylab.ones(3, requires_grad=True)
    y = (x + x).sum()
    y.backward()
    y.backward()
    assert_close(x.grad.numpy(), [4.0, 4.0, 4.0])


def test_inplace_modification_of_saved_tensor_raises_version_error():
    x = whylab.randn(3, 4, requires_grad=True)
    y = x.relu()  # ReluBackward0 saves its output
    y.mul_(3)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [whylab.FloatTensor [3, 4]], which is output 0 of ReluBackward0, is at "
        "version 1; expected version 0 instead. Hint: enable anomaly detection"
    )
    # A saved *input* is named by its current producer, as in PyTorch.
    y = x * 1
    product = y * y  # MulBackward0 saves y
    y.add_(1)
    with pytest.raises(
        RuntimeError,
        match=r"\[whylab.FloatTensor \[3, 4\]\], which is output 0 of "
        r"AddBackward0, is at version 1; expected version 0 instead",
    ):
        product.sum().backward()


def test_inplace_on_leaf_that_requires_grad_raises():
    x = whylab.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation.",
    ):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    with whylab.no_grad():
        x.add_(1)  # allowed: an optimizer step
    assert_close(x.detach().numpy(), [2.0, 2.0, 2.0])


def test_implicit_gradient_only_for_scalars():
    x = whylab.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        whylab.ones(1).backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        (x * 2).backward(whylab.ones(4))


def test_backward_with_inputs_accumulates_only_there():
    wa, ta = _pair([1.0, 2.0])
    wb, tb = _pair([3.0, 4.0])
    for a, b in ((wa, wb), (ta, tb)):
        mid = a * b
        mid.retain_grad()
        (mid * a).sum().backward(inputs=[b])
    assert wa.grad is None and ta.grad is None
    assert_close(wb.grad.numpy(), tb.grad.numpy())
    # a non-leaf input gets .grad too
    for a, b in ((wa, wb), (ta, tb)):
        mid = a * b
        (mid * a).sum().backward(inputs=[mid])
    assert_close(wb.grad.numpy(), tb.grad.numpy())


def test_grad_returns_gradients_without_touching_dot_grad():
    wx, tx = _pair([1.0, 2.0, 3.0])
    wy, ty = _pair([0.5, -1.0, 2.0])
    w_result = whylab.autograd.grad((wx * wy).sum(), [wx, wy])
    t_result = torch.autograd.grad((tx * ty).sum(), [tx, ty])
    for w, t in zip(w_result, t_result, strict=True):
        assert_close(w.numpy(), t.numpy())
    assert wx.grad is None and wy.grad is None


def test_grad_allow_unused_and_errors():
    x = whylab.ones(2, requires_grad=True)
    unused = whylab.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        whylab.autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = whylab.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gu is None
    assert_close(gx.numpy(), [2.0, 2.0])
    gx, gu = whylab.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert_close(gu.numpy(), [0.0, 0.0])
    with pytest.raises(
        RuntimeError, match="One of the differentiated Tensors does not require grad"
    ):
        whylab.autograd.grad((x * 2).sum(), [whylab.ones(2)])


def test_grad_skips_branches_that_do_not_lead_to_the_inputs():
    a = whylab.ones(3, requires_grad=True)
    b = whylab.ones(3, requires_grad=True)
    with engine_trace() as trace:
        whylab.autograd.grad((a.exp() * b.sin()).sum(), [a])
    executed = trace.execution_order()
    assert any(label.startswith("ExpBackward0") for label in executed)
    assert not any(label.startswith("SinBackward0") for label in executed)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_gives_differentiable_grad():
    wx, tx = _pair([0.3, -0.7, 1.1])
    for x in (wx, tx):
        y = (x.pow(3) * x.sin()).sum()
        y.backward(create_graph=True)
        first = x.grad
        assert first.requires_grad
        x.grad = None
        first.sum().backward()
    assert_close(wx.grad.numpy(), tx.grad.numpy())


def test_grad_of_leaf_keeps_leaf_dtype():
    x = whylab.ones(3, dtype=whylab.float32, requires_grad=True)
    (x.to(whylab.float64) * 2).sum().backward()
    assert x.grad.dtype is whylab.float32
    assert_close(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_accumulate_grad_steals_fresh_gradient_and_copies_shared_ones():
    x = whylab.ones(4, requires_grad=True)
    with engine_trace() as trace:
        (x * 2).sum().backward()
    modes = [e["mode"] for e in trace.events if e["kind"] == "accumulate_grad"]
    assert modes == ["steal"]
    a = whylab.ones(3, requires_grad=True)
    b = whylab.ones(3, requires_grad=True)
    (a + b).sum().backward()  # AddBackward0 hands the same tensor to both leaves
    assert a.grad is not b.grad
    a.grad.add_(1)
    assert_close(b.grad.numpy(), [1.0, 1.0, 1.0])
    leaf = whylab.ones(3, requires_grad=True)
    seed = whylab.full((3,), 5.0)
    leaf.backward(seed)
    seed.mul_(0)
    assert_close(leaf.grad.numpy(), [5.0, 5.0, 5.0])


def test_accumulate_grad_steals_a_view_only_when_its_base_is_unreachable():
    kept = []

    class Transposed(whylab.autograd.Function):
        @staticmethod
        def forward(ctx, x, keep):
            ctx.keep = keep
            return x.t().clone()

        @staticmethod
        def backward(ctx, grad):
            base = grad.t().reshape(-1).clone()  # a fresh 1-D tensor...
            if ctx.keep:
                kept.append(base)  # ...that someone else now holds
            return base.view(3, 2), None  # the gradient is a view of it

    for keep, expected in ((False, "steal"), (True, "copy")):
        x = whylab.randn(3, 2, requires_grad=True)
        with engine_trace() as trace:
            Transposed.apply(x, keep).sum().backward()
        assert [e["mode"] for e in trace.events if e["kind"] == "accumulate_grad"] == [expected]
        assert x.grad._base is None and x.grad.is_contiguous()
    kept[0].fill_(7.0)  # the copied .grad does not see writes to the base it came from
    assert_close(x.grad.numpy(), np.ones((3, 2)))


def test_accumulate_grad_adds_across_backward_calls():
    x = whylab.ones(2, requires_grad=True)
    (x * 3).sum().backward()
    first = x.grad
    with engine_trace() as trace:
        (x * 4).sum().backward()
    assert x.grad is first  # added in place
    assert [e["mode"] for e in trace.events if e["kind"] == "accumulate_grad"] == ["add"]
    assert_close(x.grad.numpy(), [7.0, 7.0])


def test_grad_layout_follows_leaf_layout():
    leaf_data = np.arange(12.0).reshape(4, 3).T  # a transposed (column-major) layout
    x = whylab.from_numpy(leaf_data).requires_grad_()
    t = torch.from_numpy(leaf_data).requires_grad_()
    (x * x).sum().backward()
    (t * t).sum().backward()
    assert x.grad.stride() == t.grad.stride()


def test_long_chain_backward_is_iterative():
    x = whylab.ones(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert_close(x.grad.numpy(), [1.0])


def test_finished_graph_has_no_reference_cycles():
    gc.collect()
    gc.disable()
    try:
        x = whylab.randn(200, 200, requires_grad=True)
        y = (x.exp().tanh().sigmoid() * x).relu().softmax(1).sum()
        node_ref = weakref.ref(y.grad_fn)
        inner_ref = weakref.ref(y.grad_fn.next_functions[0][0])
        output_ref = weakref.ref(y)
        y.backward()
        del y
        assert output_ref() is None
        assert node_ref() is None
        assert inner_ref() is None
    finally:
        gc.enable()


def test_graph_memory_is_returned_without_the_cyclic_collector():
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        x = whylab.randn(256, 256, requires_grad=True)
        baseline = tracemalloc.get_traced_memory()[0]
        for _ in range(3):
            h = x
            for _ in range(5):
                h = (h * 1.01).tanh().exp()
            h.sum().backward()
            del h
        x.grad = None
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        gc.enable()
    # 15 ops × 3 iterations of 512 KiB activations would be ~20 MiB if anything leaked
    assert after - baseline < 2 * 256 * 256 * 4


def test_saved_tensors_are_freed_after_backward():
    x = whylab.randn(64, 64, requires_grad=True)
    y = x.exp() * x
    exp_node = y.grad_fn.next_functions[0][0]
    (saved,) = [s for _, s in exp_node.saved_tensor_items()]
    assert not saved.released
    y.sum().backward()
    assert saved.released and saved.peek() is None


def test_grad_mode_is_thread_local():
    seen = {}

    def worker():
        x = whylab.ones(2, requires_grad=True)
        seen["enabled"] = whylab.is_grad_enabled()
        seen["requires_grad"] = (x * 2).requires_grad

    with whylab.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert not whylab.is_grad_enabled()
    assert seen == {"enabled": True, "requires_grad": True}
