"""The autograd topic: every experiment and choice runs, bounds hold, and the checks can fail.

Default runs and formula conversion are also covered for every topic by
tests/explorer/test_topics_valid.py; here the defaults are additionally held to
the specific values the prose relies on.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import whylab
from whylab.explorer.content.topics import load_topic
from whylab.explorer.experiment import GraphDiagram, ParamError, T, switched_on
from whylab.topics import shared
from whylab.topics.autograd import (
    backward_trace,
    comparisons,
    sabotage,
    stability,
    torch_reference,
)
from whylab.topics.autograd import experiments as topic
from whylab.topics.autograd.datasets import DATASETS, make_dataset
from whylab.topics.autograd.expressions import (
    EXPRESSIONS,
    leaf_tensors,
    make_case,
    mlp_backward,
)
from whylab.topics.autograd.jacobian_experiments import engine_work
from whylab.topics.autograd.memory_experiments import Stack
from whylab.topics.autograd.numerical_experiments import (
    SMOOTH_EXPRESSIONS,
    fitted_slope,
    slope_check,
)
from whylab.topics.autograd.run_time_graph_experiments import (
    doubled_until_large,
    doublings_needed,
)
from whylab.topics.autograd.training_experiment import hand_backward_error

FOLDER = Path(topic.__file__).parent
BY_NAME = {e.name: e for e in topic.EXPERIMENTS}
NAME = T("claim", "断言")


def failed(result):
    return [f"{c.name.en}: {c.measured_in('en')}" for c in result.checks if not c.passed]


def run(name, **params):
    experiment = BY_NAME[name]
    return experiment.run(**experiment.parse_params(params))


# ---------------------------------------------------------------- the page


def test_topic_loads_and_places_every_experiment_once():
    loaded = load_topic(FOLDER)
    assert loaded.slug == "autograd"
    placed = [p.name for p in loaded.placements()]
    assert sorted(placed) == sorted(BY_NAME)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_prose_length_and_headings(lang):
    text = (FOLDER / f"{lang}.md").read_text(encoding="utf-8")
    without_math = re.sub(r"\$\$.+?\$\$|\$.+?\$", " ", text, flags=re.S)
    if lang == "en":
        assert 900 <= len(re.findall(r"[A-Za-z]+", without_math)) <= 1800
    else:
        assert 1400 <= len(re.findall(r"[\u4e00-\u9fff]", without_math)) <= 3200
    assert len(re.findall(r"^## ", text, re.MULTILINE)) >= 10


# ---------------------------------------------------------------- negative controls


def run_under(control, name, **params):
    with switched_on(control):
        return run(name, **params)


# ---------------------------------------------------------------- defaults and choices


def test_defaults_show_what_the_prose_says():
    for experiment in topic.EXPERIMENTS:
        result = experiment.run(**experiment.defaults())
        assert result.checks and result.passed, (experiment.name, failed(result))
    stable = run("softmax-ce-stability")
    # The default sweep reaches the breakdowns the prose describes (float32).
    assert 0 < stable.metrics["naive_first_failure_scale"] <= 100
    assert 0 < stable.metrics["separate_first_inf_scale"] <= 1000
    fd = run("finite-differences")
    assert fd.metrics["best_error"] < 1e-9
    trained = run("train")
    assert trained.metrics["test_accuracy"] >= 0.9


@pytest.mark.parametrize("expression", list(EXPRESSIONS))
def test_graph_of_every_expression(expression):
    result = run("graph", expression=expression, seed=7)
    assert result.passed, failed(result)
    diagram = result.figures[0]
    assert isinstance(diagram, GraphDiagram)
    case = make_case(expression, 7)
    leaves = [n for n in diagram.nodes if n.label == "AccumulateGrad"]
    assert len(leaves) == len(case.leaves)
    recorded = sorted(n.label for n in diagram.nodes if n.group == "grad_fn")
    assert recorded == torch_reference.RECORDED_NODES[expression]
    ids = {n.id for n in diagram.nodes}
    assert all(source in ids and target in ids for source, target, _ in diagram.edges)
    assert [row[0] for row in result.tables[0].rows] == list(range(1, len(diagram.nodes) + 1))


def test_graph_draws_parallel_edges_once_with_a_count():
    diagram = run("graph", expression="fan-out").figures[0]
    labels = [label for _, _, label in diagram.edges]
    assert "[5] ×2" in labels  # x * x sends two gradients to x's AccumulateGrad


def test_graph_shows_what_matmul_saved():
    diagram = run("graph", expression="tanh-affine").figures[0]
    matmul = next(n for n in diagram.nodes if n.label == "MmBackward0")
    assert matmul.detail == "_saved_self [3, 4]"  # x is data: only dW = xᵀ dY is needed


@pytest.mark.parametrize("expression", SMOOTH_EXPRESSIONS)
@pytest.mark.parametrize("log10_h", [-6.0, -4.5])
def test_finite_differences_for_every_choice(expression, log10_h):
    result = run("finite-differences", expression=expression, log10_h=log10_h, seed=3)
    assert result.passed, failed(result)
    chart = result.figures[0]
    assert chart.log_x and chart.log_y and len(chart.series[0].x) == 23


@pytest.mark.parametrize("log10_h", [-12.0, -1.0])
def test_a_step_far_from_the_optimum_fails_only_the_agreement_check(log10_h):
    result = run("finite-differences", log10_h=log10_h)
    assert failed(result) and len(failed(result)) == 1
    assert not result.checks[0].passed


@pytest.mark.parametrize("inputs, outputs", [(1, 1), (1, 32), (32, 1), (12, 7)])
def test_modes_shapes(inputs, outputs):
    result = run("modes", inputs=inputs, outputs=outputs, seed=5)
    assert result.passed, failed(result)
    # f = W2 tanh(W1 x + c) records four nodes (mv, add, tanh, mv); each pass runs each once.
    assert result.tables[0].rows == [[f"{outputs} × {inputs}", outputs, 4 * outputs, inputs]]
    vector_check = result.check("vector-needs-grad-output")
    assert vector_check.state == ("not_applicable" if outputs == 1 else "passed")


@pytest.mark.parametrize("classes", [2, 32])
def test_local_rules_extremes(classes):
    result = run("local-rules", classes=classes, seed=2**31 - 1)
    assert result.passed, failed(result)


THRESHOLD_CHECKS = ("separate-inf-past-underflow", "separate-inf-gradient", "naive-overflow")


@pytest.mark.parametrize("dtype, largest_vacuous", [("float32", 1), ("float64", 2)])
def test_threshold_checks_are_not_applicable_where_no_sample_crosses(dtype, largest_vacuous):
    """At small scales no sample passes a threshold: the "breaks exactly where" claims
    have no evidence, so they must say so instead of passing."""
    for scale in range(largest_vacuous + 1):
        result = run("softmax-ce-stability", dtype=dtype, max_log10_scale=scale)
        for check_id in THRESHOLD_CHECKS:
            check = result.check(check_id)
            assert check.state == "not_applicable", (scale, check_id)
            assert "max_log10_scale" in check.when_applicable.en
        assert result.passed  # a not-applicable check is no failure either
    reached = run("softmax-ce-stability", dtype=dtype, max_log10_scale=largest_vacuous + 1)
    assert all(reached.check(c).state == "passed" for c in THRESHOLD_CHECKS)


def test_underflow_threshold_with_and_without_subnormals():
    assert stability.underflow_loss(np.float32) == pytest.approx(150 * math.log(2))
    assert stability.underflow_loss(np.float32) == pytest.approx(103.97, abs=0.01)
    assert stability.underflow_loss(np.float32, flush_to_zero=True) == pytest.approx(87.34,
                                                                                      abs=0.01)
    # NumPy keeps subnormals: e^-103.9 survives in float32, e^-104 rounds to zero.
    assert np.exp(np.float32(-103.9)) > 0 and np.exp(np.float32(-104.0)) == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("max_log10_scale", [0, 6])
def test_stability_in_both_dtypes(dtype, max_log10_scale):
    result = run("softmax-ce-stability", dtype=dtype, max_log10_scale=max_log10_scale, seed=4)
    assert result.passed, failed(result)
    first_inf = result.metrics["separate_first_inf_scale"]
    if max_log10_scale == 0:
        assert first_inf == 0.0  # logits of scale 1 never break anything
    else:
        # float64 has a far wider range, so it breaks at larger scales
        assert 10 < first_inf < (200 if dtype == "float32" else 3000)


@pytest.mark.parametrize("size, passes", [(1, 1), (8, 4)])
def test_fan_out_extremes(size, passes):
    result = run("fan-out", size=size, passes=passes, seed=9)
    assert result.passed, failed(result)
    expected = "not_applicable" if passes == 1 else "passed"
    assert result.check("passes-add-up").state == expected
    assert result.check("write-then-add").state == expected
    assert result.metrics["grad_over_a_after_passes"] == pytest.approx(8 * passes)


@pytest.mark.parametrize("dataset", DATASETS)
def test_train_runs_on_every_dataset(dataset):
    result = run("train", dataset=dataset, hidden=16, steps=30, lr=0.5, seed=1)
    by_name = {c.name.en: c for c in result.checks}
    assert all(c.passed for name, c in by_name.items() if "gradients" in name or "SGD" in name)
    assert len(result.figures[0].series[0].x) == len(result.figures[1].series[0].x) > 2


def test_train_checks_fail_when_training_is_too_short():
    result = run("train", dataset="spirals", steps=5, seed=0)
    assert len(failed(result)) == 2  # loss and accuracy; the gradient checks still hold
    assert result.checks[0].passed and result.checks[1].passed


# ---------------------------------------------------------------- bounds


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("graph", {"expression": "__import__('os')"}, "expression: must be one of"),
        ("graph", {"seed": -1}, "seed: must be >= 0"),
        ("finite-differences", {"expression": "mlp"}, "expression: must be one of"),
        ("finite-differences", {"log10_h": -13}, "log10_h: must be >= -12"),
        ("finite-differences", {"log10_h": "nan"}, "log10_h: must be a finite number"),
        ("modes", {"inputs": 33}, "inputs: must be <= 32"),
        ("modes", {"outputs": 0}, "outputs: must be >= 1"),
        ("local-rules", {"classes": 1}, "classes: must be >= 2"),
        ("softmax-ce-stability", {"max_log10_scale": 7}, "max_log10_scale: must be <= 6"),
        ("softmax-ce-stability", {"dtype": "float16"}, "dtype: must be one of"),
        ("fan-out", {"passes": 5}, "passes: must be <= 4"),
        ("train", {"steps": 3001}, "steps: must be <= 3000"),
        ("train", {"lr": 0}, "lr: must be >= 0.001"),
        ("train", {"hidden": 129}, "hidden: must be <= 128"),
        ("train", {"optimizer": "adam"}, "optimizer: unknown parameter"),
    ],
)
def test_out_of_range_parameters_are_rejected(name, params, message):
    with pytest.raises(ParamError, match=re.escape(message)):
        BY_NAME[name].parse_params(params)


# ---------------------------------------------------------------- the checks can fail


def test_relative_error_rejects_wrong_shapes_and_non_finite_values():
    reference = np.array([1.0, 2.0])
    assert comparisons.relative_error(reference, reference) == 0.0
    assert comparisons.relative_error(np.array([1.0, 2.0, 3.0]), reference) == math.inf
    assert comparisons.relative_error(np.array([1.0, np.nan]), reference) == math.inf
    assert comparisons.gradients_error({"a": reference}, {"b": reference}) == math.inf


def test_a_wrong_gradient_rule_fails_the_agreement_check():
    case = make_case("fan-out", 0)
    leaves = leaf_tensors(case.leaves)
    case.loss(leaves).backward()
    engine = {"x": leaves["x"].grad.numpy()}
    right = comparisons.gradients_error(engine, case.gradient(case.leaves))
    forgot_a_use = comparisons.gradients_error(engine, {"x": case.leaves["x"] + 1.0})
    tolerance = comparisons.EXACT_TOLERANCE
    assert shared.error_check(NAME, right, tolerance, id="a").passed
    assert not shared.error_check(NAME, forgot_a_use, tolerance, id="a").passed


def test_mlp_reference_backward_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, labels = rng.standard_normal((7, 3)), rng.integers(0, 4, 7)
    values = {"w1": rng.standard_normal((3, 5)), "b1": rng.standard_normal(5),
              "w2": rng.standard_normal((5, 4)), "b2": rng.standard_normal(4)}
    params = {k: torch.tensor(v, requires_grad=True) for k, v in values.items()}
    hidden = torch.relu(torch.tensor(x) @ params["w1"] + params["b1"])
    loss = torch.nn.functional.cross_entropy(hidden @ params["w2"] + params["b2"],
                                             torch.tensor(labels))
    loss.backward()
    reference = mlp_backward(x, labels, **values)
    for name, tensor in params.items():
        np.testing.assert_allclose(reference[name], tensor.grad.numpy(), rtol=1e-12, atol=1e-14)


def _traced(expression="mlp"):
    case = make_case(expression, 0)
    leaves = leaf_tensors(case.leaves)
    return backward_trace.trace_backward(case.loss(leaves), leaves)


def test_dependency_order_check_fails_on_a_wrong_order():
    trace = _traced()
    assert backward_trace.runs_in_dependency_order(trace)
    trace.executed.reverse()
    assert not backward_trace.runs_in_dependency_order(trace)
    trace.executed.reverse()
    trace.executed.append(trace.executed[0])  # a node that ran twice
    assert not backward_trace.runs_in_dependency_order(trace)


def test_dependency_count_check_fails_on_a_wrong_count():
    trace = _traced()
    assert backward_trace.dependency_mismatches(trace) == []
    some_node = trace.executed[1]
    trace.dependencies[some_node] += 1
    assert backward_trace.dependency_mismatches(trace) == [some_node]


def test_product_saves_notice_an_unneeded_save():
    trace = _traced("tanh-affine")
    assert backward_trace.product_saves(trace) == torch_reference.PRODUCT_SAVES["tanh-affine"]
    matmul = next(n for n in trace.nodes if n["name"] == "MmBackward0")
    matmul["saved"].append({"name": "mat2", "shape": [4, 2], "released": False})
    assert backward_trace.product_saves(trace) == [("MmBackward0", ["mat2", "self"])]


def test_trace_counts_buffer_sums_at_fan_out():
    trace = _traced("fan-out")
    leaf = next(iter(trace.leaf_names))
    assert trace.dependencies[leaf] == 3 and trace.buffer_sums[leaf] == 2


def test_slope_check_tells_h_squared_from_h():
    exponents = [-3.0, -2.5, -2.0, -1.5, -1.0]
    quadratic = [10.0 ** (2 * k) for k in exponents]
    linear = [10.0 ** k for k in exponents]
    assert fitted_slope(exponents, quadratic) == pytest.approx(2.0)
    assert slope_check(NAME, fitted_slope(exponents, quadratic), 2.0, id="s").passed
    assert not slope_check(NAME, fitted_slope(exponents, linear), 2.0, id="s").passed


def test_reference_losses_are_exact_where_float64_is_not_enough():
    logits = np.array([[0.0, 1.0, 2.0], [1000.0, 0.0, -1000.0]])
    labels = np.array([0, 2])
    reference = stability.reference_losses(logits, labels)
    expected_first = np.log(np.exp(0.0) + np.exp(1.0) + np.exp(2.0))
    assert reference[0] == pytest.approx(expected_first, rel=1e-15)
    assert reference[1] == 2000.0  # log(e^1000 + ...) - (-1000), beyond exp's float64 range


def test_threshold_violations_catch_both_sides():
    measure = np.array([1.0, 50.0, 200.0])
    assert stability.threshold_violations(np.array([1.0, 2.0, np.inf]), measure, 100.0) == 0
    assert stability.threshold_violations(np.array([1.0, 2.0, 3.0]), measure, 100.0) == 1
    assert stability.threshold_violations(np.array([np.inf, 2.0, np.inf]), measure, 100.0) == 1
    assert stability.threshold_violations(np.array([np.inf, 2.0, np.inf]), measure, 100.0,
                                          both_sides=False) == 0


def test_loss_errors_mark_non_finite_values():
    errors = stability.loss_errors(np.array([1.0, np.inf, np.nan, 0.0]),
                                   np.array([1.0, 5.0, 5.0, 1e-30]))
    assert errors[0] == 0.0 and np.isinf(errors[1]) and np.isinf(errors[2])
    assert errors[3] == pytest.approx(1e-30)  # an absolute error below 1


def test_hand_backward_error_notices_a_wrong_gradient():
    first, second = whylab.nn.Linear(2, 4, dtype=whylab.float64), whylab.nn.Linear(
        4, 2, dtype=whylab.float64)
    points, labels = make_dataset("rings", 16, 0)
    model = whylab.nn.Sequential(first, whylab.nn.ReLU(), second)
    loss = whylab.nn.functional.cross_entropy(model(whylab.from_numpy(points)),
                                              whylab.from_numpy(labels))
    loss.backward()
    assert hand_backward_error(first, second, points, labels) < 1e-13
    first.bias.grad = first.bias.grad * 2.0
    assert hand_backward_error(first, second, points, labels) > 1e-3


def test_datasets_are_seeded_and_balanced():
    for kind in DATASETS:
        points, labels = make_dataset(kind, 60, 3)
        again, _ = make_dataset(kind, 60, 3)
        assert np.array_equal(points, again) and points.shape == (60, 2)
        assert np.allclose(points.mean(axis=0), 0.0) and np.allclose(points.std(axis=0), 1.0)
        assert len(set(np.bincount(labels))) == 1


# ---------------------------------------------------------------- the audit's defects


def test_modes_counts_the_work_from_the_engine_not_from_its_loop():
    """The pass and node-run counts come from engine_trace: building the Jacobian entry by
    entry (m·n passes) instead of row by row is caught."""
    honest = run("modes", inputs=6, outputs=2)
    assert honest.metrics["reverse_passes"] == 2 and honest.metrics["reverse_node_runs"] == 8
    wasteful = run_under("jacobian-entry-by-entry", "modes", inputs=6, outputs=2)
    assert wasteful.check("reverse-rows").passed  # the same Jacobian ...
    assert not wasteful.check("reverse-work").passed  # ... at n times the work
    assert wasteful.metrics["reverse_passes"] == 12 and wasteful.metrics["reverse_node_runs"] == 48


def test_engine_work_reads_passes_and_node_runs():
    x = whylab.ones(3, dtype=whylab.float64, requires_grad=True)
    y = (x * x).sum()
    with whylab.autograd.engine_trace() as trace:
        y.backward(retain_graph=True)
        y.backward()
    assert engine_work(trace) == (2, 6)  # SumBackward0, MulBackward0, AccumulateGrad, twice


def _torch_graph(expression):
    """Build ``expression`` in torch (the same shapes), return (node names, product saves)."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    case = make_case(expression, 0)
    leaves = {k: torch.tensor(v, requires_grad=True) for k, v in case.leaves.items()}
    rng = np.random.default_rng(0)
    if expression == "tanh-affine":
        loss = (torch.tensor(rng.standard_normal((3, 4))) @ leaves["w"] + leaves["b"]).tanh().sum()
    elif expression == "softmax-ce":
        loss = F.cross_entropy(torch.tensor(rng.standard_normal((4, 5))) @ leaves["W"],
                               torch.tensor([0, 1, 2, 0]))
    elif expression == "linear-ce":
        loss = F.cross_entropy(F.linear(torch.tensor(rng.standard_normal((4, 3))), leaves["W"],
                                        leaves["b"]), torch.tensor([0, 1, 2, 3]))
    elif expression == "fan-out":
        loss = (leaves["x"] * leaves["x"] + leaves["x"]).sum()
    elif expression == "diff-squares":
        loss = ((leaves["a"] + leaves["b"]) * (leaves["a"] - leaves["b"])).sum()
    else:
        hidden = (torch.tensor(rng.standard_normal((6, 3))) @ leaves["w1"] + leaves["b1"]).relu()
        loss = F.cross_entropy(hidden @ leaves["w2"] + leaves["b2"], torch.tensor([0, 1, 2] * 2))
    nodes, stack = [], [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in nodes:
            continue
        nodes.append(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    names = sorted(n.name() for n in nodes if not n.name().endswith("AccumulateGrad"))
    saves = sorted(
        (n.name(), sorted(a[len("_saved_"):] for a in dir(n) if a.startswith("_saved_")
                          and isinstance(getattr(n, a), torch.Tensor)))
        for n in nodes if n.name() in backward_trace.PRODUCT_NODES)
    return names, saves


@pytest.mark.parametrize("expression", list(EXPRESSIONS))
def test_the_reference_lists_are_what_torch_records(expression):
    torch = pytest.importorskip("torch")
    assert torch.__version__.startswith(torch_reference.TORCH_VERSION)
    names, saves = _torch_graph(expression)
    assert names == torch_reference.RECORDED_NODES[expression]
    assert saves == torch_reference.PRODUCT_SAVES[expression]


def test_cross_entropy_is_drawn_with_torch_names():
    diagram = run("graph", expression="softmax-ce").figures[0]
    labels = [n.label for n in diagram.nodes]
    assert "NllLossBackward0" in labels and "LogSoftmaxBackward0" in labels
    assert not any(label.startswith("_") for label in labels)


# ---------------------------------------------------------------- sabotage helpers


def test_replace_backward_changes_the_rule_and_needs_a_node():
    x = whylab.tensor([0.5], dtype=whylab.float64, requires_grad=True)
    y = x.tanh().sum()
    assert sabotage.replace_backward(y, "TanhBackward0", sabotage.pass_through) == 1
    y.backward()
    assert x.grad.item() == 1.0  # the local derivative 1 - tanh(0.5)^2 was forgotten
    with pytest.raises(LookupError, match="no ExpBackward0"):
        sabotage.replace_backward(x.tanh().sum(), "ExpBackward0", sabotage.pass_through)


def test_eager_backward_gets_the_sum_right_but_runs_nodes_once_per_gradient():
    a = whylab.tensor([1.5, -2.0], dtype=whylab.float64, requires_grad=True)
    c = (a + a) * (a + a)
    with whylab.autograd.engine_trace() as trace:
        sabotage.eager_backward(c, whylab.ones_like(c))
    np.testing.assert_allclose(a.grad.numpy(), 8 * a.detach().numpy())
    runs = Counter(label.split("#")[0] for label in trace.execution_order())
    assert runs == {"MulBackward0": 1, "AddBackward0": 2, "AccumulateGrad([2])": 4}


# ---------------------------------------------------------------- the new experiments


def test_checkpoint_layers_save_three_activations_each():
    weights = [whylab.randn(4, 4, dtype=whylab.float64, requires_grad=True) for _ in range(5)]
    x = whylab.randn(2, 4, dtype=whylab.float64)
    plain = Stack(weights).forward(x, 5, None)
    one_activation = 2 * 4 * 8
    assert whylab.autograd.saved_tensors_bytes(plain, include_parameters=False) == (
        3 * 5 * one_activation)
    stack = Stack(weights)
    checkpointed = stack.forward(x, 5, 2)
    assert whylab.autograd.saved_tensors_bytes(checkpointed, include_parameters=False) == (
        3 * one_activation)  # segments of 2, 2 and 1 layers keep one input each
    checkpointed.sum().backward()
    assert stack.layer_runs == 10


@pytest.mark.parametrize("depth, segment", [(1, 1), (7, 3), (32, 16)])
def test_checkpoint_at_other_settings(depth, segment):
    result = run("checkpoint", depth=depth, segment=segment, width=8)
    assert result.passed, failed(result)
    assert result.metrics["layer_runs_checkpoint"] == 2 * depth


@pytest.mark.parametrize("start", [0.001, 0.3, 0.625, 1.25, 5.0, 9.999])
def test_doublings_needed_is_the_loop_count(start):
    x = whylab.tensor([start], dtype=whylab.float64)
    steps = doublings_needed(start)
    assert abs(doubled_until_large(x).item()) == pytest.approx(start * 2**steps)
    assert start * 2 ** (steps - 1) < 10 <= start * 2**steps


def test_control_flow_graphs_differ_only_when_the_loop_counts_do():
    result = run("control-flow", x1=0.3, x2=3.0)
    assert result.passed and len(result.figures) == 2
    same = run("control-flow", x1=3.0, x2=4.0)  # two doublings each
    assert same.check("graphs-differ").state == "not_applicable"
    assert same.check("graphs-follow-each-run").passed


@pytest.mark.parametrize("x", [-10.0, -1.0, 0.0, 1.0768, 2.0288, 10.0])
def test_second_backward_at_any_x(x):
    result = run("second-backward", x=x)
    assert result.passed, failed(result)
