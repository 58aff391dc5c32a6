"""Experiments of the fft topic: defaults, extremes, and checks that can fail."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from whylab.explorer.experiment import GraphDiagram, ParamError, T
from whylab.explorer.svg import render_graph
from whylab.topics.fft import experiments as fft_topic

BY_NAME = {e.name: e for e in fft_topic.EXPERIMENTS}
NAME = T("claim", "断言")
SVG = "{http://www.w3.org/2000/svg}"


def failed(result):
    return [c.name.en for c in result.checks if not c.passed]


@pytest.mark.parametrize("name", ["fft-vs-dft", "butterfly"])
def test_defaults_pass_every_check(name):
    result = BY_NAME[name].run(**BY_NAME[name].defaults())
    assert result.checks and result.passed, failed(result)


@pytest.mark.parametrize("log2n", [0, 1, 2, 5, 12])
@pytest.mark.parametrize("signal", ["tones", "random"])
def test_fft_vs_dft_extremes(log2n, signal):
    exp = BY_NAME["fft-vs-dft"]
    params = exp.parse_params({"log2n": log2n, "signal": signal, "seed": 2**31 - 1})
    result = exp.run(**params)
    assert result.passed, failed(result)
    assert len(result.figures[0].series[0].x) <= fft_topic.MAX_PLOTTED_POINTS


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
    last = [node for node in diagram.nodes if node.group == f"stage {stages}"]
    assert [node.label for node in last] == [f"X[{k}]" for k in range(size)]
    assert last[0].detail == f"{size * (size - 1) // 2:.3g}"


def test_butterfly_for_8_matches_the_textbook_order():
    result = fft_topic.butterfly.run(n="8")
    first_column = [node.label for node in result.figures[0].nodes if node.group == "stage 0"]
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
    perm = fft_topic.bit_reversal_permutation(size)
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


def test_cost_growth_counts_at_small_sizes():
    # Only the operation counts are asserted: tests never assert on wall-clock time.
    result = fft_topic.cost_growth.run(max_log2n=12, rounds=1)
    by_name = {c.name.en: c for c in result.checks}
    counts = [c for name, c in by_name.items() if "counted" in name]
    assert len(counts) == 2 and all(c.passed for c in counts)
    assert len(result.checks) == 5
    timing_chart = result.figures[0]
    assert timing_chart.log_x and timing_chart.log_y
    assert [len(s.x) for s in timing_chart.series] == [9, 9, 7]  # n = 16 .. 4096; DFT to 1024
    assert math.isfinite(result.metrics["dft_exponent"])
    assert math.isfinite(result.metrics["fft_exponent"])


def test_cost_growth_is_declared_as_timing():
    assert fft_topic.cost_growth.timing
    assert not fft_topic.fft_vs_dft.timing


# ---------------------------------------------------------------- the checks can fail


def test_growth_exponent_recovers_known_powers():
    sizes = [2**k for k in range(7, 12)]
    assert fft_topic.growth_exponent(sizes, [1e-9 * n * n for n in sizes]) == pytest.approx(2)
    n_log_n = fft_topic.growth_exponent(sizes, [1e-9 * n * math.log2(n) for n in sizes])
    assert 1.0 < n_log_n < 1.2


def test_exponent_checks_hold_under_noise_and_fail_on_wrong_growth():
    rng = np.random.default_rng(0)
    sizes = [2**k for k in range(7, 12)]
    for _ in range(50):  # +-30% multiplicative noise on every point
        noise = rng.uniform(0.7, 1.3, len(sizes))
        times = [n * n * e for n, e in zip(sizes, noise, strict=True)]
        quadratic = fft_topic.growth_exponent(sizes, times)
        assert fft_topic.exponent_check(NAME, quadratic, at_least=1.5).passed
    linear = fft_topic.growth_exponent(sizes, [float(n) for n in sizes])
    assert not fft_topic.exponent_check(NAME, linear, at_least=1.5).passed
    assert not fft_topic.exponent_check(NAME, 2.0, at_most=1.6).passed


def test_agreement_check_rejects_an_fft_without_bit_reversal():
    x = fft_topic.make_signal(64, "random", seed=1)
    reference = np.fft.fft(x)
    no_reorder = np.fft.fft(x[fft_topic.bit_reversal_permutation(64)])
    assert fft_topic.agreement_check(NAME, reference * (1 + 1e-15), reference).passed
    assert not fft_topic.agreement_check(NAME, no_reorder, reference).passed
    assert not fft_topic.agreement_check(NAME, reference * (1 + 1e-9), reference).passed


def test_count_check_rejects_a_wrong_formula():
    sizes = [8, 16, 32]
    counted = [fft_topic.OperationCount() for _ in sizes]
    for n, count in zip(sizes, counted, strict=True):
        fft_topic.fft(np.zeros(n), count)
    butterflies = [c.butterflies for c in counted]
    right = [n // 2 * int(math.log2(n)) for n in sizes]
    wrong = [n * int(math.log2(n)) for n in sizes]
    assert fft_topic.count_check(NAME, butterflies, right, sizes).passed
    assert not fft_topic.count_check(NAME, butterflies, wrong, sizes).passed


def test_fft_vs_dft_fails_when_the_fft_is_broken(monkeypatch):
    def fft_without_twiddles(x, count=None):
        return np.fft.fft(x) * np.exp(1e-6j)  # a tiny phase error everywhere

    monkeypatch.setattr(fft_topic, "fft", fft_without_twiddles)
    result = fft_topic.fft_vs_dft.run(log2n=6, signal="random", seed=0)
    assert "Iterative radix-2 FFT equals the O(n²) DFT" in failed(result)
    assert "Iterative FFT equals numpy.fft.fft" in failed(result)
    assert "Butterflies done by the FFT = (n/2)·log₂ n" in failed(result)  # nothing counted


def test_butterfly_checks_fail_without_bit_reversal(monkeypatch):
    monkeypatch.setattr(fft_topic, "bit_reversal_permutation", lambda n: np.arange(n))
    result = fft_topic.butterfly.run(n="8")
    assert "Bit reversal puts the even-indexed samples in the first half, the odd in the second" \
        in failed(result)
    assert any(name.startswith("After stage s") for name in failed(result))


def test_wiring_check_catches_a_wrong_twiddle():
    x = np.arange(8, dtype=float)
    snapshots = fft_topic.fft_stages(x)
    wires = fft_topic.butterfly_wires(8)
    assert fft_topic.wiring_check(wires, snapshots).passed
    # Flip the sign of one twiddle on the last stage: the drawing no longer computes the FFT.
    index = next(i for i, w in enumerate(wires) if w.label == "+W₈¹")
    broken = list(wires)
    broken[index] = fft_topic.Wire(wires[index].source, wires[index].target, "−W₈¹",
                                   -wires[index].factor)
    assert not fft_topic.wiring_check(broken, snapshots).passed
    assert not fft_topic.wiring_check(wires[:-1], snapshots).passed  # a missing wire


def test_last_stage_twiddle_labels():
    labels = {w.label for w in fft_topic.butterfly_wires(8) if w.target.startswith("s3")}
    superscripts = "⁰¹²³"
    assert labels == {""} | {f"{sign}W₈{superscripts[k]}" for sign in "+−" for k in range(4)}
