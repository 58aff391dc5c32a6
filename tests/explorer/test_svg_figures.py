"""The SVG renderer: axes and ticks, log scales, legends, layered graph layout."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whylab.explorer.experiment import GraphDiagram, GraphNode, LineChart, Series, T
from whylab.explorer.figures.axes import linear_axis, log_axis, nice_step, tick_labels
from whylab.explorer.figures.charts import render_line_chart
from whylab.explorer.figures.graph_layout import GRAPH_MIN_SCALE, NODE_HEIGHT, curve_point
from whylab.explorer.figures.graphs import render_graph
from whylab.explorer.figures.palette import PALETTE_SIZE
from whylab.explorer.figures.pieces import pack_in_order
from whylab.explorer.figures.text import monospace_width, text_width

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    """Parse as XML (inline SVG must be well-formed); add the namespace HTML leaves implicit."""
    return ET.fromstring(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def chart(*series, log_x=False, log_y=False) -> LineChart:
    return LineChart(T("Title", "标题"), T("x", "x"), T("y", "y"), list(series), log_x, log_y)


@pytest.mark.parametrize(
    "span, step", [(1.0, 0.2), (10.0, 2.0), (7.0, 2.0), (100.0, 20.0), (0.003, 0.001), (63, 20)]
)
def test_nice_steps_are_1_2_5_times_a_power_of_ten(span, step):
    assert nice_step(span) == pytest.approx(step)


@settings(max_examples=50, deadline=None)
@given(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.floats(1e-6, 1e6, allow_nan=False),
)
def test_linear_axis_covers_the_data_with_ticks_inside(low, width):
    values = [low, low + width]
    axis = linear_axis(values, 0.0, 100.0)
    slack = 1e-6 * width  # ends within rounding of a tick count as covered
    assert axis.low <= low + slack and axis.high >= low + width - slack
    assert 2 <= len(axis.ticks) <= 12
    for value, _ in axis.ticks:
        assert axis.low - slack <= value <= axis.high + slack
        assert -1e-6 <= axis.to_pixel(value) <= 100 + 1e-6


def test_tight_axis_keeps_the_data_ends():
    axis = linear_axis([0, 63], 0, 100, tight=True)
    assert (axis.low, axis.high) == (0, 63)
    assert [label for _, label in axis.ticks] == ["0", "20", "40", "60"]


def test_log_axis_ticks_decades_and_maps_them_evenly():
    axis = log_axis([1e-3, 1e5], 0.0, 80.0)
    assert axis.low == pytest.approx(1e-3) and axis.high == pytest.approx(1e5)
    pixels = [axis.to_pixel(v) for v, _ in axis.ticks]
    gaps = {round(b - a, 6) for a, b in zip(pixels, pixels[1:], strict=False)}
    assert len(gaps) == 1
    assert axis.ticks[0][1] == "1e\u22123"
    short = log_axis([3, 70], 0.0, 1.0)
    assert [label for _, label in short.ticks] == ["5", "10", "20", "50"]
    # The axis ends at the data: 2048 is not drawn out to 10^4.
    sizes = log_axis([16, 2048], 0.0, 1.0)
    assert (sizes.low, sizes.high) == (16, 2048)
    assert sizes.to_pixel(2048) == pytest.approx(1.0)
    assert [label for _, label in sizes.ticks] == ["100", "1000"]


def test_series_colours_follow_the_names_not_their_order_and_a_chart_never_repeats_one():
    from whylab.explorer.figures.palette import SERIES_SLOTS, series_classes

    def chart(*names):
        series = [Series(T(n, n + "（中）"), [1, 2], [1, 2]) for n in names]
        return LineChart(T("c", "图"), T("x", "x"), T("y", "y"), series)

    for names in (["DFT", "FFT"], ["n²", "FFT", "DFT"], ["a", "b", "c", "d", "e"]):
        forward = dict(zip(names, series_classes(chart(*names)), strict=True))
        backward = dict(zip(names[::-1], series_classes(chart(*names[::-1])), strict=True))
        assert forward == backward
    # A fixed slot is kept whatever the partner.
    for fixed, slot in SERIES_SLOTS.items():
        for partner in ("DFT", "FFT", "x", "numpy"):
            assert series_classes(chart(partner, fixed))[1] == f"s{slot}"
    many = series_classes(chart(*[f"series {i}" for i in range(8)]))
    assert len(set(many)) == 8


@pytest.mark.parametrize(
    "values, step, labels",
    [
        ([0.0, 0.5, 1.0, 1.5], 0.5, ["0", "0.5", "1.0", "1.5"]),
        ([0.0, 20.0, 40.0], 20.0, ["0", "20", "40"]),
        ([1.5e6], None, ["1.5e6"]),
        ([2e-5], None, ["2e\u22125"]),
        ([-0.5, 0.0, 0.5], 0.5, ["\u22120.5", "0", "0.5"]),
        ([0.2, 0.25, 0.3], 0.05, ["0.20", "0.25", "0.30"]),
        # One notation per axis: 50000 is not "50000" beside "1e5".
        ([0.0, 50000.0, 100000.0, 150000.0], 50000.0, ["0", "5e4", "1e5", "1.5e5"]),
        ([1e3, 2e3, 5e3, 1e4, 1e5], None, ["1e3", "2e3", "5e3", "1e4", "1e5"]),
        ([0.01, 0.02, 0.05, 0.1, 1.0], None, ["0.01", "0.02", "0.05", "0.1", "1"]),
    ],
)
def test_tick_labels_of_one_axis_share_one_style(values, step, labels):
    assert tick_labels(values, step) == labels


def test_line_chart_has_a_path_per_series_title_desc_and_legend():
    svg = render_line_chart(
        chart(
            Series(T("first <b>", "第一"), [0, 1, 2], [0.0, 1.0, 4.0]),
            Series(T("second", "第二"), [0, 1, 2], [1.0, 1.0, 1.0]),
        ),
        "en",
        "c1",
    )
    root = parse(svg)
    assert root.get("role") == "img" and root.get("aria-labelledby") == "c1-t c1-d"
    assert root.find(f"{SVG}title").text == "Title"
    paths = [p.get("class") for p in root.iter(f"{SVG}path") if "series" in p.get("class")]
    assert len(paths) == 2 and len(set(paths)) == 2
    legend = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "legend-label"]
    assert legend == ["first <b>", "second"]  # escaped in the markup, intact as text
    assert "first &lt;b&gt;" in svg


def test_line_chart_uses_the_page_language():
    svg = render_line_chart(chart(Series(T("first", "第一"), [0, 1], [0, 1])), "zh", "c")
    assert "第一" in svg and "标题" in svg and "first" not in svg


def test_missing_points_break_the_line_and_log_axes_skip_non_positive_values():
    svg = render_line_chart(
        chart(Series(T("s", "s"), [1, 2, 3, 4, 5], [1, 2, math.nan, 4, 5])), "en", "c"
    )
    path = next(p for p in parse(svg).iter(f"{SVG}path") if "series" in p.get("class")).get("d")
    assert path.count("M") == 2 and path.count("L") == 2
    svg = render_line_chart(
        chart(Series(T("s", "s"), [1, 10, 100], [-1.0, 10.0, 100.0]), log_x=True, log_y=True),
        "en",
        "c",
    )
    path = next(p for p in parse(svg).iter(f"{SVG}path") if "series" in p.get("class")).get("d")
    assert path.count("M") == 1 and path.count("L") == 1


def test_points_map_inside_the_plot_area():
    svg = render_line_chart(chart(Series(T("s", "s"), [0, 5, 10], [-3.0, 7.0, 2.0])), "en", "c")
    numbers = [
        float(v) for v in re.findall(r"-?\d+\.\d", parse(svg).find(f".//{SVG}path").get("d"))
    ]
    xs, ys = numbers[0::2], numbers[1::2]
    assert min(xs) >= 72 and max(xs) <= 620
    assert min(ys) >= 16 and max(ys) <= 316


def test_a_chart_without_drawable_points_still_renders():
    svg = render_line_chart(chart(Series(T("s", "s"), [1.0], [math.nan])), "en", "c")
    assert parse(svg).get("role") == "img"


def graph(nodes, edges) -> GraphDiagram:
    return GraphDiagram(
        T("G", "图"), [GraphNode(n, n.upper(), f"d{n}", "g" + n[0]) for n in nodes], edges
    )


def node_boxes(svg: str) -> dict[str, tuple[float, float, float]]:
    """label -> (left, top, width) of each drawn node."""
    boxes = {}
    for group in parse(svg).iter(f"{SVG}g"):
        if not group.get("class").startswith("node"):
            continue  # an edge label
        rect = group.find(f"{SVG}rect")
        label = group.find(f"{SVG}text").text
        boxes[label] = (float(rect.get("x")), float(rect.get("y")), float(rect.get("width")))
    return boxes


def test_graph_layers_follow_edges_and_long_edges_get_routed():
    svg = render_graph(
        graph(
            ["a", "b", "c", "d"],
            [("a", "b", "x"), ("b", "c", ""), ("a", "c", "skip"), ("c", "d", "")],
        ),
        "en",
        "g",
    )
    boxes = node_boxes(svg)
    assert boxes["A"][1] < boxes["B"][1] < boxes["C"][1] < boxes["D"][1]
    edges = parse(svg).findall(f".//{SVG}path[@class='edge']")
    assert len(edges) == 4
    assert any(e.get("d").count("C") == 2 for e in edges)  # a -> c passes a helper point
    assert "skip" in svg


def test_graph_cycles_and_self_loops_do_not_hang():
    svg = render_graph(
        graph(["a", "b", "c"], [("a", "b", ""), ("b", "c", ""), ("c", "a", ""), ("a", "a", "")]),
        "en",
        "g",
    )
    assert len(node_boxes(svg)) == 3


def test_graph_rejects_edges_to_missing_nodes_and_duplicate_ids():
    with pytest.raises(ValueError, match="missing node"):
        render_graph(graph(["a"], [("a", "zz", "")]), "en", "g")
    with pytest.raises(ValueError, match="unique"):
        render_graph(graph(["a", "a"], []), "en", "g")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.data())
def test_random_dags_lay_out_without_overlaps(count, data):
    names = [f"n{i}" for i in range(count)]
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    chosen = data.draw(st.lists(st.sampled_from(pairs), unique=True, max_size=20)) if pairs else []
    edges = [(names[i], names[j], "") for i, j in chosen]
    svg = render_graph(graph(names, edges), "en", "g")
    boxes = node_boxes(svg)
    assert len(boxes) == count
    for source, target, _ in edges:
        assert boxes[source.upper()][1] < boxes[target.upper()][1]
    rows: dict[float, list[tuple[float, float]]] = {}
    for left, top, width in boxes.values():
        rows.setdefault(top, []).append((left, left + width))
    for spans in rows.values():
        spans.sort()
        for (_, right), (left, _) in zip(spans, spans[1:], strict=False):
            assert right <= left + 1e-6


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-500, 500), st.floats(1, 50)), min_size=1, max_size=12))
def test_pack_in_order_keeps_spacing_and_moves_nothing_that_fits(items):
    wanted = [w for w, _ in items]
    distances = [d for _, d in items[1:]]
    packed = pack_in_order(wanted, distances)
    for left, right, distance in zip(packed, packed[1:], distances, strict=False):
        assert right - left >= distance - 1e-9
    # least squares: the mean displacement of a block is zero, so overall it is too
    assert abs(sum(packed) - sum(wanted)) < 1e-6 * len(wanted) * 500
    spaced = [0.0]
    for distance in distances:
        spaced.append(spaced[-1] + distance + 1.0)
    assert pack_in_order(spaced, distances) == pytest.approx(spaced)


# ---------------------------------------------------------------- pinned layout


def pinned(nodes, edges, direction="TB") -> GraphDiagram:
    """``nodes``: (id, layer, order) triples; None leaves that choice to the layout."""
    return GraphDiagram(
        T("P", "钉"),
        [GraphNode(n, n.upper(), layer=layer, order=order) for n, layer, order in nodes],
        edges,
        direction=direction,
    )


def centres(svg: str) -> dict[str, tuple[float, float]]:
    return {label: (left + width / 2, top) for label, (left, top, width) in node_boxes(svg).items()}


def test_pinned_order_survives_edges_that_crossing_reduction_would_untangle():
    # Every edge crosses every other: automatic layout would flip the second row.
    nodes = [("a", 0, 0), ("b", 0, 1), ("c", 0, 2), ("x", 1, 0), ("y", 1, 1), ("z", 1, 2)]
    edges = [("a", "z", ""), ("b", "y", ""), ("c", "x", "")]
    free = centres(render_graph(graph(["a", "b", "c", "x", "y", "z"], edges), "en", "g"))
    assert free["Z"][0] < free["X"][0]  # the automatic layout does reorder
    placed = centres(render_graph(pinned(nodes, edges), "en", "g"))
    assert placed["X"][0] < placed["Y"][0] < placed["Z"][0]
    # Equal orders line up across layers, and slots are evenly spaced.
    for top, bottom in (("A", "X"), ("B", "Y"), ("C", "Z")):
        assert placed[top][0] == pytest.approx(placed[bottom][0])
    assert placed["B"][0] - placed["A"][0] == pytest.approx(placed["C"][0] - placed["B"][0])


def test_left_to_right_puts_layers_in_columns_and_orders_down_the_column():
    nodes = [("a", 0, 1), ("b", 0, 0), ("c", 2, 0)]
    svg = render_graph(pinned(nodes, [("a", "c", "w"), ("b", "c", "")], "LR"), "en", "g")
    boxes = node_boxes(svg)
    (ax, ay, _), (bx, by, _), (cx, cy, _) = boxes["A"], boxes["B"], boxes["C"]
    assert ax == bx < cx  # columns by layer; layer 1 is empty but keeps its place
    assert by < ay and cy == by  # order 0 above order 1, level with each other
    edges = parse(svg).findall(f".//{SVG}path[@class='edge']")
    assert len(edges) == 2
    start = re.match(r"M(\d+\.\d) ", edges[0].get("d"))
    assert float(start.group(1)) == pytest.approx(ax + boxes["A"][2])  # leaves A's right side


def test_pinned_layers_may_run_against_the_flow_or_share_a_layer():
    nodes = [("a", 2, None), ("b", 0, None), ("c", None, None), ("d", 2, None)]
    edges = [("a", "b", "up"), ("b", "c", ""), ("a", "d", "same")]
    boxes = node_boxes(render_graph(pinned(nodes, edges), "en", "g"))
    assert boxes["B"][1] < boxes["C"][1] < boxes["A"][1] == boxes["D"][1]
    svg = render_graph(pinned(nodes, edges, "LR"), "en", "g")
    assert len(parse(svg).findall(f".//{SVG}path[@class='edge']")) == 3


def test_pins_closer_than_a_slot_are_pushed_apart_not_stacked():
    nodes = [("a", 0, 0), ("b", 0, 0), ("c", 0, 0.5), ("d", 0, None)]
    boxes = node_boxes(render_graph(pinned(nodes, []), "en", "g"))
    spans = sorted((left, left + width) for left, _, width in boxes.values())
    for (_, right), (left, _) in zip(spans, spans[1:], strict=False):
        assert right <= left + 1e-6


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"layer": -1}, "layer must be 0"),
        ({"layer": 1.5}, "layer must be an int"),
        ({"layer": True}, "layer must be an int"),
        ({"order": math.nan}, "order must be finite"),
        ({"order": "2"}, "order must be a number"),
    ],
)
def test_bad_pins_are_refused_when_the_node_is_made(fields, message):
    with pytest.raises(ValueError, match=message):
        GraphNode("n", "N", **fields)


def test_pins_accept_numpy_numbers_and_store_plain_ones():
    import numpy as np

    node = GraphNode("n", "N", layer=np.int64(3), order=np.int32(2))
    assert type(node.layer) is int and type(node.order) is float


def test_unknown_direction_is_refused():
    with pytest.raises(ValueError, match="direction"):
        GraphDiagram(T("G", "图"), [], [], direction="RL")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10), st.data())
def test_random_pins_keep_layers_order_and_no_overlaps(count, data):
    names = [f"n{i}" for i in range(count)]
    layers = data.draw(
        st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=count, max_size=count)
    )
    orders = data.draw(
        st.lists(st.one_of(st.none(), st.integers(-3, 6)), min_size=count, max_size=count)
    )
    pairs = [(a, b) for a in names for b in names if a != b]
    edges = data.draw(st.lists(st.sampled_from(pairs), unique=True, max_size=15)) if pairs else []
    direction = data.draw(st.sampled_from(["TB", "LR"]))
    svg = render_graph(
        pinned(
            list(zip(names, layers, orders, strict=True)), [(s, t, "") for s, t in edges], direction
        ),
        "en",
        "g",
    )
    boxes = node_boxes(svg)
    lr = direction == "LR"
    across = {n: boxes[n.upper()][0 if lr else 1] for n in names}
    along = {n: boxes[n.upper()][1 if lr else 0] for n in names}
    for a, la in zip(names, layers, strict=True):
        for b, lb in zip(names, layers, strict=True):
            if la is not None and lb is not None:
                assert (la < lb) == (across[a] < across[b] - 1e-6)
    by_layer: dict[float, list[str]] = {}
    for n in names:
        by_layer.setdefault(across[n], []).append(n)
    for members in by_layer.values():
        ordered = [n for n in members if orders[names.index(n)] is not None]
        ordered.sort(key=lambda n: orders[names.index(n)])
        positions = [along[n] for n in ordered]
        assert positions == sorted(positions)
        spans = sorted(
            (along[n], along[n] + (NODE_HEIGHT if lr else boxes[n.upper()][2])) for n in members
        )
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert end <= start + 1e-6


# ---------------------------------------------------------------- edge labels


def label_boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """text -> (left, top, width, height) of each edge label's background box."""
    boxes = {}
    for group in parse(svg).iter(f"{SVG}g"):
        if group.get("class") == "edge-label":
            rect = group.find(f"{SVG}rect")
            boxes[group.find(f"{SVG}text").text] = tuple(
                float(rect.get(k)) for k in ("x", "y", "width", "height")
            )
    return boxes


