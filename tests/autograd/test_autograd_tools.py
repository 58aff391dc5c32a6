"""gradcheck, detect_anomaly, graph export, engine trace and saved-tensor memory."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import whylab
from whylab.autograd import (
    Function,
    GradcheckError,
    detect_anomaly,
    engine_trace,
    gradcheck,
    gradgradcheck,
    saved_tensors_bytes,
)
from whylab.autograd.graph_export import to_dot, to_json


class WrongSquare(Function):
    """Forward x², backward claims 3x (should be 2x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * grad


class FirstOrderOnlySquare(Function):
    """Right first derivative, but its backward is not differentiable (uses NumPy)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return whylab.from_numpy(2 * x.detach().numpy() * grad.detach().numpy())


def _x():
    return whylab.tensor(np.array([0.5, -1.5, 2.0]), dtype=whylab.float64, requires_grad=True)


def test_gradcheck_catches_a_wrong_formula():
    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"
    ):
        gradcheck(WrongSquare.apply, (_x(),))
    assert gradcheck(WrongSquare.apply, (_x(),), raise_exception=False) is False


def test_gradgradcheck_catches_a_non_differentiable_backward():
    assert gradcheck(FirstOrderOnlySquare.apply, (_x(),))
    assert gradgradcheck(FirstOrderOnlySquare.apply, (_x(),), raise_exception=False) is False


def test_gradcheck_requires_float64():
    x = whylab.ones(3, requires_grad=True)
    with pytest.raises(GradcheckError, match="use float64 inputs"):
        gradcheck(lambda t: t * 2, (x,))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_detect_anomaly_names_the_forward_op():
    x = whylab.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        y = x.log() * 0  # forward: -inf * 0 = nan; backward: LogBackward0 computes 0 / 0
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert message.startswith("Function 'LogBackward0' returned nan values in its 0th output.")
    assert "test_autograd_tools.py" in message  # the forward traceback points at this file
    # without anomaly mode the same backward silently produces nan
    x.grad = None
    (x.log() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def test_detect_anomaly_warns_with_forward_trace_on_error():
    x = whylab.ones(2, requires_grad=True)
    with detect_anomaly():
        h = x * 1
        y = h.sin()  # SinBackward0 saves h
        h.add_(1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
    assert any("Error detected in SinBackward0" in str(w.message) for w in caught)


def test_graph_export_json_structure():
    x = whylab.ones(2, 3, requires_grad=True)
    w = whylab.ones(3, 4, requires_grad=True)
    out = (x @ w).relu().sum()
    graph = to_json(out)
    json.dumps(graph)  # plain data
    names = [node["name"] for node in graph["nodes"]]
    assert names[0] == "SumBackward0" and graph["roots"] == ["n0"]
    assert {"ReluBackward0", "MmBackward0"} <= set(names)
    leaves = [node for node in graph["nodes"] if node["kind"] == "leaf"]
    assert sorted(tuple(leaf["variable"]["shape"]) for leaf in leaves) == [(2, 3), (3, 4)]
    mm = next(node for node in graph["nodes"] if node["name"] == "MmBackward0")
    saved = {item["name"]: item for item in mm["saved"]}
    assert saved["self"]["shape"] == [2, 3] and saved["mat2"]["shape"] == [3, 4]
    assert saved["self"]["dtype"] == "float32" and not saved["self"]["released"]
    relu = next(node for node in graph["nodes"] if node["name"] == "ReluBackward0")
    assert relu["saved"][0]["is_output"] and relu["inputs"] == [
        {"shape": [2, 4], "dtype": "float32"}
    ]
    ids = {node["id"]: node["name"] for node in graph["nodes"]}
    edges = {(ids[e["source"]], ids[e["target"]], e["index"]) for e in graph["edges"]}
    assert ("ReluBackward0", "MmBackward0", 0) in edges
    assert ("MmBackward0", "AccumulateGrad", 0) in edges and (
        "MmBackward0",
        "AccumulateGrad",
        1,
    ) in edges
    out.backward()
    released = to_json(out)
    assert all(item["released"] for node in released["nodes"] for item in node["saved"])


def test_graph_export_dot():
    x = whylab.ones(2, requires_grad=True)
    dot = to_dot((x.exp() * x).sum())
    assert dot.startswith("digraph autograd {") and dot.rstrip().endswith("}")
    assert "MulBackward0" in dot and "ExpBackward0" in dot and "AccumulateGrad" in dot
    assert "result: [2]" in dot
    assert dot.count("->") == 4


def test_engine_trace_records_dependencies_buffers_and_accumulation():
    a = whylab.ones(3, requires_grad=True)
    b = a * 2
    with engine_trace() as trace:
        (b * b).sum().backward()
    kinds = [event["kind"] for event in trace.events]
    assert kinds[0] == "dependencies"
    counts = trace.events[0]["counts"]
    mul_labels = sorted(label for label in counts if label.startswith("MulBackward0"))
    assert [counts[label] for label in mul_labels] == [2, 1]  # b feeds the product twice
    assert trace.execution_order()[0] == "GraphRoot"
    assert [e["input_nr"] for e in trace.events if e["kind"] == "buffer_add"] == [0]
    assert [e["mode"] for e in trace.events if e["kind"] == "accumulate_grad"] == ["steal"]


def test_saved_tensors_bytes_counts_each_storage_once():
    x = whylab.ones(4, 4, dtype=whylab.float64, requires_grad=True)
    y = x.exp()  # saves its result: 128 bytes
    z = y * x  # saves y (same storage as exp's result) and x (128 bytes)
    assert saved_tensors_bytes(z) == 256
    assert saved_tensors_bytes(z, include_parameters=False) == 128
    z.sum().backward()
    assert saved_tensors_bytes(z) == 0


def test_saved_value_accessors_like_torch():
    import torch

    data = np.array([[0.5, -1.0], [2.0, 0.25]])
    results = {}
    for module in (whylab, torch):
        x = module.tensor(data, requires_grad=True)
        y = module.tensor(data * 3, requires_grad=True)
        product = x * y
        exp = x.exp()
        summed = x.sum(1)
        results[module.__name__] = (
            product.grad_fn._saved_other.detach().numpy(),
            product.grad_fn._saved_self.detach().numpy(),
            exp.grad_fn._saved_result.detach().numpy(),
            tuple(summed.grad_fn._saved_self_sym_sizes if module is torch else
                  summed.grad_fn._saved_self_shape),
        )
    for w, t in zip(results["whylab"], results["torch"], strict=True):
        np.testing.assert_allclose(np.asarray(w), np.asarray(t))
    node = (whylab.ones(2, requires_grad=True) * 2).grad_fn
    assert node._saved_other == 2
    with pytest.raises(AttributeError):
        _ = node._saved_nothing
