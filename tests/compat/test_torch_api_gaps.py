"""The pieces of torch's API tutorials stopped on (issue 25), each compared with torch 2.13.

Formatting a 0-d tensor, NumPy's ``axis=``, factory keywords of the random
factories, the rounding family, lazy modules becoming their ``cls_to_become``,
saving a whole module, and the error an unsupported name gives.
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import torch

import whylab
import whylab.nn.functional as F


def _both(values, dtype="float64", requires_grad=False):
    array = np.asarray(values, dtype=dtype)
    ours = whylab.tensor(array, requires_grad=requires_grad)
    theirs = torch.tensor(array, requires_grad=requires_grad)
    return ours, theirs


def _same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)


# -- 1. format specs on a 0-d tensor ---------------------------------------------------

@pytest.mark.parametrize("spec", ["", ".4f", "+.2f", "e", "10.3g", ">12"])
def test_a_0d_tensor_formats_as_its_python_number(spec):
    ours, theirs = _both(-1.234567)
    assert format(ours, spec) == format(theirs, spec)
    assert f"{ours:{spec}}" == f"{theirs:{spec}}"


@pytest.mark.parametrize("spec", ["", "d", "+d", ">5", "x"])
def test_a_0d_integer_tensor_formats_as_its_int(spec):
    ours, theirs = _both(-7, dtype="int64")
    assert format(ours, spec) == format(theirs, spec)


def test_other_tensors_refuse_a_format_spec_as_torch_does():
    ours, theirs = _both([1.0, 2.0])
    for tensor in (ours, theirs):
        with pytest.raises(TypeError, match="unsupported format string"):
            format(tensor, ".2f")
    # a 0-d Parameter is not formatted as a number in torch either
    with pytest.raises(TypeError):
        format(torch.nn.Parameter(torch.tensor(1.0)), ".2f")
    with pytest.raises(TypeError):
        format(whylab.nn.Parameter(whylab.tensor(1.0)), ".2f")


# -- 2. axis= where torch's parser takes it ----------------------------------------------

AXIS_CALLS = [
    ("cumsum", lambda t: t.cumsum(axis=1)),
    ("cumsum fn", lambda t: (torch if isinstance(t, torch.Tensor) else whylab).cumsum(t, axis=0)),
    ("softmax", lambda t: t.softmax(axis=0)),
    ("log_softmax", lambda t: t.log_softmax(axis=1)),
    ("logsumexp", lambda t: t.logsumexp(axis=1)),
    ("sum", lambda t: t.sum(axis=0, keepdims=True)),
    ("unsqueeze", lambda t: t.unsqueeze(axis=1)),
    ("chunk", lambda t: t.chunk(3, axis=1)[1]),
    ("unbind", lambda t: t.unbind(axis=1)[2]),
    ("sort", lambda t: t.sort(axis=0).values),
    ("argsort", lambda t: t.argsort(axis=1, descending=True)),
    ("topk", lambda t: t.topk(1, axis=0).indices),
]


@pytest.mark.parametrize(("name", "call"), AXIS_CALLS, ids=[c[0] for c in AXIS_CALLS])
def test_axis_names_dim_as_in_torch(name, call):
    ours, theirs = _both(np.random.default_rng(3).standard_normal((2, 3)))
    _same(call(ours), call(theirs))


def test_stack_takes_axis_and_a_required_dim_is_still_required():
    a, ta = _both([[1.0, 2.0]])
    _same(whylab.stack([a, a], axis=1), torch.stack([ta, ta], axis=1))
    for tensor in (a, ta):
        with pytest.raises(TypeError, match="dim"):
            tensor.cumsum()
    with pytest.raises(TypeError, match="both dim= and axis="):
        a.cumsum(0, axis=1)


# -- 3. factory keywords on the random factories -----------------------------------------

def test_normal_with_numbers_takes_torch_factory_keywords():
    theirs = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
    ours = whylab.normal(0, 0.01, size=(2, 1), requires_grad=True)
    for t in (ours, theirs):
        assert tuple(t.shape) == (2, 1) and t.requires_grad and t.is_leaf
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == "float32"
    ours = whylab.normal(2.0, 3.0, (4000,), dtype=whylab.float64, device="cpu")
    assert ours.dtype == whylab.float64 and not ours.requires_grad
    assert abs(ours.mean().item() - 2.0) < 0.3 and abs(ours.std().item() - 3.0) < 0.3
    out = whylab.empty(3)
    assert whylab.normal(0.0, 1.0, (3,), out=out) is out


# -- 4. the rounding family, in-place and method forms, and their nodes ------------------

ROUNDING = [
    ("ceil", {}), ("floor", {}), ("trunc", {}), ("fix", {}), ("frac", {}), ("sign", {}),
    ("round", {}), ("round", {"decimals": 1}), ("round", {"decimals": -1}),
    ("clamp_min", {"min": 0.3}), ("clamp_max", {"max": 0.3}), ("clip", {"min": -1, "max": 1}),
]


@pytest.mark.parametrize(("name", "kwargs"), ROUNDING, ids=[f"{n}{k}" for n, k in ROUNDING])
def test_rounding_family_matches_torch_in_every_form(name, kwargs):
    values = [-2.5, -1.55, -0.5, 0.25, 0.5, 1.5, 2.5, 14.96]
    ours, theirs = _both(values, requires_grad=True)
    y_ours = getattr(whylab, name)(ours, **kwargs)
    y_theirs = getattr(torch, name)(theirs, **kwargs)
    _same(y_ours, y_theirs)
    assert type(y_ours.grad_fn).__name__ == type(y_theirs.grad_fn).__name__
    y_ours.sum().backward()
    y_theirs.sum().backward()
    _same(ours.grad, theirs.grad)
    _same(getattr(ours.detach(), name)(**kwargs), getattr(theirs.detach(), name)(**kwargs))
    a, b = ours.detach().clone(), theirs.detach().clone()
    assert getattr(a, f"{name}_")(**kwargs) is a
    getattr(b, f"{name}_")(**kwargs)
    _same(a, b)


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "sqrt", "sin", "abs", "relu",
                                  "ceil", "round", "clamp_min"])
def test_in_place_forms_record_the_node_torch_records(name):
    # before this issue the hand-written in-place forms recorded CopyBackwards
    args = {"clamp_min": (0.5,)}.get(name, ())
    ours, theirs = _both([0.3, 1.7, 2.2], requires_grad=True)
    a, b = ours * 1, theirs * 1
    getattr(a, f"{name}_")(*args)
    getattr(b, f"{name}_")(*args)
    assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__ != "CopyBackwards"
    (a * a).sum().backward()
    (b * b).sum().backward()
    _same(ours.grad, theirs.grad)


def test_integer_inputs_behave_as_in_torch():
    ours, theirs = _both([3, -4], dtype="int64")
    for name in ("ceil", "floor", "trunc", "round"):
        _same(getattr(ours, name)(), getattr(theirs, name)())
    for tensor in (ours, theirs):
        with pytest.raises(NotImplementedError):
            tensor.frac()
        with pytest.raises(RuntimeError, match="can't be cast"):
            tensor.clone().sqrt_()


# -- 5. lazy modules become their cls_to_become ------------------------------------------

@pytest.mark.parametrize(
    ("lazy", "becomes", "shape"),
    [("LazyLinear", "Linear", (2, 5)), ("LazyConv2d", "Conv2d", (2, 3, 6, 6)),
     ("LazyBatchNorm2d", "BatchNorm2d", (2, 3, 6, 6)), ("LazyBatchNorm1d", "BatchNorm1d", (4, 3))],
)
def test_a_lazy_module_becomes_its_full_class_after_one_call(lazy, becomes, shape):
    args = {"LazyLinear": (4,), "LazyConv2d": (4, 3)}.get(lazy, ())
    for lib in (torch, whylab):
        module = getattr(lib.nn, lazy)(*args)
        assert type(module) is getattr(lib.nn, lazy)
        module(lib.ones(shape))
        assert type(module) is getattr(lib.nn, becomes)


def test_a_lazy_module_keeps_its_hooks_mode_and_computes_like_the_full_module():
    module = whylab.nn.LazyConv2d(2, kernel_size=3, padding=1)
    module.eval()
    seen = []
    module.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    x = whylab.randn(1, 3, 4, 4)
    y = module(x)
    assert seen == [(1, 2, 4, 4)] and not module.training
    assert sorted(dict(module.named_parameters())) == ["bias", "weight"]
    _same(y, F.conv2d(x, module.weight, module.bias, padding=1))


# -- 6. saving a whole module: refused on load unless weights_only=False -----------------

def test_saving_a_module_loads_only_with_the_explicit_opt_in_like_torch():
    for lib in (torch, whylab):
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
        buffer = io.BytesIO()
        lib.save(model, buffer)
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="weights_only"):
            lib.load(buffer)
        buffer.seek(0)
        loaded = lib.load(buffer, weights_only=False)
        assert type(loaded) is type(model)
        x = lib.ones(1, 3)
        np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


def test_a_state_dict_still_loads_by_default_and_other_objects_stay_refused(tmp_path):
    model = whylab.nn.Linear(3, 2)
    whylab.save(model.state_dict(), tmp_path / "w.npz")
    state = whylab.load(tmp_path / "w.npz")
    np.testing.assert_array_equal(state["weight"].numpy(), model.weight.detach().numpy())
    with pytest.raises(TypeError, match="cannot store"):
        whylab.save(object(), tmp_path / "x.npz")


# -- unsupported names ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("get", "torch_name"),
    [(lambda: whylab.fft, "torch.fft"), (lambda: whylab.nn.Transformer, "torch.nn.Transformer"),
     (lambda: F.grid_sample, "torch.nn.functional.grid_sample"),
     (lambda: whylab.ones(2).lu, "torch.Tensor.lu")],
)
def test_an_unsupported_name_says_which_torch_api_is_not_supported_yet(get, torch_name):
    with pytest.raises(AttributeError, match=f"^{torch_name} is not supported yet by whylab"):
        get()
    assert getattr(whylab.ones(1), "no_such_attribute", 5) == 5


def test_accelerator_answers_as_torch_without_one():
    for lib in (torch, whylab):
        assert lib.accelerator.is_available() is False
        assert lib.accelerator.current_accelerator() is None
        assert lib.accelerator.device_count() == 0
        with pytest.raises(RuntimeError, match="none is available"):
            lib.accelerator.set_device_index(0)


def test_clip_grad_norm_scales_like_torch():
    results = []
    for lib in (torch, whylab):
        a = lib.nn.Parameter(lib.tensor([3.0, 4.0], dtype=lib.float64))
        b = lib.nn.Parameter(lib.tensor([[12.0]], dtype=lib.float64))
        ((a * a).sum() + (b * b * b).sum()).backward()
        norm = lib.nn.utils.clip_grad_norm_([a, b], 2.0)
        inf_norm = lib.nn.utils.clip_grad_norm_([a, b], 0.5, norm_type="inf")
        results.append([norm.item(), inf_norm.item(), *a.grad.tolist(), b.grad.item()])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_adadelta_steps_like_torch():
    trajectories = []
    for lib in (torch, whylab):
        p = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        optimizer = lib.optim.Adadelta([p], lr=0.5, rho=0.8, weight_decay=0.1)
        steps = []
        for _ in range(4):
            optimizer.zero_grad()
            ((p * p * p).sum() + p.sum()).backward()
            optimizer.step()
            steps.append(p.detach().numpy().copy())
        trajectories.append(np.array(steps))
    np.testing.assert_allclose(trajectories[1], trajectories[0], rtol=1e-12)