def path_points(d: str, steps: int = 200) -> list[tuple[float, float]]:
    """Points along an SVG path made of one M and cubic C commands."""
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
    start, rest = (numbers[0], numbers[1]), numbers[2:]
    points = []
    for i in range(0, len(rest), 6):
        curve = (start, *(tuple(rest[i + k : i + k + 2]) for k in (0, 2, 4)))
        points += [curve_point(curve, s / steps) for s in range(steps + 1)]
        start = curve[-1]
    return points


def overlap(a, b) -> bool:
    return (
        min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]) > 1e-6
        and min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]) > 1e-6
    )


@pytest.mark.parametrize("direction", ["TB", "LR"])
def test_labels_of_edges_meeting_at_one_node_keep_apart_and_sit_on_their_edge(direction):
    # Six labelled edges into one node, and six out of another: before labels were
    # placed with care, these all landed on the same few pixels.
    sources = [f"s{i}" for i in range(6)]
    targets = [f"t{i}" for i in range(6)]
    edges = [(s, "hub", f"in{i}") for i, s in enumerate(sources)]
    edges += [("hub", t, f"out{i}") for i, t in enumerate(targets)]
    diagram = GraphDiagram(
        T("fan", "扇"),
        [GraphNode(n, n) for n in [*sources, "hub", *targets]],
        edges,
        direction=direction,
    )
    svg = render_graph(diagram, "en", "g")
    labels = label_boxes(svg)
    assert sorted(labels) == sorted(label for _, _, label in edges)
    nodes = [(left, top, width, 44.0) for left, top, width in node_boxes(svg).values()]
    boxes = list(labels.values())
    for i, box in enumerate(boxes):
        assert not any(overlap(box, other) for other in boxes[i + 1 :])
        assert not any(overlap(box, node) for node in nodes)
    # Each label's centre lies on the path of its own edge (paths are in edge order).
    paths = [p.get("d") for p in parse(svg).findall(f".//{SVG}path[@class='edge']")]
    for (_, _, label), d in zip(edges, paths, strict=True):
        left, top, width, height = labels[label]
        centre = (left + width / 2, top + height / 2)
        assert min(math.dist(centre, p) for p in path_points(d)) < 1.0


