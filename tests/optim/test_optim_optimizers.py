"""whylab.optim against torch.optim: same parameters after N steps, same state handling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import whylab
import whylab.nn as wnn
import whylab.optim as woptim

SHAPES = [(3, 4), (5,), ()]


def numpy_gradient(value: np.ndarray, step: int) -> np.ndarray:
    """A deterministic, parameter-dependent gradient (not a constant) for step ``step``."""
    return np.sin(3.0 * value + step) + 0.1 * value**2 - 0.05 * step


def run_pair(make_whylab, make_torch, steps: int = 12, seed: int = 0):
    """Run both optimizers from the same start with the same gradient rule; return params."""
    rng = np.random.default_rng(seed)
    starts = [rng.standard_normal(shape) for shape in SHAPES]
    w_params = [wnn.Parameter(whylab.tensor(start.copy())) for start in starts]
    t_params = [torch.nn.Parameter(torch.tensor(start.copy())) for start in starts]
    w_opt, t_opt = make_whylab(w_params), make_torch(t_params)
    for step in range(steps):
        for wp, tp in zip(w_params, t_params, strict=True):
            wp.grad = whylab.tensor(numpy_gradient(wp.detach().numpy(), step))
            tp.grad = torch.tensor(numpy_gradient(tp.detach().numpy(), step))
        w_opt.step()
        t_opt.step()
    return w_params, t_params, w_opt, t_opt


def assert_params_close(w_params, t_params, atol=1e-12):
    for wp, tp in zip(w_params, t_params, strict=True):
        np.testing.assert_allclose(wp.detach().numpy(), tp.detach().numpy(), rtol=0, atol=atol)


SGD_OPTIONS = [
    dict(momentum=momentum, dampening=dampening, weight_decay=wd, nesterov=nesterov,
         maximize=maximize)
    for momentum, dampening, wd, nesterov, maximize in itertools.product(
        [0.0, 0.9], [0.0, 0.3], [0.0, 0.01], [False, True], [False, True]
    )
    if not (nesterov and (momentum == 0 or dampening != 0))
]


@pytest.mark.parametrize("options", SGD_OPTIONS, ids=str)
def test_sgd_matches_torch(options):
    w, t, _, _ = run_pair(
        lambda ps: woptim.SGD(ps, lr=0.05, **options),
        lambda ps: torch.optim.SGD(ps, lr=0.05, **options),
    )
    assert_params_close(w, t)


ADAM_OPTIONS = [
    dict(weight_decay=wd, amsgrad=amsgrad, maximize=maximize, betas=betas)
    for wd, amsgrad, maximize, betas in itertools.product(
        [0.0, 0.05], [False, True], [False, True], [(0.9, 0.999), (0.6, 0.7)]
    )
]


@pytest.mark.parametrize("options", ADAM_OPTIONS, ids=str)
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_family_matches_torch(name, options):
    w, t, _, _ = run_pair(
        lambda ps: getattr(woptim, name)(ps, lr=0.03, eps=1e-6, **options),
        lambda ps: getattr(torch.optim, name)(ps, lr=0.03, eps=1e-6, **options),
        steps=15,
    )
    assert_params_close(w, t)


def test_adamw_default_weight_decay_matches_torch():
    w, t, w_opt, t_opt = run_pair(lambda ps: woptim.AdamW(ps), lambda ps: torch.optim.AdamW(ps))
    assert w_opt.param_groups[0]["weight_decay"] == t_opt.param_groups[0]["weight_decay"] == 1e-2
    assert_params_close(w, t)


def test_param_groups_with_own_learning_rates():
    def groups(params):
        return [{"params": params[:1], "lr": 0.5}, {"params": params[1:]}]

    w, t, w_opt, _ = run_pair(
        lambda ps: woptim.SGD(groups(ps), lr=0.01, momentum=0.5),
        lambda ps: torch.optim.SGD(groups(ps), lr=0.01, momentum=0.5),
    )
    assert [g["lr"] for g in w_opt.param_groups] == [0.5, 0.01]
    assert_params_close(w, t)


def test_parameters_without_grad_are_skipped():
    param = wnn.Parameter(whylab.tensor(np.array([1.0, 2.0])))
    optimizer = woptim.Adam([param], lr=0.1)
    optimizer.step()
    np.testing.assert_array_equal(param.detach().numpy(), [1.0, 2.0])
    assert len(optimizer.state) == 0


def test_training_a_model_end_to_end_matches_torch():
    """Gradients from a real backward pass, not set by hand: the full loop agrees."""
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((16, 5)), rng.integers(0, 3, 16)
    w_model = wnn.Sequential(wnn.Linear(5, 7), wnn.Tanh(), wnn.Linear(7, 3)).double()
    t_model = torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)
    ).double()
    t_model.load_state_dict({k: torch.tensor(v.numpy()) for k, v in w_model.state_dict().items()})
    w_opt = woptim.AdamW(w_model.parameters(), lr=0.01, amsgrad=True)
    t_opt = torch.optim.AdamW(t_model.parameters(), lr=0.01, amsgrad=True)
    for _ in range(10):
        w_opt.zero_grad()
        t_opt.zero_grad()
        w_loss = wnn.functional.cross_entropy(w_model(whylab.tensor(x)), whylab.tensor(y))
        t_loss = torch.nn.functional.cross_entropy(t_model(torch.tensor(x)), torch.tensor(y))
        w_loss.backward()
        t_loss.backward()
        w_opt.step()
        t_opt.step()
        assert abs(w_loss.item() - t_loss.item()) < 1e-12
    assert_params_close(list(w_model.parameters()), list(t_model.parameters()))


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    param = wnn.Parameter(whylab.tensor(np.array([1.0, -2.0])))
    param.grad = whylab.tensor(np.array([0.5, 0.5]))
    grad_before = param.grad
    woptim.SGD([param], lr=0.1).zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert param.grad is None
    else:
        assert param.grad is grad_before
        np.testing.assert_array_equal(param.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_state_dict_round_trip_continues_identically(name):
    """Save state after 5 steps, load into a fresh optimizer over copied params, and
    continue: the result equals an uninterrupted run (and torch's)."""
    options = {"lr": 0.05, "momentum": 0.9} if name == "SGD" else {"lr": 0.05, "amsgrad": True}
    w_params, t_params, w_opt, t_opt = run_pair(
        lambda ps: getattr(woptim, name)(ps, **options),
        lambda ps: getattr(torch.optim, name)(ps, **options),
        steps=5,
    )
    saved = w_opt.state_dict()
    assert sorted(saved["state"]) == [0, 1, 2]
    assert saved["param_groups"][0]["params"] == [0, 1, 2]

    fresh = [wnn.Parameter(p.detach().clone()) for p in w_params]
    resumed = getattr(woptim, name)(fresh, lr=1.0)
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == 0.05
    assert resumed.param_groups[0]["params"][0] is fresh[0]

    for step in range(5, 10):
        for wp, fp, tp in zip(w_params, fresh, t_params, strict=True):
            wp.grad = whylab.tensor(numpy_gradient(wp.detach().numpy(), step))
            fp.grad = whylab.tensor(numpy_gradient(fp.detach().numpy(), step))
            tp.grad = torch.tensor(numpy_gradient(tp.detach().numpy(), step))
        w_opt.step()
        resumed.step()
        t_opt.step()
    assert_params_close(fresh, w_params, atol=0)
    assert_params_close(fresh, t_params)


def test_load_state_dict_rejects_mismatched_groups():
    params = [wnn.Parameter(whylab.zeros(2)), wnn.Parameter(whylab.zeros(3))]
    saved = woptim.SGD(params, lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size"):
        woptim.SGD(params[:1], lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        woptim.SGD([{"params": params[:1]}, {"params": params[1:]}], lr=0.1).load_state_dict(saved)


def test_bad_arguments_are_rejected_with_the_bound():
    param = wnn.Parameter(whylab.zeros(2))
    with pytest.raises(ValueError, match="learning rate: -1"):
        woptim.SGD([param], lr=-1)
    with pytest.raises(ValueError, match="momentum value"):
        woptim.SGD([param], momentum=-0.1)
    with pytest.raises(ValueError, match="Nesterov"):
        woptim.SGD([param], nesterov=True)
    with pytest.raises(ValueError, match=r"beta parameter at index 1: 1.0 \(must be in \[0, 1\)\)"):
        woptim.Adam([param], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="empty parameter list"):
        woptim.Adam([])
    with pytest.raises(TypeError, match="iterable of Tensors"):
        woptim.Adam(param)
    with pytest.raises(ValueError, match="more than one parameter group"):
        woptim.SGD([{"params": [param]}, {"params": [param]}], lr=0.1)
