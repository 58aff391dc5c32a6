"""The parts of torch's surface that programs touch first: packages, dtypes, Size, out=,
NumPy keyword names, legacy helpers, device questions, norms, module hooks and containers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import whylab
import whylab.nn as nn

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]


def test_import_whylab_gives_the_subpackages_torch_gives():
    for name in ("nn", "optim", "autograd", "utils", "cuda", "backends", "linalg"):
        assert hasattr(whylab, name), name
    assert whylab.utils.data.DataLoader and whylab.optim.lr_scheduler.StepLR
    assert whylab.nn.functional.one_hot is whylab.one_hot


@pytest.mark.parametrize("a, b", list(itertools.product(DTYPES, DTYPES)))
def test_promotion_of_every_dtype_pair_matches_torch(a, b):
    ours = whylab.promote_types(getattr(whylab, a), getattr(whylab, b))
    assert ours.name == str(torch.promote_types(getattr(torch, a), getattr(torch, b)))[6:]


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "float16", "bfloat16"])
def test_small_dtypes_compute_like_torch(name):
    values = [1, 2, 3, 100]
    ours, theirs = (
        whylab.tensor(values, dtype=getattr(whylab, name)),
        torch.tensor(values, dtype=getattr(torch, name)),
    )
    assert ours.element_size() == theirs.element_size()
    for fn in (lambda t: t + t, lambda t: t * 2, lambda t: t.sum(), lambda t: t / 4, lambda t: -t):
        if name == "uint8" and fn(theirs).dtype == torch.uint8 and (fn(theirs) < 0).any():
            continue
        mine, reference = fn(ours), fn(theirs)
        assert mine.dtype.name == str(reference.dtype)[6:]
        np.testing.assert_allclose(
            mine.to(whylab.float64).numpy(), reference.to(torch.float64).numpy(), rtol=1e-2
        )
    assert getattr(
        ours,
        {
            "uint8": "byte",
            "int8": "char",
            "int16": "short",
            "float16": "half",
            "bfloat16": "bfloat16",
        }[name],
    )().dtype is getattr(whylab, name)


def test_size_prints_and_behaves_like_torch_size():
    shape = whylab.ones(2, 3, 4).shape
    assert isinstance(shape, whylab.Size) and isinstance(shape, tuple) and shape == (2, 3, 4)
    assert repr(shape) == "whylab.Size([2, 3, 4])" and shape.numel() == 24
    assert isinstance(shape[1:], whylab.Size) and shape[0] == 2
    assert whylab.ones(2).size() == whylab.Size([2])


def test_out_argument_writes_into_the_given_tensor():
    out = whylab.empty(3)
    result = whylab.add(whylab.ones(3), 2, out=out)
    assert result is out and out.tolist() == [3.0, 3.0, 3.0]
    assert whylab.zeros(2, 2, out=whylab.empty(2, 2)).sum().item() == 0
    with pytest.raises(RuntimeError, match="does not resize"):
        whylab.add(whylab.ones(3), 1, out=whylab.empty(2))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        whylab.add(whylab.ones(3), 0.5, out=whylab.empty(3, dtype=whylab.int64))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        whylab.mul(whylab.ones(2, requires_grad=True), 2, out=whylab.empty(2))


def test_numpy_keyword_names_for_reductions():
    x = whylab.arange(6.0).view(2, 3)
    assert x.sum(axis=1, keepdims=True).tolist() == [[3.0], [12.0]]
    assert whylab.mean(x, axis=0).tolist() == [1.5, 2.5, 3.5]
    with pytest.raises(TypeError, match="both dim= and axis="):
        x.sum(dim=0, axis=1)


def test_all_any_and_finite_checks_match_torch():
    data = [[0.0, 1.0, math.inf], [math.nan, -2.0, 3.0]]
    ours, theirs = whylab.tensor(data), torch.tensor(data)
    for fn in (
        lambda t: t.all(),
        lambda t: t.any(),
        lambda t: t.all(dim=1),
        lambda t: t.any(0),
        lambda t: t.isnan(),
        lambda t: t.isinf(),
        lambda t: t.isfinite(),
    ):
        assert fn(ours).tolist() == fn(theirs).tolist()
    assert whylab.isfinite(whylab.tensor([1, 2])).tolist() == [True, True]


def test_in_place_unary_and_in_place_views():
    x, tx = whylab.tensor([0.5, 1.0]), torch.tensor([0.5, 1.0])
    x.sin_().exp_().log1p_()
    tx.sin_().exp_().log1p_()
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6)
    y = whylab.ones(3)
    assert y.unsqueeze_(0).shape == (1, 3) and y.t_().shape == (3, 1)
    with pytest.raises(RuntimeError, match="unsqueeze_: changing the shape"):
        whylab.ones(2, requires_grad=True).unsqueeze_(0)
    a = whylab.ones(2, requires_grad=True)
    b = a * 3
    b.exp_()
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 3 * np.exp(3.0) * np.ones(2), rtol=1e-6)


def test_device_questions_get_torchs_answers_without_a_gpu():
    assert whylab.cuda.is_available() is False and whylab.cuda.device_count() == 0
    assert whylab.backends.mps.is_available() is False
    for attempt in (
        lambda: whylab.ones(1).cuda(),
        lambda: nn.Linear(1, 1).cuda(),
        lambda: whylab.cuda.current_device(),
        lambda: whylab.set_default_device("cuda"),
    ):
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            attempt()
    whylab.set_default_device("cpu")
    assert nn.Linear(2, 2).to("cpu", whylab.float64).weight.dtype is whylab.float64


def test_variable_returns_a_leaf_tensor():
    x = whylab.autograd.Variable(whylab.ones(2), requires_grad=True)
    assert isinstance(x, whylab.Tensor) and x.is_leaf and x.requires_grad
    assert isinstance(whylab.ones(1), whylab.autograd.Variable)


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (lambda w, x: w.norm(x), lambda t, x: t.norm(x)),
        (lambda w, x: w.norm(x, p=1, dim=1), lambda t, x: t.norm(x, p=1, dim=1)),
        (lambda w, x: x.norm(dim=0, keepdim=True), lambda t, x: x.norm(dim=0, keepdim=True)),
        (lambda w, x: w.linalg.norm(x), lambda t, x: t.linalg.norm(x)),
        (
            lambda w, x: w.linalg.vector_norm(x, ord=3.5, dim=1),
            lambda t, x: t.linalg.vector_norm(x, ord=3.5, dim=1),
        ),
        (
            lambda w, x: w.linalg.vector_norm(x, ord=-math.inf),
            lambda t, x: t.linalg.vector_norm(x, ord=-math.inf),
        ),
        (lambda w, x: w.linalg.matrix_norm(x, ord=1), lambda t, x: t.linalg.matrix_norm(x, ord=1)),
        (
            lambda w, x: w.linalg.matrix_norm(x, ord=-math.inf),
            lambda t, x: t.linalg.matrix_norm(x, ord=-math.inf),
        ),
    ],
)
def test_norms_and_their_gradients_match_torch(ours, theirs):
    data = np.random.default_rng(0).standard_normal((3, 4))
    x, tx = whylab.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    result, expected = ours(whylab, x), theirs(torch, tx)
    np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    result.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    with whylab.no_grad():
        nuclear = whylab.linalg.matrix_norm(whylab.tensor(data), "nuc").item()
    assert nuclear == pytest.approx(torch.linalg.matrix_norm(torch.tensor(data), "nuc").item())


def test_module_hooks_run_in_torchs_order_and_can_be_removed():
    calls = {}
    for framework in (whylab, torch):
        seen = []
        layer = framework.nn.Linear(2, 2).double()
        handles = [
            layer.register_forward_pre_hook(lambda m, args, seen=seen: seen.append("pre")),
            layer.register_forward_hook(lambda m, args, out, seen=seen: seen.append("forward")),
            layer.register_full_backward_hook(
                lambda m, gi, go, seen=seen: seen.append(("backward", tuple(go[0].shape)))
            ),
        ]
        layer(framework.ones(3, 2, dtype=framework.float64, requires_grad=True)).sum().backward()
        for handle in handles:
            handle.remove()
        layer(framework.ones(1, 2, dtype=framework.float64)).sum().backward()
        calls[framework.__name__] = seen
    assert calls["whylab"] == calls["torch"] == ["pre", "forward", ("backward", (3, 2))]


def test_backward_hook_can_replace_the_input_gradient():
    layer = nn.Linear(2, 1)
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0,))
    x = whylab.ones(1, 2, requires_grad=True)
    layer(x).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0]]


def test_containers_and_lazy_linear_register_what_they_hold():
    blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    blocks.append(nn.ReLU())
    heads = nn.ModuleDict({"a": nn.Linear(2, 1)})
    heads["b"] = nn.Linear(2, 3)
    params = nn.ParameterList([whylab.ones(2)])
    holder = nn.Sequential(blocks[0], heads["b"])
    assert (
        len(blocks) == 4 and len(list(blocks.parameters())) == 6 and isinstance(blocks[3], nn.ReLU)
    )
    assert list(heads.keys()) == ["a", "b"] and len(list(heads.parameters())) == 4
    assert len(list(params.parameters())) == 1 and len(list(holder.parameters())) == 4
    lazy = nn.LazyLinear(4)
    assert list(lazy.parameters()) == []
    assert lazy(whylab.ones(5, 3)).shape == (5, 4) and lazy.weight.shape == (4, 3)
    bound = 1 / math.sqrt(3)
    assert bool((lazy.weight.abs() <= bound).all())
