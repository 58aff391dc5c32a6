"""Drawing spikes, point clouds and decision regions with the explorer's line charts.

A line chart's series may break wherever a value is NaN, so short pieces of line
separated by NaN draw what a line cannot: a raster is one vertical tick per spike,
a scatter one short dash per point, a decision region one horizontal run per row
of a grid where the network predicts that class.
"""

from __future__ import annotations

import numpy as np

from whylab.explorer.experiment import Series, Text

NAN = float("nan")


def ticks(name: Text, times, rows, height: float = 0.8) -> Series:
    """One vertical tick per spike at (time, row), ``height`` tall."""
    xs: list[float] = []
    ys: list[float] = []
    for time, row in zip(np.ravel(times), np.ravel(rows), strict=True):
        xs += [float(time), float(time), NAN]
        ys += [float(row) - height / 2, float(row) + height / 2, NAN]
    return Series(name, xs, ys)


def dashes(name: Text, xs, ys, width: float) -> Series:
    """One short horizontal dash per point: a scatter plot drawn with a line."""
    out_x: list[float] = []
    out_y: list[float] = []
    for x, y in zip(np.ravel(xs), np.ravel(ys), strict=True):
        out_x += [float(x) - width / 2, float(x) + width / 2, NAN]
        out_y += [float(y), float(y), NAN]
    return Series(name, out_x, out_y)


def runs(name: Text, grid_x: np.ndarray, grid_y: np.ndarray, mask: np.ndarray) -> Series:
    """Horizontal runs over each row of a grid where ``mask`` (rows, columns) is True."""
    half = (grid_x[1] - grid_x[0]) / 2 if grid_x.size > 1 else 0.0
    xs: list[float] = []
    ys: list[float] = []
    for row, y in enumerate(grid_y):
        inside = np.concatenate([[False], mask[row], [False]]).astype(np.int8)
        edges = np.flatnonzero(np.diff(inside))
        for first, after in zip(edges[::2], edges[1::2], strict=True):
            xs += [float(grid_x[first] - half), float(grid_x[after - 1] + half), NAN]
            ys += [float(y), float(y), NAN]
    return Series(name, xs, ys)


def thin(values, most: int = 400) -> list[float]:
    """At most ``most`` evenly spaced values (a chart need not carry every grid point)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size <= most:
        return values.tolist()
    index = np.unique(np.linspace(0, values.size - 1, most).round().astype(int))
    return values[index].tolist()
