"""A small training loop for the Yin-Yang classifiers: Adam on minibatches, accuracy per epoch.

The same loop trains the spiking networks (through a latency-code encoder) and
the linear and ANN baselines (on the raw four numbers), so the figures they
are compared by come from one procedure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import whylab
from whylab import nn
from whylab.nn import functional as F


@dataclass
class History:
    """Test accuracy after each epoch (index 0: before training), each epoch's mean training
    loss and the learning rate it trained at."""

    test_accuracy: list[float] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)


def scores_of(model: nn.Module, encoded) -> whylab.Tensor:
    """The class scores of ``model``: spiking models return (scores, spikes)."""
    out = model(encoded)
    return out[0] if isinstance(out, tuple) else out


def accuracy(model: nn.Module, encode: Callable, inputs: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of ``inputs`` whose highest score is their label."""
    with whylab.no_grad():
        scores = scores_of(model, encode(inputs)).numpy()
    return float(np.mean(np.argmax(scores, axis=1) == labels))


def train(
    model: nn.Module,
    encode: Callable,
    train_set: tuple[np.ndarray, np.ndarray],
    test_set: tuple[np.ndarray, np.ndarray],
    *,
    epochs: int,
    batch_size: int = 32,
    lr: float = 1e-2,
    seed: int = 0,
    lr_decay: float = 1.0,
    lr_min: float | None = None,
    on_epoch: Callable[[int, History], None] | None = None,
) -> History:
    """Train ``model`` by Adam on cross-entropy; ``encode`` maps a NumPy batch to its input.

    The learning rate is multiplied by ``lr_decay`` after each epoch (``ExponentialLR``),
    or, when ``lr_min`` is given, follows a half cosine from ``lr`` down to ``lr_min``
    over the ``epochs`` of this run (``CosineAnnealingLR``), so the last epoch trains
    at about ``lr_min`` whatever the run's length.
    ``on_epoch(epoch, history)`` is called after each epoch with the history so far.
    """
    _check_schedule("train", epochs, batch_size, lr, lr_decay)
    if lr_min is not None and not (0 <= lr_min < lr and lr_decay == 1.0):
        raise ValueError(f"train: lr_min needs 0 <= lr_min < lr and lr_decay == 1 "
                         f"(got lr_min={lr_min}, lr={lr}, lr_decay={lr_decay})")
    inputs, labels = train_set
    rng = np.random.default_rng(seed)
    optimizer = whylab.optim.Adam(model.parameters(), lr=lr)
    schedules = whylab.optim.lr_scheduler
    schedule = (schedules.ExponentialLR(optimizer, gamma=lr_decay) if lr_min is None
                else schedules.CosineAnnealingLR(optimizer, T_max=max(epochs, 1), eta_min=lr_min))
    history = History(test_accuracy=[accuracy(model, encode, *test_set)])
    for epoch in range(epochs):
        order = rng.permutation(len(labels))
        losses = []
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            scores = scores_of(model, encode(inputs[batch]))
            loss = F.cross_entropy(scores, whylab.tensor(labels[batch]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.item()))
        history.lr.append(optimizer.param_groups[0]["lr"])
        schedule.step()
        history.train_loss.append(float(np.mean(losses)))
        history.test_accuracy.append(accuracy(model, encode, *test_set))
        if on_epoch is not None:
            on_epoch(epoch + 1, history)
    return history


def train_event_network(
    network,
    encode: Callable,
    train_set: tuple[np.ndarray, np.ndarray],
    test_set: tuple[np.ndarray, np.ndarray],
    *,
    epochs: int,
    batch_size: int = 32,
    lr: float = 5e-3,
    seed: int = 0,
    lr_decay: float = 1.0,
    on_epoch: Callable[[int, History], None] | None = None,
) -> History:
    """Train an :class:`~whylab.snn.eventprop.EventNetwork` by Adam on its EventProp gradients.

    Adam here is written out in NumPy (β₁ = 0.9, β₂ = 0.999, ε = 1e-8, as
    ``whylab.optim.Adam`` defaults), since the network's weights are NumPy arrays; the
    learning rate is multiplied by ``lr_decay`` after each epoch.
    """
    _check_schedule("train_event_network", epochs, batch_size, lr, lr_decay)
    inputs, labels = train_set

    def test_accuracy() -> float:
        return float(np.mean(network.predict(encode(test_set[0])) == test_set[1]))

    rng = np.random.default_rng(seed)
    first = [np.zeros_like(w) for w in network.weights]
    second = [np.zeros_like(w) for w in network.weights]
    step = 0
    history = History(test_accuracy=[test_accuracy()])
    for epoch in range(epochs):
        order = rng.permutation(len(labels))
        losses = []
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            loss, grads = network.loss_and_grad(encode(inputs[batch]), labels[batch])
            losses.append(loss)
            step += 1
            for k, grad in enumerate(grads):
                first[k] = 0.9 * first[k] + 0.1 * grad
                second[k] = 0.999 * second[k] + 0.001 * grad**2
                unbiased = first[k] / (1 - 0.9**step)
                scale = np.sqrt(second[k] / (1 - 0.999**step)) + 1e-8
                network.weights[k] -= lr * unbiased / scale
        lr *= lr_decay
        history.train_loss.append(float(np.mean(losses)))
        history.test_accuracy.append(test_accuracy())
        if on_epoch is not None:
            on_epoch(epoch + 1, history)
    return history


def _check_schedule(where: str, epochs: int, batch_size: int, lr: float, lr_decay: float) -> None:
    if epochs < 0 or batch_size < 1 or not lr > 0 or not 0 < lr_decay <= 1:
        raise ValueError(f"{where}: need epochs >= 0, batch_size >= 1, lr > 0 and "
                         f"0 < lr_decay <= 1 (got {epochs}, {batch_size}, {lr}, {lr_decay})")
