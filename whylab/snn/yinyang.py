"""The Yin-Yang data set (Kriener, Göltz & Petrovici 2021), generated here, and its latency code.

Points (x, y) in the square [0, 2R]² inside the circle of radius R = r_big around
(R, R) belong to one of three classes, by the rule of the reference implementation
(github.com/lkriener/yin_yang_data_set, ``dataset.py``), with d_right and d_left the
distances to the centres (1.5R, R) and (0.5R, R) of the two dots:

* dot (label 2) if d_right < r_small or d_left < r_small;
* otherwise label 1 if d_right ≤ r_small, or r_small < d_left ≤ R/2, or
  (y > R and d_right > R/2); label 0 in the rest of the disc.

The reference names the labels ``['yin', 'yang', 'dot']`` by index, so 0 is yin,
1 is yang and 2 is dot. Samples are drawn by rejection: a goal class first, then
uniform points until one of that class lands. The reference draws each goal class
at random (classes balanced in expectation); here the goal classes are a shuffled
sequence 0, 1, 2, 0, 1, 2, ... so every class count is n/3 rounded (balanced
exactly). Each sample is the reference's four numbers (x, y, 1 − x, 1 − y): the
mirrored pair lets neurons without an intrinsic bias see every point.

Spiking networks read the four numbers as spike times (latency coding): value v
fires at t_early + v·(t_late − t_early), and a fifth input, the bias spike, fires at
the same time t_bias for every sample, as in the reference spiking networks
(Göltz et al. 2021), so that a neuron without a bias current still has an input
whose timing does not depend on the point.
"""

from __future__ import annotations

import numpy as np

from whylab.snn import _validate

CLASS_NAMES = ("yin", "yang", "dot")
R_SMALL = 0.1
R_BIG = 0.5


def yin_yang_class(x, y, r_small: float = R_SMALL, r_big: float = R_BIG) -> np.ndarray:
    """The class (0 yin, 1 yang, 2 dot) of points (x, y) inside the big circle."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    d_right = np.hypot(x - 1.5 * r_big, y - r_big)
    d_left = np.hypot(x - 0.5 * r_big, y - r_big)
    criterion1 = d_right <= r_small
    criterion2 = (d_left > r_small) & (d_left <= 0.5 * r_big)
    criterion3 = (y > r_big) & (d_right > 0.5 * r_big)
    label = (criterion1 | criterion2 | criterion3).astype(np.int64)
    dots = (d_right < r_small) | (d_left < r_small)
    return np.where(dots, 2, label)


def in_disc(x, y, r_big: float = R_BIG) -> np.ndarray:
    """Whether (x, y) lies inside the big circle (the data's support)."""
    return np.hypot(np.asarray(x) - r_big, np.asarray(y) - r_big) <= r_big


def yin_yang(
    n: int, seed: int = 0, r_small: float = R_SMALL, r_big: float = R_BIG
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` samples: inputs (n, 4) as (x, y, 1 − x, 1 − y) and labels (n,) in {0, 1, 2}."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"yin_yang: n must be an int >= 1 (got {n!r})")
    r_small = _validate.positive("yin_yang", "r_small", r_small)
    r_big = _validate.positive("yin_yang", "r_big", r_big)
    if r_small >= 0.5 * r_big:
        raise ValueError(f"yin_yang: r_small must be < r_big / 2 = {0.5 * r_big:g} "
                         f"(got {r_small:g}), or the dots swallow the yin and yang")
    rng = np.random.default_rng(seed)
    goals = rng.permutation(np.arange(n) % 3)
    xs = np.empty(n)
    ys = np.empty(n)
    missing = np.arange(n)
    # Rejection sampling, vectorised: each round proposes one point per missing sample.
    while missing.size:
        px, py = rng.random((2, missing.size)) * 2.0 * r_big
        ok = in_disc(px, py, r_big) & (yin_yang_class(px, py, r_small, r_big) == goals[missing])
        xs[missing[ok]] = px[ok]
        ys[missing[ok]] = py[ok]
        missing = missing[~ok]
    inputs = np.stack([xs, ys, 1.0 - xs, 1.0 - ys], axis=1)
    return inputs, goals.astype(np.int64)


def latency_code(
    inputs, t_early: float = 0.0, t_late: float = 1.0, t_bias: float = 0.0
) -> np.ndarray:
    """Spike times (n, features + 1): t_early + v·(t_late − t_early) per value v in [0, 1],
    then the bias spike at ``t_bias``."""
    values = _validate.array_of_shape("latency_code", "inputs", inputs, 2)
    if values.size and (values.min() < 0 or values.max() > 1):
        raise ValueError("latency_code: inputs must lie in [0, 1] "
                         f"(got min {values.min():g}, max {values.max():g})")
    t_early = _validate.non_negative("latency_code", "t_early", t_early)
    t_late = _validate.finite("latency_code", "t_late", t_late)
    t_bias = _validate.non_negative("latency_code", "t_bias", t_bias)
    if t_late <= t_early:
        raise ValueError(f"latency_code: t_late must be > t_early (got t_early={t_early:g}, "
                         f"t_late={t_late:g})")
    times = t_early + values * (t_late - t_early)
    return np.concatenate([times, np.full((values.shape[0], 1), t_bias)], axis=1)


def spike_raster(spike_times, steps: int, dt: float) -> np.ndarray:
    """Spike times (n, inputs) as a raster (steps, n, inputs) of 0/1 on the grid t = k·dt.

    A spike at time t lands in step round(t / dt); times beyond the grid raise.
    """
    times = _validate.array_of_shape("spike_raster", "spike_times", spike_times, 2)
    dt = _validate.positive("spike_raster", "dt", dt)
    index = np.rint(times / dt).astype(np.int64)
    if index.size and (index.min() < 0 or index.max() >= steps):
        raise ValueError(f"spike_raster: spike times must lie in [0, {(steps - 1) * dt:g}] "
                         f"for {steps} steps of {dt:g} (got {times.min():g} to {times.max():g})")
    raster = np.zeros((steps,) + times.shape)
    n, m = np.indices(times.shape)
    raster[index, n, m] = 1.0
    return raster
