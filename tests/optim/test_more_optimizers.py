"""RMSprop, Adagrad, LBFGS and the learning-rate schedulers against torch, step by step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import whylab

START = np.array([1.5, -2.0, 0.5, 3.0])
SCALES = np.array([1.0, 3.0, 10.0, 0.5])


def _bowl(framework, x):
    scales = framework.tensor(SCALES)
    return (x * x * scales).sum() + (x[0] * x[1]).sin()


def _trajectory(framework, make_optimizer, make_scheduler=None, steps=15):
    x = framework.tensor(START.copy(), requires_grad=True)
    optimizer = make_optimizer(framework.optim, [x])
    scheduler = make_scheduler(framework.optim.lr_scheduler, optimizer) if make_scheduler else None
    points, rates = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        _bowl(framework, x).backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        points.append(x.detach().numpy().copy())
        rates.append(optimizer.param_groups[0]["lr"])
    return np.array(points), np.array(rates)


OPTIMIZERS = {
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01),
    "rmsprop-centered-momentum": lambda o, p: o.RMSprop(
        p, lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1
    ),
    "adagrad": lambda o, p: o.Adagrad(p, lr=0.5),
    "adagrad-decay": lambda o, p: o.Adagrad(
        p, lr=0.5, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.2
    ),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizers_follow_torch(name):
    ours, _ = _trajectory(whylab, OPTIMIZERS[name])
    theirs, _ = _trajectory(torch, OPTIMIZERS[name])
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


SCHEDULERS = {
    "step": lambda s, o: s.StepLR(o, step_size=4, gamma=0.5),
    "multistep": lambda s, o: s.MultiStepLR(o, milestones=[3, 8, 8], gamma=0.1),
    "exponential": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "cosine": lambda s, o: s.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
    "lambda": lambda s, o: s.LambdaLR(o, lambda epoch: 1.0 / (1 + epoch)),
    "linear": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=5),
}


@pytest.mark.parametrize("name", SCHEDULERS)
def test_schedulers_follow_torch(name):
    sgd = lambda o, p: o.SGD(p, lr=0.05, momentum=0.9)  # noqa: E731
    ours, our_rates = _trajectory(whylab, sgd, SCHEDULERS[name])
    theirs, their_rates = _trajectory(torch, sgd, SCHEDULERS[name])
    np.testing.assert_allclose(our_rates, their_rates, rtol=1e-12)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_reduce_lr_on_plateau_follows_torch():
    rates = {}
    for framework in (whylab, torch):
        x = framework.tensor([1.0], requires_grad=True)
        optimizer = framework.optim.SGD([x], lr=1.0)
        scheduler = framework.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2)
        seen = []
        for metric in [5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 2]:
            scheduler.step(metric)
            seen.append(optimizer.param_groups[0]["lr"])
        rates[framework.__name__] = seen
    assert rates["whylab"] == pytest.approx(rates["torch"])


@pytest.mark.parametrize("history_size, max_iter", [(100, 20), (3, 7)])
def test_lbfgs_follows_torch_on_rosenbrock(history_size, max_iter):
    results = {}
    for framework in (whylab, torch):
        x = framework.tensor([-1.2, 1.0], dtype=framework.float64, requires_grad=True)
        optimizer = framework.optim.LBFGS([x], lr=1, max_iter=max_iter, history_size=history_size)

        def closure(x=x, optimizer=optimizer):
            optimizer.zero_grad()
            loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            loss.backward()
            return loss

        losses = [optimizer.step(closure).item() for _ in range(4)]
        evaluations = optimizer.state[x]["func_evals"]
        results[framework.__name__] = (x.detach().numpy().copy(), losses, evaluations)
    ours, theirs = results["whylab"], results["torch"]
    # The same iterations in a different order of rounding: near Rosenbrock's minimum the
    # loss is tiny, so compare it absolutely.
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-7)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-7, atol=1e-10)
    assert ours[2] == theirs[2]


def test_bad_arguments_are_refused():
    x = whylab.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        whylab.optim.RMSprop([x], lr=-1)
    with pytest.raises(ValueError, match="Invalid epsilon"):
        whylab.optim.Adagrad([x], eps=-1)
    with pytest.raises(NotImplementedError, match="strong_wolfe"):
        whylab.optim.LBFGS([x], line_search_fn="strong_wolfe")
    with pytest.raises(RuntimeError, match="closure"):
        whylab.optim.LBFGS([x]).step(None)
