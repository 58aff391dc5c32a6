"""The dispatcher topic: defaults, matmul's rank rules against torch, guards, bounds,
and checks that can fail."""

from __future__ import annotations

import ast
import itertools
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils._python_dispatch import TorchDispatchMode

import whylab
from whylab.dispatch import TraceEvent, trace
from whylab.explorer.experiment import GraphDiagram, ParamError, T, switched_on
from whylab.explorer.figures.graphs import render_graph
from whylab.topics.dispatcher import hop_experiment as hop
from whylab.topics.dispatcher import key_rules, matmul_rules
from whylab.topics.dispatcher import key_set_experiment as ks
from whylab.topics.dispatcher import matmul_experiment as mt
from whylab.topics.dispatcher import overhead_experiment as oh
from whylab.topics.dispatcher.experiments import EXPERIMENTS
from whylab.topics.dispatcher.trace_view import group_calls, top_level_ops

BY_NAME = {e.name: e for e in EXPERIMENTS}
NAME = T("claim", "断言")
TOPIC = Path(ks.__file__).parent


def failed(result):
    return [f"{c.name.en}: {c.measured_in('en')} vs {c.expected_in('en')}"
            for c in result.checks if not c.passed]


class _OpLog(TorchDispatchMode):
    """Records the aten operators torch runs below autograd."""

    def __init__(self):
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def torch_matmul(a: np.ndarray, b: np.ndarray, grad_a: bool, grad_b: bool):
    """torch's product op, result shape and values for a @ b."""
    ta = torch.tensor(a, requires_grad=grad_a)
    tb = torch.tensor(b, requires_grad=grad_b)
    with _OpLog() as log:
        result = ta @ tb
    product = next(op for op in log.ops if op in matmul_rules.INNER_OPS)
    return product, tuple(result.shape), result.detach().numpy()


def whylab_product(a: np.ndarray, b: np.ndarray, grad_a: bool, grad_b: bool):
    wa = whylab.tensor(a, requires_grad=grad_a)
    wb = whylab.tensor(b, requires_grad=grad_b)
    with trace() as recorded:
        result = wa @ wb
    return mt.first_product(recorded.events), tuple(result.shape)


# ---------------------------------------------------------------- defaults


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_defaults_pass_every_check(name):
    experiment = BY_NAME[name]
    result = experiment.run(**experiment.defaults())
    assert result.checks and result.passed, failed(result)


def test_timing_experiments_are_marked_as_timing_and_the_others_are_not():
    assert BY_NAME["overhead"].timing and BY_NAME["hop-cost"].timing
    assert not BY_NAME["matmul-trace"].timing and not BY_NAME["key-set"].timing


def test_topic_code_does_not_import_torch():
    for path in TOPIC.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names]
        imported += [node.module or "" for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom)]
        assert not any(name.split(".")[0] == "torch" for name in imported), path.name


# ---------------------------------------------------------------- matmul rules


