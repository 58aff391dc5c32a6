"""The Yin-Yang training loop's learning-rate schedules: exponential decay and cosine annealing."""

from __future__ import annotations

import math

import numpy as np
import pytest

import whylab
from whylab import nn
from whylab.snn import training, yinyang


def _train(epochs: int, **schedule) -> training.History:
    whylab.manual_seed(0)
    model = nn.Linear(4, 3)
    data = yinyang.yin_yang(32, seed=1)

    def encode(points):
        return whylab.tensor(points, dtype=whylab.float32)

    return training.train(model, encode, data, data, epochs=epochs, batch_size=32,
                          lr=2e-2, seed=0, **schedule)


def test_exponential_decay_multiplies_the_rate_each_epoch():
    history = _train(4, lr_decay=0.5)
    assert history.lr == pytest.approx([2e-2, 1e-2, 5e-3, 2.5e-3])


def test_cosine_annealing_follows_the_half_cosine_to_lr_min_over_the_run():
    for epochs in (3, 25):
        history = _train(epochs, lr_min=1e-4)
        expected = [1e-4 + (2e-2 - 1e-4) * (1 + math.cos(math.pi * k / epochs)) / 2
                    for k in range(epochs)]
        assert history.lr == pytest.approx(expected)
        assert np.all(np.diff(history.lr) < 0)
    assert history.lr[-1] < 3e-4  # the last of 25 epochs trains at 2.2e-4


def test_cosine_annealing_rejects_a_floor_above_the_rate_or_a_second_schedule():
    with pytest.raises(ValueError, match="lr_min"):
        _train(2, lr_min=3e-2)
    with pytest.raises(ValueError, match="lr_min"):
        _train(2, lr_min=1e-4, lr_decay=0.9)
