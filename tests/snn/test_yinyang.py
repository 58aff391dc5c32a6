"""whylab.snn.yinyang: the class rule, the balance, the mirrored inputs and the latency code."""

from __future__ import annotations

import numpy as np
import pytest

from whylab.snn import yinyang


@pytest.mark.parametrize("point,label", [
    ((0.25, 0.5), 2), ((0.75, 0.5), 2),      # the two dots' centres
    ((0.5, 0.9), 1), ((0.5, 0.1), 0),        # top is yang, bottom yin (outside the circles)
    ((0.25, 0.7), 1), ((0.75, 0.3), 0),      # inside the left and right medium circles
    ((0.25, 0.62), 1), ((0.75, 0.62), 0),    # just outside each dot
])
def test_class_rule_at_known_points(point, label):
    assert yinyang.yin_yang_class(*point) == label


def test_class_rule_against_geometry_at_random_points():
    # Random points, not a grid: on a grid some points sit exactly on a dot's rim, where the
    # reference's rule (d <= r_small for one criterion, d < r_small for the dots) is its own.
    x, y = np.random.default_rng(3).random((2, 200_000))
    inside = yinyang.in_disc(x, y)
    left, right = np.hypot(x - 0.25, y - 0.5), np.hypot(x - 0.75, y - 0.5)
    yang = (left <= 0.25) | ((y > 0.5) & (right > 0.25))
    expected = np.where((left < 0.1) | (right < 0.1), 2, yang.astype(int))
    assert np.array_equal(yinyang.yin_yang_class(x, y)[inside], expected[inside])


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 1001])
def test_balanced_inside_and_mirrored(n):
    inputs, labels = yinyang.yin_yang(n, seed=7)
    assert inputs.shape == (n, 4) and labels.shape == (n,)
    counts = np.bincount(labels, minlength=3)
    assert counts.max() - counts.min() <= 1
    assert np.all(yinyang.in_disc(inputs[:, 0], inputs[:, 1]))
    assert np.array_equal(yinyang.yin_yang_class(inputs[:, 0], inputs[:, 1]), labels)
    assert np.array_equal(inputs[:, 2:], 1.0 - inputs[:, :2])


def test_seeds_reproduce_and_differ():
    a, _ = yinyang.yin_yang(50, seed=1)
    b, _ = yinyang.yin_yang(50, seed=1)
    c, _ = yinyang.yin_yang(50, seed=2)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_latency_code_and_raster():
    times = yinyang.latency_code(np.array([[0.0, 0.5, 1.0, 0.25]]), 2.0, 10.0, 1.0)
    assert times.tolist() == [[2.0, 6.0, 10.0, 4.0, 1.0]]
    raster = yinyang.spike_raster(times, 12, 1.0)
    assert raster.shape == (12, 1, 5) and raster.sum() == 5
    assert raster[6, 0, 1] == 1.0 and raster[1, 0, 4] == 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        yinyang.yin_yang(0)
    with pytest.raises(ValueError, match="r_small must be < r_big / 2"):
        yinyang.yin_yang(10, r_small=0.3)
    with pytest.raises(ValueError, match=r"inputs must lie in \[0, 1\]"):
        yinyang.latency_code(np.array([[1.5, 0.0]]))
    with pytest.raises(ValueError, match="inputs must have 2 dimension"):
        yinyang.latency_code(np.array([0.5]))
    with pytest.raises(ValueError, match="t_late must be > t_early"):
        yinyang.latency_code(np.array([[0.5]]), 3.0, 2.0)
    with pytest.raises(ValueError, match="spike times must lie in"):
        yinyang.spike_raster(np.array([[20.0]]), 10, 1.0)
