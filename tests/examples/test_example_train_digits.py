"""examples/train_digits.py: whylab learns the digits, and matches PyTorch step by step."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def both_runs(example):
    data = example.load_data(np.float64)
    whylab = example.import_framework("whylab")
    return example.train(whylab, data), example.train(torch, data)


def test_whylab_reaches_95_percent_test_accuracy(both_runs):
    whylab_run, _ = both_runs
    assert whylab_run.test_accuracy >= 0.95
    assert whylab_run.losses[-1] < whylab_run.losses[0] / 10


def test_same_losses_as_torch_step_by_step(both_runs):
    whylab_run, torch_run = both_runs
    assert len(whylab_run.losses) == len(torch_run.losses) >= 200
    np.testing.assert_allclose(whylab_run.losses[:200], torch_run.losses[:200], rtol=0, atol=1e-8)
    # the rest of the run stays together too (float64 keeps rounding differences tiny)
    np.testing.assert_allclose(whylab_run.losses, torch_run.losses, rtol=0, atol=1e-8)
    assert whylab_run.test_accuracy == torch_run.test_accuracy