def test_edges_sharing_a_box_side_meet_it_at_separate_points():
    edges = [(s, "hub", "") for s in ("a", "b", "c")]
    svg = render_graph(graph(["a", "b", "c", "hub"], edges), "en", "g")
    ends = {path_points(p.get("d"))[-1] for p in parse(svg).findall(f".//{SVG}path")[1:]}
    assert len(ends) == 3  # the arrowhead path in <defs> is the first path


def test_text_width_knows_wide_narrow_and_small_characters():
    assert text_width("WWWW", 10) > text_width("abcd", 10) > text_width("iiii", 10)
    assert text_width("中文", 10) == pytest.approx(2 * text_width("中", 10))
    assert text_width("W₈³", 10) < text_width("W83", 10)  # sub- and superscripts are small


def test_bold_labels_and_monospace_details_fit_their_boxes_with_padding():
    assert text_width("mm @ CPU", 13, bold=True) > text_width("mm @ CPU", 13)
    assert monospace_width("iiii", 11) == monospace_width("WWWW", 11) == pytest.approx(26.4)
    labels = {"mm @ CPU": "", "view @ ADInplaceOrView": "", "b": "shape (3, 4) · requires_grad"}
    nodes = [GraphNode(str(i), label, detail) for i, (label, detail) in enumerate(labels.items())]
    boxes = node_boxes(render_graph(GraphDiagram(T("G", "图"), nodes, []), "en", "g"))
    for label, detail in labels.items():
        needed = max(text_width(label, 13, bold=True), monospace_width(detail, 11))
        assert boxes[label][2] >= needed + 2 * 10, label


