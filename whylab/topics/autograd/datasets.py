"""Small two-dimensional classification data sets, made in code from a seed.

* ``spirals``: two interleaved spirals (two classes), the classic hard case for a
  small network;
* ``rings``: an inner disc and an outer ring (two classes), not linearly separable;
* ``blobs``: three Gaussian clusters (three classes).

Points are float64, centred and scaled to unit standard deviation per feature.
"""

from __future__ import annotations

import numpy as np

DATASETS = ("spirals", "rings", "blobs")


def _spirals(count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = np.arange(count) % 2
    turn = rng.uniform(0.0, 1.0, count)
    radius = 0.15 + 0.85 * turn
    angle = 3.0 * np.pi * turn + np.pi * labels  # the second spiral is the first turned by π
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return points + 0.03 * rng.standard_normal(points.shape), labels


def _rings(count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = np.arange(count) % 2
    radius = np.where(labels == 0, rng.uniform(0.0, 0.5, count), rng.uniform(0.8, 1.2, count))
    angle = rng.uniform(0.0, 2.0 * np.pi, count)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1), labels


def _blobs(count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = np.arange(count) % 3
    centres = np.array([[0.0, 1.0], [-0.9, -0.5], [0.9, -0.5]])
    return centres[labels] + 0.35 * rng.standard_normal((count, 2)), labels


def make_dataset(kind: str, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` points of data set ``kind`` and their integer labels."""
    makers = {"spirals": _spirals, "rings": _rings, "blobs": _blobs}
    points, labels = makers[kind](count, np.random.default_rng(seed))
    points = (points - points.mean(axis=0)) / points.std(axis=0)
    return points, labels.astype(np.int64)


def class_count(kind: str) -> int:
    return 3 if kind == "blobs" else 2