@pytest.mark.parametrize("grad_a, grad_b", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("rank_a, rank_b", list(itertools.product(range(1, 5), repeat=2)))
def test_every_rank_pair_matches_torch(rank_a, rank_b, grad_a, grad_b):
    params = dict(rank_a=rank_a, rank_b=rank_b, rows=2, inner=3, cols=4, batch=3,
                  grad_a=grad_a, grad_b=grad_b, seed=1)
    result = mt.matmul_trace.run(**params)
    assert result.passed, failed(result)

    shape_a, shape_b = mt.operand_shapes(rank_a, rank_b, 2, 3, 4, 3)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    torch_op, torch_shape, torch_values = torch_matmul(a, b, grad_a, grad_b)
    prediction = matmul_rules.predict(shape_a, shape_b, grad_a, grad_b)
    assert prediction.inner_op == torch_op
    assert prediction.shape == torch_shape
    assert result.metrics["product_op"] == torch_op
    wa = whylab.tensor(a)
    np.testing.assert_allclose((wa @ whylab.tensor(b)).numpy(), torch_values, rtol=1e-12,
                               atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(rank_a=st.integers(1, 4), rank_b=st.integers(1, 4), rows=st.integers(1, 3),
       inner=st.integers(1, 3), cols=st.integers(1, 3), batch=st.integers(1, 3),
       grad_a=st.booleans(), grad_b=st.booleans())
def test_rule_table_matches_torch_with_size_one_dimensions(rank_a, rank_b, rows, inner, cols,
                                                           batch, grad_a, grad_b):
    # Sizes of 1 make the stride test of the fold rule go either way.
    shape_a, shape_b = mt.operand_shapes(rank_a, rank_b, rows, inner, cols, batch)
    a, b = np.ones(shape_a), np.ones(shape_b)
    torch_op, torch_shape, _ = torch_matmul(a, b, grad_a, grad_b)
    prediction = matmul_rules.predict(shape_a, shape_b, grad_a, grad_b)
    assert (prediction.inner_op, prediction.shape) == (torch_op, torch_shape)
    assert whylab_product(a, b, grad_a, grad_b) == (torch_op, torch_shape)


def test_shape_formula_and_broadcasting():
    assert matmul_rules.result_shape((5,), (5,)) == ()
    assert matmul_rules.result_shape((2, 1, 4, 3), (5, 3, 6)) == (2, 5, 4, 6)
    assert matmul_rules.result_shape((3,), (2, 3, 4)) == (2, 4)
    assert matmul_rules.broadcast_batch((2, 1), (3,)) == (2, 3)
    assert matmul_rules.broadcast_batch((1,), (0,)) == matmul_rules.broadcast_batch((0,), (1,))
    with pytest.raises(ValueError, match="do not broadcast"):
        matmul_rules.broadcast_batch((2,), (3,))
    with pytest.raises(ValueError, match="do not broadcast"):
        matmul_rules.broadcast_batch((0,), (2,))
    with pytest.raises(ValueError, match="inner sizes differ"):
        matmul_rules.result_shape((2, 3), (4, 5))


def test_one_d_times_two_d_is_unsqueeze_mm_squeeze():
    vector, matrix = whylab.ones(3), whylab.ones(3, 2)
    with trace() as recorded:
        vector @ matrix
    assert top_level_ops(recorded.events) == ["unsqueeze", "mm", "squeeze_"]
    calls = group_calls(recorded.events)
    assert [c.op for c in calls] == ["matmul", "unsqueeze", "mm", "squeeze_"]
    assert all(recorded.events[c.parent_hop].op == "matmul" for c in calls[1:])


def test_autograd_kernel_runs_but_records_nothing_without_grad():
    result = mt.matmul_trace.run(**{**mt.matmul_trace.defaults(), "grad_a": False,
                                    "grad_b": False})
    assert result.passed, failed(result)
    autograd = next(c for c in result.checks if "Autograd kernel" in c.name.en)
    assert "grad_fn None" in autograd.measured_in('en')


@pytest.mark.parametrize("shape_a, shape_b, grad_a, grad_b, product", [
    ((2, 3), (4, 3, 5), False, True, "bmm"),  # only the larger b requires grad: no fold
    ((2, 3), (4, 3, 5), True, False, "mm"),  # the smaller a requires grad: fold bᵀ
    ((4, 2, 3), (3, 5), True, False, "mm"),  # larger a, free view: folds either way
    ((3,), (4, 3, 5), False, True, "bmm"),
    ((3,), (4, 3, 5), True, False, "mv"),
])
def test_fold_follows_the_smaller_operands_flag_like_torch(shape_a, shape_b, grad_a, grad_b,
                                                           product):
    # The prose states this rule (it used to be a listed difference); checked against torch.
    a, b = np.ones(shape_a), np.ones(shape_b)
    assert torch_matmul(a, b, grad_a, grad_b)[0] == product
    assert whylab_product(a, b, grad_a, grad_b)[0] == product
    assert matmul_rules.predict(shape_a, shape_b, grad_a, grad_b).inner_op == product


def test_diagram_nodes_are_the_hops_and_it_renders():
    params = {**mt.matmul_trace.defaults(), "rank_a": 4, "rank_b": 3}
    result = mt.matmul_trace.run(**params)
    diagram = result.figures[0]
    assert isinstance(diagram, GraphDiagram)
    assert len(diagram.nodes) == result.metrics["hops"] == len(result.tables[1].rows)
    ids = {node.id for node in diagram.nodes}
    assert all(s in ids and t in ids for s, t, _ in diagram.edges)
    # A tree: every hop but the first has exactly one incoming arrow.
    assert sorted(t for _, t, _ in diagram.edges) == sorted(ids - {"h0"})
    svg = ET.fromstring(render_graph(diagram, "en", "fig"))
    assert svg.tag.endswith("svg")


# ---------------------------------------------------------------- key sets and guards


@pytest.mark.parametrize("op", ks.OPS)
@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("guard", ks.GUARDS)
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("x_kind", ks.X_KINDS)
def test_key_set_every_case_passes(op, device, guard, requires_grad, x_kind):
    result = ks.key_set.run(op=op, device=device, x_kind=x_kind, requires_grad=requires_grad,
                            guard=guard)
    assert result.passed, failed(result)


@pytest.mark.parametrize("guard, highest, recorded", [
    ("none", "Autograd", True),
    ("exclude-autograd", "CPU", False),
    ("include-tracer", "Tracer", True),
    ("no-grad", "Autograd", False),
    ("inference-mode", "CPU", False),
])
def test_guards_change_the_winning_key_and_the_recording(guard, highest, recorded):
    result = ks.key_set.run(op="add", device="cpu", x_kind="ordinary", requires_grad=True,
                            guard=guard)
    assert result.metrics["highest_key"] == highest
    assert (result.metrics["grad_fn"] != "—") == recorded


def test_inference_mode_bumps_the_version_of_an_ordinary_tensor_like_torch():
    # The prose states this (it used to be a listed difference); checked against torch.
    run = ks.run_op("add_", "cpu", True, "inference-mode")
    assert run.version_bumped and "ADInplaceOrView" in ks.traced_path(run.events)
    assert run.saved == ks.SAVED_IN_PLACE_ERROR
    assert "modified by an inplace operation" in run.error
    tensor = torch.ones(3) * 1
    with torch.inference_mode():
        tensor.add_(1)
    assert tensor._version == 1
    with torch.inference_mode():
        excluded = str(torch._C._dispatch_tls_local_exclude_set())
    assert "Autograd" in excluded and "ADInplaceOrView" not in excluded


@pytest.mark.parametrize("op", ks.OPS)
def test_result_keys_under_inference_mode_match_torch(op):
    # A new tensor made inside is an inference tensor; an in-place result or a view of an
    # ordinary tensor stays ordinary.
    run = ks.run_op(op, "cpu", True, "inference-mode")
    x = torch.ones(3, 4, dtype=torch.float64, requires_grad=True)
    target = x.clone() if op == "add_" else x
    with torch.inference_mode():
        if op == "add":
            out = torch.add(target, torch.ones(4, dtype=torch.float64))
        elif op == "add_":
            out = target.add_(torch.ones(4, dtype=torch.float64))
        else:
            out = target.transpose(0, 1)
    torch_keys = str(torch._C._dispatch_keys(out))
    assert ("ADInplaceOrView" in torch_keys) == ("ADInplaceOrView" in run.output_keys)
    assert ("AutogradCPU" in torch_keys) == ("Autograd" in run.output_keys)
    assert out.is_inference() == run.output.is_inference()


def test_writing_an_inference_tensor_outside_inference_mode_differs_from_torch():
    # The prose lists this difference; if the engine changes, update en.md and zh.md.
    assert "ADInplaceOrView" in str(torch._C._dispatch_tls_local_include_set())
    with torch.inference_mode():
        assert "ADInplaceOrView" not in str(torch._C._dispatch_tls_local_include_set())
        frozen = torch.ones(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside"):
        frozen.add_(1)
    assert len(whylab.dispatch.included_keys()) == 0
    with whylab.inference_mode():
        ours = whylab.ones(3)
    ours.add_(1)
    assert ours.tolist() == [2.0, 2.0, 2.0] and ours._version_counter.value == 0


def test_views_and_inplace_ops_pass_adinplaceorview():
    for op in ("add_", "transpose"):
        run = ks.run_op(op, "cpu", False, "none")
        assert ks.traced_path(run.events) == ["Tracer", "Autograd", "ADInplaceOrView", "CPU"]
    run = ks.run_op("add", "meta", False, "none")
    assert ks.traced_path(run.events) == ["Tracer", "Autograd", "Meta"]


def test_key_formula():
    keys = key_rules.call_key_set({"CPU", "Autograd", "ADInplaceOrView"}, {"Tracer"},
                                  {"Autograd"})
    assert keys == {"Tracer", "CPU", "ADInplaceOrView"}
    kernels = key_rules.OP_RULES["add"].kernel_keys()
    assert key_rules.highest_key(keys - {"Tracer"}, kernels) == "CPU"
    assert key_rules.predicted_path(keys, kernels) == ["Tracer", "CPU"]
    with pytest.raises(ValueError, match="unknown dispatch keys"):
        key_rules.by_priority({"Sparse"})


# ---------------------------------------------------------------- parameter bounds


@pytest.mark.parametrize("name, raw, message", [
    ("matmul-trace", {"rank_a": 5}, "rank_a: must be <= 4"),
    ("matmul-trace", {"rank_b": 0}, "rank_b: must be >= 1"),
    ("matmul-trace", {"rows": 7}, "rows: must be <= 6"),
    ("matmul-trace", {"batch": "two"}, "batch: expected int"),
    ("matmul-trace", {"grad_a": "maybe"}, "grad_a: expected true or false"),
    ("key-set", {"guard": "__import__('os')"}, "guard: must be one of"),
    ("key-set", {"op": "matmul"}, "op: must be one of add, add_, transpose"),
    ("key-set", {"device": "cuda"}, "device: must be one of cpu, meta"),
    ("overhead", {"largest": "4096"}, "largest: must be one of 512, 1024"),
    ("overhead", {"rounds": 0}, "rounds: must be >= 1"),
    ("overhead", {"code": "1"}, "code: unknown parameter"),
])
def test_out_of_range_params_are_rejected(name, raw, message):
    with pytest.raises(ParamError, match=message.replace("(", r"\(").replace(")", r"\)")):
        BY_NAME[name].parse_params(raw)


# ---------------------------------------------------------------- checks can fail


def _event(op, key, depth=0):
    return TraceEvent(op, key, f"kernel.{op}", depth)


def test_matmul_checks_can_fail():
    assert not mt.inner_op_check("bmm", "mm", "2d-2d").passed
    assert not mt.inner_op_check(None, "dot", "1d-1d").passed
    assert not mt.shape_check("s", NAME, (2, 3), (3, 2)).passed
    assert not mt.values_check(np.ones(3), np.ones(3) + 1e-9).passed
    assert not mt.values_check(np.ones(3), np.ones((3, 1))).passed
    out_of_order = [_event("mm", "Tracer"), _event("mm", "CPU"), _event("mm", "Autograd")]
    assert not mt.descending_keys_check(out_of_order).passed
    assert not mt.descending_keys_check([]).passed
    with_autograd = [_event("matmul", "Tracer"), _event("matmul", "Autograd"),
                     _event("mm", "Tracer", 1), _event("mm", "Autograd", 1), _event("mm", "CPU", 1)]
    assert mt.autograd_check(with_autograd, "mm", True, "MmBackward0").passed
    assert not mt.autograd_check(with_autograd, "mm", True, None).passed
    assert not mt.autograd_check(with_autograd, "mm", False, "MmBackward0").passed
    assert not mt.autograd_check(with_autograd[:2], "mm", False, None).passed
    assert not mt.inner_op_check("mm", "bmm", "bmm", "copy").passed
    assert not mt.larger_flag_check("mm", "bmm", "b").passed
    assert not mt.larger_flag_check(None, None, "a").passed


def test_key_set_checks_can_fail():
    rule = key_rules.GUARD_RULES["inference-mode"]
    assert not ks.guard_check("inference-mode", rule, frozenset(),
                              frozenset({"Autograd", "ADInplaceOrView"})).passed
    assert not ks.output_keys_check("add", "inference-mode", frozenset({"CPU"}),
                                    frozenset({"CPU", "Autograd", "ADInplaceOrView"})).passed
    assert ks.saved_tensor_check("add_", True, ks.SAVED_IN_PLACE_ERROR, "…").passed
    assert ks.saved_tensor_check("add_", False, ks.SAVED_REFUSED, "…").passed
    assert not ks.saved_tensor_check("add_", True, ks.SAVED_NO_ERROR, None).passed
    assert not ks.saved_tensor_check("add_", False, ks.SAVED_NO_ERROR, None).passed
    assert not ks.saved_tensor_check("add_", False, ks.SAVED_IN_PLACE_ERROR, "…").passed
    assert not ks.saved_tensor_check("add_", True, ks.SAVED_OTHER_ERROR, "other").passed
    assert ks.saved_tensor_check("add", True, None, None).state == "not_applicable"
    assert not ks.highest_key_check("Autograd", ["Tracer", "CPU"], frozenset({"CPU"})).passed
    assert not ks.path_check(["Tracer", "Autograd", "CPU"], ["Tracer", "CPU"]).passed
    declared = {op: key_rules.OP_RULES[op].kernel_keys() for op in ("add", "add_")}
    assert not ks.kernel_table_check("add", declared["add"], frozenset({"Tracer", "CPU"})).passed
    assert not ks.fallthrough_check("add", declared["add"], frozenset({"ADInplaceOrView"}),
                                    ["Tracer", "ADInplaceOrView", "CPU"]).passed
    assert not ks.fallthrough_check("add_", declared["add_"], frozenset({"ADInplaceOrView"}),
                                    ["CPU"]).passed
    no_grad, none = key_rules.GUARD_RULES["no-grad"], key_rules.GUARD_RULES["none"]
    assert not ks.recording_check(True, no_grad, frozenset({"Autograd"}), True).passed
    assert not ks.recording_check(True, none, frozenset({"Autograd"}), False).passed
    cpu = whylab.ones(2, 3)
    assert not ks.meta_check(cpu, cpu).passed  # holds data: not a Meta result
    meta = whylab.empty(3, 2, device="meta", dtype=whylab.float32)
    assert not ks.meta_check(cpu, meta).passed  # wrong shape
    assert ks.meta_check(cpu, whylab.empty(2, 3, device="meta", dtype=cpu.dtype)).passed
    assert not ks.version_check("add_", False, ["Tracer", "ADInplaceOrView", "CPU"]).passed
    assert not ks.version_check("add_", True, ["Tracer", "CPU"]).passed
    assert ks.version_check("add_", False, ["Tracer", "CPU"]).passed
    assert ks.version_check("add", False, []).state == "not_applicable"
    assert not ks.values_check(np.ones(2), np.zeros(2)).passed


def test_overhead_checks_can_fail():
    assert oh.timing_check("r", NAME, [1.5] * 9, at_least=2.0).state == "failed"
    assert oh.timing_check("r", NAME, [1.6] * 9, at_most=1.5).state == "failed"
    assert oh.timing_check("r", NAME, [1.1] * 9, at_most=1.5).passed
    assert oh.timing_check("r", NAME, [1.1, 1.9] * 5, at_most=1.5).state == "inconclusive"


# ---------------------------------------------------------------- audit defects, against torch


@pytest.mark.parametrize("guard", ["none", "inference-mode"])
def test_the_inference_tensor_branch_of_both_exactly_when_checks_is_reached(guard):
    # An inference x carries no ADInplaceOrView key: the write is not counted, and
    # autograd refuses to save the tensor, as torch does.
    result = ks.key_set.run(op="add_", device="cpu", x_kind="inference", requires_grad=True,
                            guard=guard)
    assert result.passed, failed(result)
    version = result.check("version-iff-adinplace")
    assert version.state == "passed" and version.measured_in("en") == "unchanged"
    saved = result.check("saved-write-noticed")
    assert saved.state == "passed" and "refused" in saved.measured_in("en")
    ordinary = ks.key_set.run(op="add_", device="cpu", x_kind="ordinary", requires_grad=True,
                              guard=guard)
    assert ordinary.check("version-iff-adinplace").measured_in("en") == "bumped"
    assert "in-place error" in ordinary.check("saved-write-noticed").measured_in("en")
    with torch.inference_mode():
        frozen = torch.ones(3, 4, dtype=torch.float64)
    weight = torch.ones(3, 4, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        weight * frozen
    with torch.inference_mode():
        frozen.add_(1)  # allowed inside, and an inference tensor has no version to bump
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        assert frozen._version is None  # never reached: reading it raises


def test_a_write_behind_the_counter_fails_both_exactly_when_checks():
    with switched_on("write-behind-counter"):
        result = ks.key_set.run(**ks.key_set.defaults())
    assert result.check("version-iff-adinplace").state == "failed"
    assert result.check("saved-write-noticed").state == "failed"
    with switched_on("backend-bumps-version"):
        result = ks.key_set.run(**{**ks.key_set.defaults(), "x_kind": "inference"})
    assert result.check("version-iff-adinplace").state == "failed"


SIZE_ZERO_PAIRS = [((0,), (1,)), ((1,), (0,)), ((0, 1), (3, 0)), ((2, 1, 0), (1, 4, 1)),
                   ((0,), (2,)), ((2,), (0,)), ((0, 3), (1,))]


@pytest.mark.parametrize("batch_a, batch_b", SIZE_ZERO_PAIRS)
def test_size_zero_broadcast_matches_torch(batch_a, batch_b):
    try:
        expected = tuple(torch.broadcast_shapes(batch_a, batch_b))
    except RuntimeError:
        expected = None
    try:
        ours = matmul_rules.broadcast_batch(batch_a, batch_b)
    except ValueError:
        ours = None
    assert ours == expected
    a, b = torch.ones(*batch_a, 2, 3), torch.ones(*batch_b, 3, 4)
    try:
        torch_shape = tuple((a @ b).shape)
    except RuntimeError:
        torch_shape = None
    try:
        engine_shape = tuple((whylab.ones(*batch_a, 2, 3) @ whylab.ones(*batch_b, 3, 4)).shape)
    except RuntimeError:
        engine_shape = None
    assert engine_shape == torch_shape == (None if expected is None else expected + (2, 4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=3), st.lists(st.integers(0, 3), max_size=3))
def test_broadcast_rule_matches_torch_on_random_batches(batch_a, batch_b):
    try:
        expected = tuple(torch.broadcast_shapes(tuple(batch_a), tuple(batch_b)))
    except RuntimeError:
        expected = None
    try:
        ours = matmul_rules.broadcast_batch(tuple(batch_a), tuple(batch_b))
    except ValueError:
        ours = None
    assert ours == expected


def test_the_max_rule_fails_the_size_zero_check():
    with switched_on("broadcast-takes-max"):
        result = mt.matmul_trace.run(**mt.matmul_trace.defaults())
    check = result.check("size-zero-broadcast")
    assert check.state == "failed" and "(1, 2, 2)" in check.expected_in("en")


def test_a_matmul_rule_that_never_folds_is_caught():
    with switched_on("fold-never"):
        result = mt.matmul_trace.run(**mt.matmul_trace.defaults())
    assert result.check("product-as-rule-table").state == "failed"
    assert matmul_rules.predict((3, 2, 3), (3, 2), True, True, folds=False).inner_op == "bmm"


def test_hop_paths_are_what_the_trace_shows():
    assert [hop.traced_hops(name) for name in hop.FITTED] == [1, 2, 3, 4]
    t0, per_hop = hop.line_fit([1, 2, 3], [2.0, 3.0, 4.0])
    assert (round(t0, 9), round(per_hop, 9)) == (1.0, 1.0)
    with switched_on("guards-do-nothing"):
        assert [hop.traced_hops(name) for name in hop.FITTED] == [1, 1, 1, 1]


def test_a_view_of_an_inference_tensor_keeps_its_keys_like_torch():
    with torch.inference_mode():
        frozen = torch.ones(3, 4)
    assert "ADInplaceOrView" not in str(torch._C._dispatch_keys(frozen.t()))
    run = ks.run_op("transpose", "cpu", False, "none", inference=True)
    assert run.output_keys == {"CPU"} and run.output.is_inference()