def group_class_of(svg: str) -> dict[str, str]:
    """label -> the colour class of its node."""
    return {
        group.find(f"{SVG}text").text: group.get("class").split()[1]
        for group in parse(svg).iter(f"{SVG}g")
        if group.get("class").startswith("node ")
    }


def test_a_group_keeps_its_colour_whichever_groups_share_the_diagram():
    def coloured(groups):
        nodes = [GraphNode(g, g, "", g) for g in groups]
        return group_class_of(render_graph(GraphDiagram(T("G", "图"), nodes, []), "en", "g"))

    alone = coloured(["Autograd", "CPU"])
    crowded = coloured(["ADInplaceOrView", "Autograd", "CPU", "Tracer"])
    assert alone["Autograd"] == crowded["Autograd"] and alone["CPU"] == crowded["CPU"]
    assert coloured(["alpha"])["alpha"] == coloured(["alpha", "zeta", "omega"])["alpha"]
    assert coloured(["stage 1", "stage 2"])["stage 2"] == coloured(["stage 2"])["stage 2"]


def test_groups_of_one_diagram_never_share_a_colour():
    names = [f"group {chr(ord('a') + i)}" for i in range(PALETTE_SIZE)]
    nodes = [GraphNode(n, n, "", n) for n in names]
    classes = group_class_of(render_graph(GraphDiagram(T("G", "图"), nodes, []), "en", "g"))
    assert len(set(classes.values())) == PALETTE_SIZE


