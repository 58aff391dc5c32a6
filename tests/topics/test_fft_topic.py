"""Experiments of the fft topic: defaults, extremes, and checks that can fail."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from whylab.explorer.experiment import GraphDiagram, ParamError, T, switched_on
from whylab.explorer.figures.graphs import render_graph
from whylab.numerics.fft import bit_reversal_permutation, butterfly_stages, fft_stages
from whylab.topics import shared
from whylab.topics.fft import accuracy as accuracy_module
from whylab.topics.fft import butterfly as bfly
from whylab.topics.fft import checks
from whylab.topics.fft import experiments as fft_topic
from whylab.topics.fft.signals import MAX_PLOTTED_POINTS, make_signal
from whylab.topics.shared import timing_check

BY_NAME = {e.name: e for e in fft_topic.EXPERIMENTS}
NAME = T("claim", "断言")
SVG = "{http://www.w3.org/2000/svg}"


def failed(result):
    return [c.id for c in result.checks if c.state == "failed"]


@pytest.mark.parametrize("name", ["fft-vs-dft", "butterfly", "accuracy"])
def test_defaults_pass_every_check(name):
    result = BY_NAME[name].run(**BY_NAME[name].defaults())
    assert result.checks and result.passed, failed(result)
    assert all(c.applicable for c in result.checks)


def run_under(control_name, name="fft-vs-dft", **overrides):
    exp = BY_NAME[name]
    with switched_on(control_name):
        return exp.run(**exp.parse_params(overrides))


def test_an_ifft_that_only_bit_reverses_fails_the_ifft_check():
    result = run_under("only-bit-reversal")
    assert result.check("ifft-equals-numpy").state == "failed"
    # the old round-trip claim would not have caught it: reordering twice undoes itself
    x = make_signal(1024, "tones", 0)
    perm = bit_reversal_permutation(1024)
    np.testing.assert_array_equal(x[perm][perm], x)


def test_counting_every_twiddle_as_a_multiply_is_caught():
    result = run_under("twiddle-off-by-one")
    assert {"fft-nontrivial-multiplies", "fft-real-flops"} <= set(failed(result))
    assert result.check("fft-butterflies").passed  # still (n/2) log2 n butterflies


def test_a_dft_that_forms_no_products_fails_the_multiply_count():
    result = run_under("dft-by-fft")
    assert failed(result) == ["dft-multiplies"]


def test_flop_checks_are_not_applicable_at_one_sample():
    result = BY_NAME["fft-vs-dft"].run(log2n=0, signal="random", seed=0)
    states = {c.id: c.state for c in result.checks}
    assert states["fft-real-flops"] == states["fft-nontrivial-multiplies"] == "not_applicable"
    assert result.passed


@pytest.mark.parametrize("log2n", [0, 1, 2, 5, 12])
@pytest.mark.parametrize("signal", ["tones", "random"])
def test_fft_vs_dft_extremes(log2n, signal):
    exp = BY_NAME["fft-vs-dft"]
    params = exp.parse_params({"log2n": log2n, "signal": signal, "seed": 2**31 - 1})
    result = exp.run(**params)
    assert result.passed, failed(result)
    assert len(result.figures[0].series[0].x) <= MAX_PLOTTED_POINTS


def test_fft_vs_dft_rejects_out_of_range():
    exp = BY_NAME["fft-vs-dft"]
    with pytest.raises(ParamError, match="log2n: must be <= 12"):
        exp.parse_params({"log2n": 13})
    with pytest.raises(ParamError, match="signal: must be one of tones, random"):
        exp.parse_params({"signal": "square"})
    assert any(p.seed for p in exp.params)


@pytest.mark.parametrize("n", ["4", "8", "16"])
def test_butterfly_diagram_is_the_real_network(n):
    size = int(n)
    result = fft_topic.butterfly.run(n=n)
    assert result.passed, failed(result)
    diagram = result.figures[0]
    assert isinstance(diagram, GraphDiagram)
    stages = int(math.log2(size))
    assert len(diagram.nodes) == size * (stages + 1)
    assert len(diagram.edges) == 4 * (size // 2) * stages  # four wires per butterfly
    ids = {node.id for node in diagram.nodes}
    assert all(source in ids and target in ids for source, target, _ in diagram.edges)
    # The last column's values are the FFT of 0, 1, ..., n-1.
    last = [node for node in diagram.nodes if node.group == f"s = {stages}"]
    assert [node.label for node in last] == [f"X[{k}]" for k in range(size)]
    assert last[0].detail == f"{size * (size - 1) // 2:.3g}"


def test_butterfly_for_8_matches_the_textbook_order():
    result = fft_topic.butterfly.run(n="8")
    first_column = [node.label for node in result.figures[0].nodes if node.group == "s = 0"]
    assert first_column == ["x[0]", "x[4]", "x[2]", "x[6]", "x[1]", "x[5]", "x[3]", "x[7]"]
    assert [row[3] for row in result.tables[0].rows] == first_column


@pytest.mark.parametrize("n", ["4", "16"])
def test_butterfly_is_drawn_as_the_textbook_grid(n):
    """Columns are stages left to right; row p is position p in every column."""
    size = int(n)
    diagram = fft_topic.butterfly.run(n=n).figures[0]
    root = ET.fromstring(render_graph(diagram, "en", "b").replace(
        "<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))
    boxes = []  # (x, y, label); middle columns repeat labels
    for group in root.iter(f"{SVG}g"):
        if not group.get("class", "").startswith("node"):
            continue  # an edge label's box
        rect = group.find(f"{SVG}rect")
        boxes.append((float(rect.get("x")), float(rect.get("y")), group.find(f"{SVG}text").text))
    columns = sorted({x for x, _, _ in boxes})
    assert len(columns) == int(math.log2(size)) + 1
    first = sorted((y, label) for x, y, label in boxes if x == columns[0])
    last = sorted((y, label) for x, y, label in boxes if x == columns[-1])
    perm = bit_reversal_permutation(size)
    assert [label for _, label in first] == [f"x[{perm[p]}]" for p in range(size)]
    assert [label for _, label in last] == [f"X[{k}]" for k in range(size)]
    rows = [y for y, _ in first]
    assert [y for y, _ in last] == rows  # every column uses the same rows


@pytest.mark.parametrize("n", ["4", "8", "16"])
def test_butterfly_twiddle_labels_overlap_nothing(n):
    diagram = fft_topic.butterfly.run(n=n).figures[0]
    root = ET.fromstring(render_graph(diagram, "en", "b").replace(
        "<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))
    labels, nodes = [], []
    for group in root.iter(f"{SVG}g"):
        rect = group.find(f"{SVG}rect")
        box = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
        (labels if group.get("class") == "edge-label" else nodes).append(box)
    assert len(labels) == sum(1 for _, _, label in diagram.edges if label)

    def overlap(a, b):
        return (min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]) > 0
                and min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]) > 0)

    for i, box in enumerate(labels):
        assert not any(overlap(box, other) for other in labels[i + 1:] + nodes)


def test_cost_growth_counts_at_the_smallest_range():
    # Only the operation counts are asserted: tests never assert on wall-clock time.
    result = fft_topic.cost_growth.run(max_log2n=14, rounds=1)
    counts = [c for c in result.checks if c.id.endswith("every-n")]
    assert len(counts) == 2 and all(c.passed for c in counts)
    assert len(result.checks) == 6
    timing_chart = result.figures[0]
    assert timing_chart.log_x and timing_chart.log_y
    assert [len(s.x) for s in timing_chart.series] == [9, 9, 5]  # n = 64 .. 16384; DFT to 1024
    assert math.isfinite(result.metrics["dft_exponent"])
    assert math.isfinite(result.metrics["fft_time_per_n_log_n_growth"])


def test_cost_growth_is_declared_as_timing():
    assert fft_topic.cost_growth.timing
    assert not fft_topic.fft_vs_dft.timing


# ---------------------------------------------------------------- the checks can fail


def test_growth_exponent_recovers_known_powers():
    sizes = [2**k for k in range(7, 12)]
    assert shared.growth_exponent(sizes, [1e-9 * n * n for n in sizes]) == pytest.approx(2)
    n_log_n = shared.growth_exponent(sizes, [1e-9 * n * math.log2(n) for n in sizes])
    assert 1.0 < n_log_n < 1.2


def test_dft_exponent_check_holds_under_noise_and_fails_on_n_to_the_1_5():
    rng = np.random.default_rng(0)
    sizes = [2**k for k in range(7, 11)]
    for _ in range(50):  # +-30% multiplicative noise on every point
        noise = rng.uniform(0.7, 1.3, len(sizes))
        times = [n * n * e for n, e in zip(sizes, noise, strict=True)]
        quadratic = shared.growth_exponent(sizes, times)
        assert checks.exponent_check("c", NAME, quadratic, at_least=1.75).passed
    n15 = shared.growth_exponent(sizes, [n**1.5 for n in sizes])
    assert not checks.exponent_check("c", NAME, n15, at_least=1.75).passed


def test_flat_check_separates_n_log_n_from_n_to_the_1_5_under_noise():
    rng = np.random.default_rng(1)
    sizes = [2**k for k in range(12, 16)]
    bound = round(math.sqrt(checks.n_to_the_1_5_over_n_log_n(sizes[0], sizes[-1])), 2)
    # +-15% independent noise on every timing of every round; the claim is decided, as in
    # cost-growth, on the interval of the growths fitted round by round (7 rounds).
    for _ in range(100):
        fast_rounds, slow_rounds = [], []
        for _ in range(7):
            noise = rng.uniform(0.85, 1.15, len(sizes))
            fast = [checks.n_log_n(n) * e for n, e in zip(sizes, noise, strict=True)]
            slow = [n**1.5 * e for n, e in zip(sizes, noise, strict=True)]
            fast_rounds.append(checks.growth_over_range(sizes, fast, checks.n_log_n))
            slow_rounds.append(checks.growth_over_range(sizes, slow, checks.n_log_n))
        assert timing_check("c", NAME, fast_rounds, at_most=bound).state == "passed"
        assert timing_check("c", NAME, slow_rounds, at_most=bound).state == "failed"


def test_agreement_check_rejects_an_fft_without_bit_reversal():
    x = make_signal(64, "random", seed=1)
    reference = np.fft.fft(x)
    no_reorder = np.fft.fft(x[bit_reversal_permutation(64)])
    assert shared.agreement_check("c", NAME, reference * (1 + 1e-15), reference).passed
    assert not shared.agreement_check("c", NAME, no_reorder, reference).passed
    assert not shared.agreement_check("c", NAME, reference * (1 + 1e-9), reference).passed


def test_count_check_rejects_a_wrong_formula():
    sizes = [8, 16, 32]
    butterflies = [fft_topic.OperationCount() for _ in sizes]
    for n, count in zip(sizes, butterflies, strict=True):
        fft_topic.fft(np.zeros(n), count)
    counted = [c.butterflies for c in butterflies]
    right = [n // 2 * int(math.log2(n)) for n in sizes]
    wrong = [n * int(math.log2(n)) for n in sizes]
    assert checks.count_check("c", NAME, counted, right, sizes).passed
    assert not checks.count_check("c", NAME, counted, wrong, sizes).passed


def test_nontrivial_twiddle_formula_matches_a_count_by_hand():
    for n in (2, 4, 8, 16, 256):
        by_hand = sum(1 for stage in butterfly_stages(n) for k in stage.twiddle_exponent
                      if k != 0 and 4 * k != stage.span)
        assert fft_topic.nontrivial_twiddles(n) == by_hand


def test_butterfly_checks_fail_without_bit_reversal():
    result = run_under("no-bit-reversal", "butterfly", n="8")
    assert {"even-samples-first", "stages-are-subtransforms", "network-equals-numpy"} <= set(
        failed(result))


def test_accuracy_checks_fail_with_single_precision_twiddles():
    if not accuracy_module.long_double_is_wider():
        pytest.skip("long double is no wider than float64 here")
    result = run_under("single-precision-twiddles", "accuracy")
    assert "fft-error-eps-log-n" in failed(result)


def test_wiring_check_catches_a_wrong_twiddle():
    x = np.arange(8, dtype=float)
    snapshots = fft_stages(x)
    wires = bfly.butterfly_wires(butterfly_stages(8))
    assert bfly.wiring_check(wires, snapshots).passed
    # Flip the sign of one twiddle on the last stage: the drawing no longer computes the FFT.
    index = next(i for i, w in enumerate(wires) if w.label == "+W₈¹")
    broken = list(wires)
    broken[index] = bfly.Wire(wires[index].source, wires[index].target, "−W₈¹",
                              -wires[index].factor)
    assert not bfly.wiring_check(broken, snapshots).passed
    assert not bfly.wiring_check(wires[:-1], snapshots).passed  # a missing wire


def test_last_stage_twiddle_labels():
    labels = {w.label for w in bfly.butterfly_wires(butterfly_stages(8))
              if w.target.startswith("s3")}
    superscripts = "⁰¹²³"
    assert labels == {""} | {f"{sign}W₈{superscripts[k]}" for sign in "+−" for k in range(4)}
