"""Group colours are declared by the topics, in their diagrams, and drawn as declared.

Every graph diagram the shipped topics draw at their defaults is rendered (wide, and
narrow where it has a narrow drawing); every node of a group its diagram declares a
colour for must carry that colour's class, and so must the group's legend swatch.
A declaration naming a group the diagram does not draw is stale (the way the
drawing code once pinned colours for names no topic drew any more) and fails too.
"""

from __future__ import annotations

import re

import pytest

from tests.explorer.default_runs import default_record
from whylab.explorer.content.topics import load_registry
from whylab.explorer.experiment import GROUP_COLOURS, GraphDiagram, GraphNode, T
from whylab.explorer.figures.graph_layout import NARROW_GRAPH, WIDE_GRAPH
from whylab.explorer.figures.graphs import render_graph, render_graph_figure

NODE = re.compile(r'<g class="node (g\d)">')
SWATCH = re.compile(r'<line class="legend-swatch (g\d)"[^>]*/>\s*(?:<path[^>]*/>)?\s*'
                    r'<text class="legend-label"[^>]*>(.*?)</text>', re.S)


def diagrams_at_defaults():
    """(topic, experiment, diagram) for every graph diagram a shipped topic draws."""
    registry = load_registry()
    found = []
    for topic in registry:
        source = "".join(p.read_text() for p in topic.folder.glob("*.py"))
        if "GraphDiagram(" not in source:
            continue
        for experiment in topic.experiments.values():
            if experiment.timing:
                continue
            record = default_record(topic, experiment)
            for figure in record.result.figures:
                if isinstance(figure, GraphDiagram):
                    found.append((topic.slug, experiment.name, figure))
    return found


@pytest.fixture(scope="module")
def diagrams():
    return diagrams_at_defaults()


def drawn_colours(markup: str) -> tuple[list[str], dict[str, str]]:
    """The colour class of each drawn node, and legend label -> swatch class."""
    nodes = NODE.findall(markup)
    legend = {label: css for css, label in SWATCH.findall(markup)}
    return nodes, legend


def test_the_topics_declare_colours_for_their_diagrams(diagrams):
    declaring = {slug for slug, _, diagram in diagrams if diagram.group_colours}
    assert {"dispatcher", "autograd", "strided-tensors"} <= declaring


def test_every_declared_group_is_drawn_in_its_colour(diagrams):
    problems = []
    for slug, name, diagram in diagrams:
        groups = [n.group for n in diagram.nodes if n.group]
        for group in set(diagram.group_colours) - set(groups):
            problems.append(f"{slug}/{name}: declares a colour for {group!r}, never drawn")
        for drawing in (WIDE_GRAPH, NARROW_GRAPH):
            markup = render_graph(diagram, "en", "figure", drawing)
            node_classes, legend = drawn_colours(markup)
            for group in set(groups) & set(diagram.group_colours):
                wanted = f"g{GROUP_COLOURS.index(diagram.group_colours[group])}"
                if legend.get(group) != wanted:
                    drawn_as = legend.get(group)
                    problems.append(f"{slug}/{name}: {group!r} in the legend as {drawn_as}")
                # one colour per group in a diagram, so each of its nodes is one of these
                if node_classes.count(wanted) != groups.count(group):
                    problems.append(
                        f"{slug}/{name} ({drawing.name}): {groups.count(group)} nodes of "
                        f"{group!r}, {node_classes.count(wanted)} drawn in {wanted}"
                    )
    assert not problems, "\n".join(problems)


def test_the_strided_views_are_not_drawn_in_autograds_colour(diagrams):
    """The regression: contiguous views were drawn in Autograd's purple (g3)."""
    autograd = f"g{GROUP_COLOURS.index('purple')}"
    strided = [d for slug, _, d in diagrams if slug == "strided-tensors"]
    assert strided
    for diagram in strided:
        _, legend = drawn_colours(render_graph_figure(diagram, "en", "figure"))
        assert legend["✓ is_contiguous()"] == f"g{GROUP_COLOURS.index('green')}"
        assert autograd not in legend.values()


def test_a_declared_colour_wins_over_a_hashed_group_before_it():
    """A group without a declaration never takes the slot a declared one asks for."""
    nodes = [GraphNode(id=f"n{i}", label=f"n{i}", group=g) for i, g in enumerate("abcdefgh")]
    for colour in GROUP_COLOURS:
        diagram = GraphDiagram(T("t", "t"), nodes, [], group_colours={"h": colour})
        _, legend = drawn_colours(render_graph_figure(diagram, "en", "figure"))
        assert legend["h"] == f"g{GROUP_COLOURS.index(colour)}"
        assert len(set(legend.values())) == 8  # and the eight groups still differ


def test_an_unknown_colour_is_refused_with_its_name():
    with pytest.raises(ValueError, match="magenta"):
        GraphDiagram(T("t", "t"), [], [], group_colours={"a": "magenta"})