def test_a_narrow_page_may_shrink_a_diagram_only_so_far():
    root = parse(render_graph(graph(["a", "b"], [("a", "b", "x")]), "en", "g"))
    width = float(root.get("width"))
    assert root.get("style") == f"min-width: {width * GRAPH_MIN_SCALE:.0f}px"


def test_thinning_keeps_every_left_out_point_within_the_tolerance_of_the_drawn_line():
    import math as _math

    from whylab.explorer.figures.charts import thin_polyline

    xs = [i * 0.9 for i in range(600)]
    points = [(x, 150 + 100 * _math.sin(x / 40)) for x in xs]
    points[300] = (points[300][0], points[300][1] + 30)  # one spike
    thinned = thin_polyline(points, 0.25)
    assert thinned[0] == points[0] and thinned[-1] == points[-1]
    assert len(thinned) < len(points) / 3  # a smooth curve needs far fewer points
    assert points[300] in thinned  # the spike stays
    kept = set(thinned)
    for point in points:  # every point left out lies near a drawn segment
        if point in kept:
            continue
        best = _math.inf
        for (x0, y0), (x1, y1) in zip(thinned, thinned[1:], strict=False):
            dx, dy = x1 - x0, y1 - y0
            along = ((point[0] - x0) * dx + (point[1] - y0) * dy) / (dx * dx + dy * dy)
            t = max(0.0, min(1.0, along))
            best = min(best, _math.hypot(point[0] - x0 - t * dx, point[1] - y0 - t * dy))
        assert best <= 0.25 + 1e-9
    # A line that doubles back is not cut short.
    back = [(0.0, 0.0), (10.0, 0.0), (5.0, 0.0)]
    assert thin_polyline(back, 0.25) == back


