"""The narrow (phone) drawing of graph diagrams: node text wrapped at the right places,
boxes that hold their lines, the width limit met by the topics' diagrams, and node text
in the reader's language."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.explorer.default_runs import default_record
from whylab.explorer.content.topics import load_registry
from whylab.explorer.experiment import GraphDiagram, GraphNode, Result, T
from whylab.explorer.figures.graph_layout import (
    NARROW_GRAPH,
    NODE_HEIGHT,
    NodeText,
    detail_width,
    label_width,
    layout_graph,
)
from whylab.explorer.figures.graphs import (
    _draw_graph,
    fold_layers,
    narrow_layout,
    render_graph,
    render_graph_figure,
)
from whylab.explorer.figures.text import break_pieces, line_spaces, wrap_text
from whylab.explorer.runs.result_json import result_from_dict, result_to_dict

SVG = "{http://www.w3.org/2000/svg}"


def parse_all(markup: str) -> list[ET.Element]:
    """Each ``<svg>`` of ``markup`` as XML (with the namespace HTML leaves implicit)."""
    drawings = re.findall(r"<svg .*?</svg>", markup, re.S)
    return [
        ET.fromstring(d.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))
        for d in drawings
    ]


@pytest.mark.parametrize(
    "text",
    [
        "x.transpose(0, 1)",
        "recording.Autograd[_unsafe_view]",
        "-4+9.66i",
        "梯度从输出流回叶子张量",
        "",
    ],
)
def test_pieces_join_back_into_the_text(text):
    for rank in range(9):
        assert "".join(break_pieces(text, rank)) == text


def test_lines_break_at_the_best_place_first():
    assert wrap_text("matmul @ Autograd", 80, label_width) == ["matmul @", "Autograd"]
    assert wrap_text("recording.Autograd[mm]", 80, detail_width) == ["recording.", "Autograd[mm]"]
    assert wrap_text("x.transpose(0, 1)", 80, label_width) == ["x.", "transpose", "(0, 1)"]
    # an underscore is a worse place than a space: used only when the spaces are not enough
    assert wrap_text("size() (2, 3, 4) storage_offset() 0", 125, detail_width) == [
        "size() (2, 3, 4)",
        "storage_offset() 0",
    ]
    assert wrap_text("tracing.tracer_fallback", 60, detail_width) == [
        "tracing.",
        "tracer_",
        "fallback",
    ]
    # CamelCase humps, when nothing better is left
    assert wrap_text("view @ ADInplaceOrView", 80, label_width) == ["view @", "ADInplace", "OrView"]
    # a complex number breaks before the sign of its imaginary part, never in a decimal
    assert wrap_text("-4+9.66i", 40, detail_width) == ["-4", "+9.66i"]
    assert wrap_text("12.625", 10, detail_width) == ["12.625"]
    # Chinese breaks between characters, never before its punctuation
    lines = wrap_text("梯度，从输出流回叶子张量", 50, label_width)
    assert "".join(lines) == "梯度，从输出流回叶子张量" and not any(
        ln.startswith("，") for ln in lines
    )
    assert all(label_width(line) <= 50 for line in lines)


def test_text_that_fits_is_left_on_one_line():
    assert wrap_text("MmBackward0", 200, label_width) == ["MmBackward0"]
    assert wrap_text("a b", 1000, label_width) == ["a b"]


def test_every_wrapped_line_fits_unless_it_cannot_break():
    text = "size() (3, 2, 4) stride() (4, 12, 1) storage_offset() 0"
    for width in (40, 60, 90, 125, 200):
        lines = wrap_text(text, width, detail_width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # nothing lost
        for line in lines:
            assert detail_width(line) <= width or len(break_pieces(line, 8)) == 1, (width, line)


def test_a_box_grows_to_hold_its_lines():
    node = GraphNode("n", "matmul @ Autograd", "linalg.matmul_composite")
    one = NodeText.of(node, "en")
    wrapped = NodeText.of(node, "en", 80)
    assert one.box_size(12) == (pytest.approx(one.box_size(12)[0]), NODE_HEIGHT)
    width, height = wrapped.box_size(6)
    assert len(wrapped.label) == 2 and len(wrapped.detail) == 3
    assert height == NODE_HEIGHT + 16 + 2 * 14
    assert width >= max(map(label_width, wrapped.label)) + 12
    label_ys, detail_ys = wrapped.baselines(0.0)
    assert label_ys == sorted(label_ys) and max(label_ys) < min(detail_ys)
    assert max(detail_ys) <= height - 8  # the last line stays inside the box, above its edge


def wide_diagram() -> GraphDiagram:
    nodes = [
        GraphNode(f"n{i}", f"operator_number_{i} @ Autograd", "recording.Autograd[op]")
        for i in range(4)
    ]
    edges = [("n0", f"n{i}", "[2, 3]") for i in range(1, 4)]
    return GraphDiagram(T("Wide", "宽"), nodes, edges)


def test_a_wide_diagram_goes_out_twice_with_distinct_ids_and_a_small_one_once():
    markup = render_graph_figure(wide_diagram(), "en", "fig")
    wide, narrow = parse_all(markup)
    assert wide.get("class") == "graph wide" and narrow.get("class") == "graph narrow"
    ids = re.findall(r'id="([^"]+)"', markup)
    assert len(ids) == len(set(ids))
    assert float(wide.get("width")) > NARROW_GRAPH.max_width >= float(narrow.get("width"))
    # The same computed diagram: the same nodes and edges in both drawings.
    for drawing in (wide, narrow):
        assert len(drawing.findall(f".//{SVG}g[@class='node ']")) == 4
        assert len(drawing.findall(f".//{SVG}path[@class='edge']")) == 3
    small = GraphDiagram(
        T("Small", "小"), [GraphNode("a", "a"), GraphNode("b", "b")], [("a", "b", "")]
    )
    (only,) = parse_all(render_graph_figure(small, "en", "fig"))
    assert only.get("class") == "graph"


def test_the_narrow_drawing_holds_every_line_of_text_inside_its_box():
    (band,), width = narrow_layout(wide_diagram(), "en")
    layout = band[1]
    assert width <= NARROW_GRAPH.max_width
    for node, text in layout.text.items():
        _, _, box_width, box_height = layout.box(node)
        lines = [*map(label_width, text.label), *map(text.detail_measure, text.detail)]
        assert max(lines) <= box_width - 2 * NARROW_GRAPH.node_padding + 1e-9
        assert box_height == text.box_size(NARROW_GRAPH.node_padding)[1]


def butterfly_like(columns: int, rows: int) -> GraphDiagram:
    """A left-to-right network with pinned layers whose edges join neighbouring columns."""
    nodes = [
        GraphNode(f"c{c}r{r}", f"X[{r}]", "-8+40.2i", group=f"s = {c}", layer=c, order=r)
        for c in range(columns)
        for r in range(rows)
    ]
    edges = [
        (f"c{c}r{r}", f"c{c + 1}r{(r + k) % rows}", "+W₁₆⁷" if k else "")
        for c in range(columns - 1)
        for r in range(rows)
        for k in (0, 1)
    ]
    return GraphDiagram(T("Net", "网络"), nodes, edges, direction="LR")


def test_a_network_too_wide_to_wrap_folds_into_strips_that_share_a_column():
    diagram = butterfly_like(5, 4)
    strips = fold_layers(diagram, 2)
    assert [sorted({n.layer for n in s.nodes}) for s in strips] == [[0, 1, 2], [0, 1, 2]]
    assert {n.id for n in strips[0].nodes} & {n.id for n in strips[1].nodes} == {
        f"c2r{r}" for r in range(4)
    }
    # every edge is drawn once, in the strip holding both its ends
    assert sorted(e for s in strips for e in s.edges) == sorted(diagram.edges)
    bands, width = narrow_layout(diagram, "en")
    assert len(bands) == 2 and width <= NARROW_GRAPH.max_width
    markup = render_graph(diagram, "en", "g", NARROW_GRAPH)
    (root,) = parse_all(markup)
    assert len(root.findall(f".//{SVG}marker")) == 2  # one arrowhead per strip, own ids
    ids = re.findall(r'id="([^"]+)"', markup)
    assert len(ids) == len(set(ids))
    # a group keeps its colour in both strips
    shared = {g.get("class") for g in root.iter(f"{SVG}g") if "node" in (g.get("class") or "")}
    assert len(shared) == 5


def test_only_layered_networks_fold():
    assert fold_layers(wide_diagram(), 2) is None  # top to bottom, layers not pinned
    skipping = butterfly_like(3, 2)
    skipping = GraphDiagram(skipping.title, skipping.nodes, [("c0r0", "c2r0", "")], "graph", "LR")
    assert fold_layers(skipping, 2) is None  # an edge skips a column
    assert fold_layers(butterfly_like(3, 2), 3) is None  # 2 gaps cannot make 3 strips


def test_node_text_reads_in_the_page_language():
    diagram = GraphDiagram(
        T("G", "图"),
        [GraphNode("s", "untyped_storage()", T("24 elements, float64", "24 个 float64 元素"))],
        [],
    )
    for lang, shown in (("en", "24 elements, float64"), ("zh", "24 个 float64 元素")):
        (root,) = parse_all(render_graph(diagram, lang, "g"))
        texts = [t.text for t in root.iter(f"{SVG}text")]
        assert shown in texts and "untyped_storage()" in texts
    (again,) = result_from_dict(result_to_dict(Result(checks=[], figures=[diagram]))).figures
    assert again.nodes[0].detail == T("24 elements, float64", "24 个 float64 元素")


def test_a_layout_can_run_the_other_way():
    diagram = wide_diagram()
    assert layout_graph(diagram).direction == "TB"
    turned = layout_graph(diagram, direction="LR")
    assert turned.direction == "LR" and {turned.layer[n] for n in ("n1", "n2")} == {1}


# ------------------------------------------------ the topics' own diagrams at their defaults


def topic_diagrams():
    """(slug, experiment, diagram) for every graph diagram a topic draws at its defaults."""
    found = []
    for topic in load_registry():
        for name, experiment in topic.experiments.items():
            if experiment.timing:
                continue
            for figure in default_record(topic, experiment).result.figures:
                if isinstance(figure, GraphDiagram):
                    found.append((topic.slug, name, figure))
    return found


DIAGRAMS = topic_diagrams()


def test_the_topics_draw_the_diagrams_issue_13_found_too_wide():
    names = {name for _, name, _ in DIAGRAMS}
    assert {"butterfly", "view-chain", "matmul-trace"} <= names


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("slug", "name", "diagram"), DIAGRAMS, ids=[f"{s}-{n}" for s, n, _ in DIAGRAMS]
)
def test_every_topic_diagram_fits_a_phone_at_its_defaults(slug, name, diagram, lang):
    for root in parse_all(render_graph_figure(diagram, lang, "f")):
        if root.get("class") != "graph wide":  # what a phone shows
            assert float(root.get("width")) <= NARROW_GRAPH.max_width, (slug, name)


def chosen_diagram(slug: str, name: str, **params) -> GraphDiagram:
    topic = next(t for t in load_registry() if t.slug == slug)
    experiment = topic.experiments[name]
    result = experiment.run(**{**experiment.defaults(), **params})
    return next(f for f in result.figures if isinstance(f, GraphDiagram))


@pytest.mark.parametrize(
    ("slug", "name", "params"),
    [("fft", "butterfly", {"n": n}) for n in ("4", "8", "16")]
    + [
        ("strided-tensors", "view-chain", {"chain": chain})
        for chain in ("step-slice", "expand", "unfold", "select-slice-transpose")
    ],
)
def test_the_choices_a_reader_can_pick_fit_a_phone_too(slug, name, params):
    diagram = chosen_diagram(slug, name, **params)
    for lang in ("en", "zh"):
        assert narrow_layout(diagram, lang)[1] <= NARROW_GRAPH.max_width


def test_a_sixteen_point_butterfly_folds_into_two_strips_of_three_stages():
    bands, _ = narrow_layout(chosen_diagram("fft", "butterfly", n="16"), "en")
    assert [len({n.layer for n in part.nodes}) for part, _ in bands] == [3, 3]


def test_a_wrapped_text_element_reads_as_the_unwrapped_text():
    """One <text> per label, its lines as <tspan>s with the spaces they broke at between
    them: a screen reader, a search or the zh-words check reads the name whole."""
    for text in ("matmul @ Autograd", "tracing.tracer_fallback", "梯度从输出流回叶子张量"):
        lines = wrap_text(text, 50, label_width)
        assert len(lines) > 1
        assert "".join(a + b for a, b in zip(lines, line_spaces(text, lines), strict=True)) == text
    node = GraphNode("n", "matmul @ Autograd", "tracing.tracer_fallback")
    diagram = GraphDiagram(T("G", "图"), [node], [])
    layout = layout_graph(diagram, "en", NARROW_GRAPH, wrap_width=60)
    markup = _draw_graph(diagram, [(diagram, layout)], "g")[0]
    texts = parse_all(f'<svg viewBox="0 0 1 1">{markup}</svg>')[0].iter(f"{SVG}text")
    assert ["".join(t.itertext()) for t in texts] == [node.label, node.detail]
