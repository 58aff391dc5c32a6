"""Train a small MLP on scikit-learn's handwritten digits, with whylab or with PyTorch.

The data set is scikit-learn's ``load_digits``: 1797 greyscale 8x8 images of the digits 0-9,
shipped with scikit-learn (no download). We standardise the 64 pixel values with statistics
of the training split, train a 64-128-10 ReLU network with minibatch SGD + momentum on the
cross-entropy loss, and report the test accuracy (about 97%).

The training code is written once, in :func:`train`, against a *framework module* ``fw``:
pass ``whylab`` or ``torch`` and the very same lines run under either. Started from the same
initial weights and fed the same batch order, the two produce the same losses step by step
(in float64, to about 1e-12) - which is what "whylab follows PyTorch's semantics" means in
practice.

Run from the repository root:

    PYTHONPATH=. python examples/train_digits.py                     # whylab
    PYTHONPATH=. python examples/train_digits.py --framework torch   # PyTorch
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, field

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HIDDEN = 128


@dataclass
class DigitsData:
    """Standardised digits, split once into train and test parts (NumPy arrays)."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray


@dataclass
class TrainResult:
    """What one training run produced."""

    losses: list[float] = field(default_factory=list)
    test_accuracy: float = 0.0


def load_data(dtype=np.float64, seed: int = 0) -> DigitsData:
    """Load the digits, split 75/25 (stratified, fixed seed) and standardise each pixel.

    Pixels that are constant over the training images (e.g. the always-blank corners) get
    standard deviation 1 instead of 0, so they stay finite (and equal to zero).
    """
    digits = load_digits()
    train_x, test_x, train_y, test_y = train_test_split(
        digits.data, digits.target, test_size=0.25, random_state=seed, stratify=digits.target
    )
    mean = train_x.mean(axis=0)
    std = train_x.std(axis=0)
    std[std == 0] = 1.0
    return DigitsData(
        train_x=((train_x - mean) / std).astype(dtype),
        train_y=train_y.astype(np.int64),
        test_x=((test_x - mean) / std).astype(dtype),
        test_y=test_y.astype(np.int64),
    )


def initial_weights(seed: int = 0, dtype=np.float64) -> dict[str, np.ndarray]:
    """Draw the network's starting weights once (torch's default Linear init ranges),
    so that both frameworks can start from exactly the same point."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, (fan_out, fan_in) in {"0": (HIDDEN, 64), "2": (10, HIDDEN)}.items():
        bound = 1 / np.sqrt(fan_in)
        weights[f"{name}.weight"] = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(dtype)
        weights[f"{name}.bias"] = rng.uniform(-bound, bound, fan_out).astype(dtype)
    return weights


def batch_order(num_examples: int, batch_size: int, epochs: int, seed: int = 0):
    """The list of index batches for all epochs: a fresh shuffle per epoch, fixed by seed."""
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(epochs):
        permutation = rng.permutation(num_examples)
        for start in range(0, num_examples, batch_size):
            batches.append(permutation[start : start + batch_size])
    return batches


def train(
    fw,
    data: DigitsData,
    weights: dict[str, np.ndarray] | None = None,
    epochs: int = 10,
    batch_size: int = 32,
    lr: float = 0.05,
    momentum: float = 0.9,
    max_steps: int | None = None,
) -> TrainResult:
    """Train the MLP with framework module ``fw`` (``whylab`` or ``torch``).

    Args:
        fw: the framework module; only its PyTorch-style public API is used.
        data: the standardised digits from :func:`load_data`.
        weights: starting weights by state-dict name; None draws them with seed 0.
        epochs, batch_size, lr, momentum: the usual training settings.
        max_steps: stop after this many optimizer steps (for quick comparisons).
    """
    if weights is None:
        weights = initial_weights(dtype=data.train_x.dtype)
    model = fw.nn.Sequential(
        fw.nn.Linear(64, HIDDEN),
        fw.nn.ReLU(),
        fw.nn.Linear(HIDDEN, 10),
    )
    dtype = fw.float64 if data.train_x.dtype == np.float64 else fw.float32
    model.to(dtype)
    model.load_state_dict({name: fw.tensor(value) for name, value in weights.items()})
    optimizer = fw.optim.SGD(model.parameters(), lr=lr, momentum=momentum)

    train_x = fw.tensor(data.train_x)
    train_y = fw.tensor(data.train_y)
    result = TrainResult()
    model.train()
    for step, indices in enumerate(batch_order(len(data.train_y), batch_size, epochs)):
        if max_steps is not None and step >= max_steps:
            break
        index = fw.tensor(indices)
        logits = model(train_x[index])
        loss = fw.nn.functional.cross_entropy(logits, train_y[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        result.losses.append(loss.item())

    model.eval()
    with fw.no_grad():
        predictions = model(fw.tensor(data.test_x)).argmax(dim=1)
        correct = (predictions == fw.tensor(data.test_y)).sum().item()
    result.test_accuracy = correct / len(data.test_y)
    return result


def import_framework(name: str):
    """Import ``whylab`` (with its nn and optim packages) or ``torch`` by name."""
    if name == "whylab":
        importlib.import_module("whylab.nn")
        importlib.import_module("whylab.optim")
    return importlib.import_module(name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train an MLP on the 8x8 digits.")
    parser.add_argument("--framework", choices=["whylab", "torch"], default="whylab")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args(argv)

    fw = import_framework(args.framework)
    result = train(fw, load_data(), epochs=args.epochs)
    steps_per_epoch = len(result.losses) // args.epochs
    for epoch in range(args.epochs):
        chunk = result.losses[epoch * steps_per_epoch : (epoch + 1) * steps_per_epoch]
        print(f"epoch {epoch + 1:2d}: mean training loss {np.mean(chunk):.4f}")
    print(f"{args.framework}: test accuracy {result.test_accuracy:.2%}")


if __name__ == "__main__":
    main()