# ---------------------------------------------------------------- end labels, points, equal scales


def end_labels(svg: str, size) -> list[tuple[int, float, float, float, float]]:
    """(series, left, top, right, bottom) of each direct label, from the text-width estimate."""
    from whylab.explorer.figures.charts import label_line_height

    found = []
    for text in parse(svg).iter(f"{SVG}text"):
        if text.get("class") != "direct-label":
            continue
        spans = list(text.iter(f"{SVG}tspan"))
        left = float(spans[0].get("x"))
        width = max(text_width(span.text, size.legend_font) for span in spans)
        top = float(spans[0].get("y")) - size.legend_font
        bottom = float(spans[-1].get("y")) + label_line_height(size) - size.legend_font
        found.append((int(text.get("data-series")), left, top, left + width, bottom))
    return found


def boxes_overlap(a, b) -> bool:
    return a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]


def plot_right(svg: str) -> float:
    """Where the x axis ends: the plot's right edge."""
    axes = [line for line in parse(svg).iter(f"{SVG}line") if line.get("class") == "axis"]
    return max(float(line.get("x2")) for line in axes)


def drawn_xs(svg: str) -> list[float]:
    """The x pixel of every point of every series line and marker centre."""
    xs = []
    for path in parse(svg).iter(f"{SVG}path"):
        kind = path.get("class", "").split()[0]
        if kind == "series":
            xs += [float(x) for x in re.findall(r"[ML](-?[\d.]+) ", path.get("d"))]
        elif kind == "marker":
            xs += [float(x) for x in re.findall(r"M(-?[\d.]+) ", path.get("d"))]
    return xs


