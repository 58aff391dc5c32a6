"""Placing edge labels along their own edge, where they cover no node, no other
label and no other edge's line near their centre (:class:`LabelPlacer`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from whylab.explorer.figures.graph_layout import Curve, curve_point
from whylab.explorer.figures.text import text_width

EDGE_LABEL_FONT = 11.0
LABEL_HEIGHT = 15.0
LABEL_PADDING = 3.0  # each side of the text, inside the label's background box
NODE_CLEARANCE = 8.0  # labels keep this far from boxes (and the arrowheads beside them)
LABEL_CENTRE_RADIUS = 10.0  # another edge this close to a label's centre makes it ambiguous
# Where along its edge a label may sit (Bézier parameter), best first: near the
# head, so it sits by the node it feeds, then gradually further away.
LABEL_POSITIONS = (0.72, 0.8, 0.64, 0.86, 0.56, 0.48, 0.4, 0.3, 0.92, 0.2)
GRID_CELL = 24.0
SAMPLE_SPACING = 5.0  # between points sampled along edges to find them near a label

Box = tuple[float, float, float, float]  # left, top, width, height


def _overlap(a: Box, b: Box) -> float:
    """Area shared by two boxes."""
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def _sample(curves: list[Curve]) -> list[tuple[float, float]]:
    """Points along an edge, a few pixels apart."""
    points = []
    for curve in curves:
        hull = sum(math.dist(a, b) for a, b in zip(curve, curve[1:], strict=False))
        steps = max(4, math.ceil(hull / SAMPLE_SPACING))
        points.extend(curve_point(curve, i / steps) for i in range(steps + 1))
    return points


def _grown(box: Box, margin: float) -> Box:
    x, y, w, h = box
    return x - margin, y - margin, w + 2 * margin, h + 2 * margin


def _cells(left: float, top: float, right: float, bottom: float) -> Iterator[tuple[int, int]]:
    """The cells of a :data:`GRID_CELL` grid that a rectangle touches."""
    for i in range(math.floor(left / GRID_CELL), math.floor(right / GRID_CELL) + 1):
        for j in range(math.floor(top / GRID_CELL), math.floor(bottom / GRID_CELL) + 1):
            yield i, j


class LabelPlacer:
    """Chooses where each edge label goes, so labels stay readable where edges meet.

    Every label tries the positions of :data:`LABEL_POSITIONS` along its own
    edge and takes the best: first one that covers no node and no label placed
    before it; then one where no other edge passes close to the label's centre
    (a line through the middle of a label makes it unclear which edge the
    label belongs to; one clipping a corner does not); then the one nearest
    the edge's head. Boxes already taken and points sampled along every edge
    are kept in grids, so each test looks only at what is nearby.
    """

    def __init__(self, node_boxes: list[Box], edges: list[list[Curve]]):
        self.taken: list[Box] = []
        self.taken_grid: dict[tuple[int, int], list[int]] = {}
        for box in node_boxes:
            self._reserve(_grown(box, NODE_CLEARANCE))
        self.edge_grid: dict[tuple[int, int], list[tuple[float, float, int]]] = {}
        for index, curves in enumerate(edges):
            for x, y in _sample(curves):
                cell = (math.floor(x / GRID_CELL), math.floor(y / GRID_CELL))
                self.edge_grid.setdefault(cell, []).append((x, y, index))

    def _reserve(self, box: Box) -> None:
        left, top, width, height = box
        for cell in _cells(left, top, left + width, top + height):
            self.taken_grid.setdefault(cell, []).append(len(self.taken))
        self.taken.append(box)

    def _covered(self, box: Box) -> float:
        """Area of ``box`` that overlaps nodes and labels already placed."""
        left, top, width, height = box
        nearby = {
            index
            for cell in _cells(left, top, left + width, top + height)
            for index in self.taken_grid.get(cell, ())
        }
        return sum(_overlap(box, self.taken[index]) for index in nearby)

    def _edges_near(self, x: float, y: float, own: int) -> int:
        """How many other edges pass within :data:`LABEL_CENTRE_RADIUS` of (x, y)."""
        reach = LABEL_CENTRE_RADIUS
        near = set()
        for cell in _cells(x - reach, y - reach, x + reach, y + reach):
            for px, py, index in self.edge_grid.get(cell, ()):
                if index != own and (px - x) ** 2 + (py - y) ** 2 <= reach * reach:
                    near.add(index)
        return len(near)

    def place(self, edge: int, curves: list[Curve], label: str) -> Box:
        """The box of ``label`` on edge number ``edge`` (drawn as ``curves``); reserves it."""
        width = text_width(label, EDGE_LABEL_FONT) + 2 * LABEL_PADDING
        best: tuple[float, int, int] | None = None
        chosen: Box = (0.0, 0.0, width, LABEL_HEIGHT)
        for rank, t in enumerate(LABEL_POSITIONS):
            x, y = curve_point(curves[0], t)
            box = (x - width / 2, y - LABEL_HEIGHT / 2, width, LABEL_HEIGHT)
            score = (self._covered(box), self._edges_near(x, y, edge), rank)
            if best is None or score < best:
                best, chosen = score, box
            if score[:2] == (0, 0):
                break  # nothing better than the most preferred clear spot
        self._reserve(chosen)
        return chosen