def default_figures(topic_module, name: str):
    experiment = next(e for e in topic_module.EXPERIMENTS if e.name == name)
    return experiment.run(**experiment.parse_params({})).figures


SIZES = pytest.mark.parametrize("size", ["WIDE", "COMPACT"])


@SIZES
@pytest.mark.parametrize("name", ["access-pattern", "misses-by-order"])
def test_loop_order_end_labels_keep_apart_and_off_every_line(name, size):
    from whylab.explorer.figures import charts
    from whylab.topics.loop_order import experiments as loop_order

    size = getattr(charts, size)
    (figure,) = default_figures(loop_order, name)
    for lang in ("en", "zh"):
        svg = render_line_chart(figure, lang, "c", size)
        labels = end_labels(svg, size)
        assert sorted(label[0] for label in labels) == list(range(len(figure.series)))
        for i, label in enumerate(labels):
            assert not any(boxes_overlap(label, other) for other in labels[i + 1 :]), label
        # The labels stand in one column right of the plot, and every line and marker
        # lies left of it, so no label covers a line (markers are 8 px across).
        edge = plot_right(svg)
        assert len({label[1] for label in labels}) == 1
        assert min(label[1] for label in labels) >= edge + charts.LABEL_GAP
        assert max(drawn_xs(svg)) <= edge + 0.05


def test_labels_of_lines_ending_together_fan_out_with_leaders_in_their_order():
    from whylab.explorer.figures import charts

    names = ["ijk", "ikj", "jik", "jki", "kij", "kji"]
    series = [
        Series(T(n, n), [1, 2, 3], [2.0 - 0.3 * i, 1.0, 0.05 + 0.01 * i])
        for i, n in enumerate(names)
    ]
    svg = render_line_chart(chart(*series), "en", "c")
    labels = end_labels(svg, charts.WIDE)
    assert all(not boxes_overlap(a, b) for a, b in itertools.combinations(labels, 2))
    leaders = {
        line.get("class").split()[1]: line
        for line in parse(svg).iter(f"{SVG}line")
        if "label-leader" in line.get("class", "")
    }
    assert len(leaders) == len(names)  # every label was moved off its line's end
    ends = []
    for line in leaders.values():
        run = float(line.get("x2")) - float(line.get("x1"))
        assert run >= charts.LEADER_ROOM  # room to fan out, not a stack of verticals
        ends.append((float(line.get("y1")), float(line.get("y2"))))
    # higher ends get higher labels: no two leaders cross
    ends.sort()
    assert [y2 for _, y2 in ends] == sorted(y2 for _, y2 in ends)
    assert len({round(y2) for _, y2 in ends}) == len(names)


def test_a_series_drawn_as_points_has_markers_at_every_point_and_no_line():
    xs = list(range(30))
    svg = render_line_chart(
        chart(
            Series(T("trace", "轨迹"), xs, [x % 7 for x in xs], draw="points"),
            Series(T("line", "线"), xs, [x / 3 for x in xs]),
        ),
        "en",
        "c",
    )
    root = parse(svg)
    series = [p.get("class") for p in paths_of(root, "series")]
    markers = {p.get("class").split()[1]: p.get("d").count("M") for p in paths_of(root, "marker")}
    swatches = [
        line.get("class")
        for line in root.iter(f"{SVG}line")
        if "legend-swatch" in line.get("class")
    ]
    points_css = next(css for css in markers if f"series {css}" not in series)
    assert len(series) == 1  # the line alone has a path
    assert markers[points_css] == len(xs)  # every access marked, none thinned away
    assert swatches == [next(s for s in series).replace("series", "legend-swatch")]


def test_the_loop_order_access_trace_is_drawn_as_points():
    from whylab.topics.loop_order import experiments as loop_order

    (figure,) = default_figures(loop_order, "access-pattern")
    root = parse(render_line_chart(figure, "en", "c"))
    assert paths_of(root, "series") == []
    marked = sorted(p.get("d").count("M") for p in paths_of(root, "marker"))
    assert marked == sorted(len(s.x) for s in figure.series)


def paths_of(svg_root, kind: str) -> list:
    """The ``<path>`` elements whose class starts with ``kind`` (series, marker)."""
    return [p for p in svg_root.iter(f"{SVG}path") if p.get("class").split()[0] == kind]


def polyline_points(d: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in re.findall(r"[ML](-?[\d.]+) (-?[\d.]+)", d)]


@pytest.mark.parametrize("xs, ys", [([0, 10], [0, 1]), ([0, 1], [0, 10]), ([-2, 3], [1, 1.5])])
def test_equal_scales_draw_one_unit_of_x_as_long_as_one_of_y(xs, ys):
    from whylab.explorer.figures import charts

    for size in (charts.WIDE, charts.COMPACT):
        figure = LineChart(
            T("t", "t"), T("x", "x"), T("y", "y"), [Series(T("s", "s"), xs, ys)], equal_aspect=True
        )
        path = next(p for p in parse(render_line_chart(figure, "en", "c", size)).iter(f"{SVG}path"))
        (x0, y0), (x1, y1) = polyline_points(path.get("d"))
        per_x = (x1 - x0) / (xs[1] - xs[0])
        per_y = (y0 - y1) / (ys[1] - ys[0])
        assert per_x == pytest.approx(per_y, rel=0.01)
        assert x1 <= size.width and y1 >= 0


def test_equal_scales_refuse_a_log_axis():
    with pytest.raises(ValueError, match="linear"):
        LineChart(T("t", "t"), T("x", "x"), T("y", "y"), [], log_x=True, equal_aspect=True)


@SIZES
def test_the_frank_wolfe_simplex_is_equilateral_and_its_labels_keep_apart(size):
    from whylab.explorer.figures import charts
    from whylab.topics.frank_wolfe import experiments as frank_wolfe

    size = getattr(charts, size)
    (figure,) = default_figures(frank_wolfe, "simplex-path")
    for lang in ("en", "zh"):
        svg = render_line_chart(figure, lang, "c", size)
        triangle = paths_of(parse(svg), "series")[0]
        corners = polyline_points(triangle.get("d"))
        xs, ys = [x for x, _ in corners], [y for _, y in corners]
        ratio = (max(ys) - min(ys)) / (max(xs) - min(xs))
        assert ratio == pytest.approx(math.sqrt(3) / 2, rel=0.01)
        labels = end_labels(svg, size)
        assert len(labels) == 3
        assert all(not boxes_overlap(a, b) for a, b in itertools.combinations(labels, 2))
        assert min(label[1] for label in labels) >= plot_right(svg)
