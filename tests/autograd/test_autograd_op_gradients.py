"""Gradients of every differentiable op, compared with PyTorch (float64).

Each case runs the same function under ``whylab`` and ``torch`` on the same
random data, with three input layouts (contiguous, transposed view, strided
view), back-propagates the same random ``grad_output`` and compares the leaf
gradients. A second test runs whylab's own ``gradcheck`` on every case, and a
third compares second derivatives with PyTorch for the ops the nn layer needs.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from autograd_helpers import LAYOUTS, Pair, assert_close, first, sample
from hypothesis import given, settings
from hypothesis import strategies as st

import whylab
from whylab.autograd import gradcheck, gradgradcheck


@dataclass
class Case:
    name: str
    fn: object
    shapes: tuple
    kinds: tuple = ()
    layouts: tuple = LAYOUTS
    check_numerically: bool = True

    def kind(self, i):
        return self.kinds[i] if i < len(self.kinds) else "normal"


def _setitem_slice(m, a, b):
    y = a * 1
    y[:, 1] = b
    return y


def _setitem_advanced(m, a, b):
    y = a.clone()
    y[[0, 2]] = b
    return y


def _inplace_chain(m, a, b):
    y = a * 1
    y.add_(b).mul_(b).sub_(0.5)
    return y


def _view_then_inplace(m, a):
    y = a.clone()
    y[0] = 0.0
    y[:, 1].mul_(2)
    y[1:, 2:].zero_()
    return y * y


def _fill_view(m, a):
    y = a * 2
    y[1].fill_(3.0)
    return y


def _copy_broadcast(m, a, b):
    y = a * 1
    y.copy_(b)
    return y * a


def _two_pieces(m, a):
    left, right = a.split([1, 3], 1)
    return m.cat([right, left * 2], 1)


def _unbind_mix(m, a):
    parts = a.unbind(1)
    return parts[2] * 2 + parts[0] * parts[1]


def _index_tensor(m, rows):
    return m.tensor(rows)


CASES = [
    # arithmetic with broadcasting and Python numbers
    Case("add_broadcast", lambda m, a, b: a + b, ((3, 4), (4,))),
    Case("add_broadcast_both", lambda m, a, b: a + b, ((2, 1, 4), (3, 1))),
    Case("add_alpha", lambda m, a, b: m.add(a, b, alpha=2.5), ((3, 4), (3, 4))),
    Case("add_scalar", lambda m, a: a + 2.0, ((3, 4),)),
    Case("sub_broadcast", lambda m, a, b: a - b, ((3, 4), (1, 4))),
    Case("sub_alpha", lambda m, a, b: m.sub(a, b, alpha=0.5), ((3, 4), (4,))),
    Case("rsub_scalar", lambda m, a: 2.0 - a, ((3, 4),)),
    Case("mul_broadcast", lambda m, a, b: a * b, ((3, 4), (4,))),
    Case("mul_scalar", lambda m, a: a * 3.0, ((3, 4),)),
    Case("div_broadcast", lambda m, a, b: a / b, ((3, 4), (4,)), ("normal", "positive")),
    Case("div_scalar_numerator", lambda m, a: 2.0 / a, ((3, 4),), ("positive",)),
    Case(
        "remainder",
        lambda m, a, b: m.remainder(a, b),
        ((3, 4), (4,)),
        ("normal", "positive"),
        check_numerically=False,
    ),
    Case("neg", lambda m, a: -a, ((3, 4),)),
    Case("abs", lambda m, a: a.abs(), ((3, 4),), ("distinct",)),
    Case("sign", lambda m, a: a.sign() * a, ((3, 4),), ("distinct",)),
    Case("pow_int", lambda m, a: a.pow(3), ((3, 4),)),
    Case("pow_float", lambda m, a: a.pow(2.5), ((3, 4),), ("positive",)),
    Case("pow_zero", lambda m, a: a.pow(0) * a, ((3, 4),)),
    Case("pow_tensor", lambda m, a, b: a.pow(b), ((3, 4), (4,)), ("positive", "normal")),
    Case("pow_scalar_base", lambda m, a: 2.0**a, ((3, 4),)),
    Case("maximum", lambda m, a, b: m.maximum(a, b), ((3, 4), (4,))),
    Case("minimum", lambda m, a, b: m.minimum(a, b), ((3, 4), (3, 1))),
    Case("maximum_ties", lambda m, a: m.maximum(a, a * 1), ((3, 4),)),
    Case("clamp_scalars", lambda m, a: a.clamp(-0.5, 0.5), ((3, 4),)),
    Case("clamp_min_only", lambda m, a: a.clamp(min=0.1), ((3, 4),)),
    Case("clamp_tensors", lambda m, a, lo, hi: m.clamp(a, lo, hi), ((3, 4), (4,), (3, 1))),
    Case("where", lambda m, a, b: m.where(a > 0, a, b), ((3, 4), (4,))),
    # unary functions
    Case("exp", lambda m, a: a.exp(), ((3, 4),)),
    Case("expm1", lambda m, a: a.expm1(), ((3, 4),)),
    Case("log", lambda m, a: a.log(), ((3, 4),), ("positive",)),
    Case("log1p", lambda m, a: a.log1p(), ((3, 4),), ("positive",)),
    Case("log2", lambda m, a: a.log2(), ((3, 4),), ("positive",)),
    Case("sqrt", lambda m, a: a.sqrt(), ((3, 4),), ("positive",)),
    Case("rsqrt", lambda m, a: a.rsqrt(), ((3, 4),), ("positive",)),
    Case("reciprocal", lambda m, a: a.reciprocal(), ((3, 4),), ("positive",)),
    Case("sin", lambda m, a: a.sin(), ((3, 4),)),
    Case("cos", lambda m, a: a.cos(), ((3, 4),)),
    Case("tanh", lambda m, a: a.tanh(), ((3, 4),)),
    Case("sigmoid", lambda m, a: a.sigmoid(), ((3, 4),)),
    Case("relu", lambda m, a: a.relu(), ((3, 4),)),
    Case("erf", lambda m, a: a.erf(), ((3, 4),)),
    # reductions
    Case("sum_all", lambda m, a: a.sum(), ((3, 4),)),
    Case("sum_dim", lambda m, a: a.sum(1), ((3, 4),)),
    Case("sum_dims_keepdim", lambda m, a: a.sum((0, 2), keepdim=True), ((2, 3, 4),)),
    Case("mean_all", lambda m, a: a.mean(), ((3, 4),)),
    Case("mean_dim", lambda m, a: a.mean(-1), ((2, 3, 4),)),
    Case("mean_dims_keepdim", lambda m, a: a.mean((0, 1), keepdim=True), ((2, 3, 4),)),
    Case("prod_all", lambda m, a: a.prod(), ((2, 3),)),
    Case("prod_dim", lambda m, a: a.prod(1), ((3, 4),)),
    Case("amax", lambda m, a: a.amax(1), ((3, 4),), ("distinct",)),
    Case("amin_dims", lambda m, a: a.amin((0, 1)), ((2, 3, 4),), ("distinct",)),
    Case("max_all", lambda m, a: a.max(), ((3, 4),), ("distinct",)),
    Case("min_all", lambda m, a: a.min(), ((3, 4),), ("distinct",)),
    Case("max_dim", lambda m, a: a.max(1)[0], ((3, 4),), ("distinct",)),
    Case("min_dim_keepdim", lambda m, a: a.min(0, keepdim=True)[0], ((3, 4),), ("distinct",)),
    Case("logsumexp", lambda m, a: a.logsumexp(1), ((3, 4),)),
    Case("logsumexp_keepdim", lambda m, a: a.logsumexp((0, 1), keepdim=True), ((2, 3, 4),)),
    Case("var_dim", lambda m, a: a.var(1), ((3, 4),)),
    Case("var_all_correction0", lambda m, a: a.var(correction=0), ((3, 4),)),
    Case("std_dim_keepdim", lambda m, a: a.std(0, keepdim=True), ((3, 4),)),
    Case("std_all", lambda m, a: a.std(), ((3, 4),)),
    Case("softmax", lambda m, a: a.softmax(1), ((3, 4),)),
    Case("softmax_dim0", lambda m, a: a.softmax(0), ((3, 4),)),
    Case("log_softmax", lambda m, a: a.log_softmax(-1), ((3, 4),)),
    # linear algebra
    Case("mm", lambda m, a, b: a.mm(b), ((3, 4), (4, 2))),
    Case("bmm", lambda m, a, b: a.bmm(b), ((2, 3, 4), (2, 4, 2))),
    Case("mv", lambda m, a, b: a.mv(b), ((3, 4), (4,))),
    Case("dot", lambda m, a, b: a.dot(b), ((4,), (4,))),
    Case("outer", lambda m, a, b: m.outer(a, b), ((3,), (4,))),
    Case("matmul_2d_1d", lambda m, a, b: a @ b, ((3, 4), (4,))),
    Case("matmul_1d_2d", lambda m, a, b: a @ b, ((4,), (4, 3))),
    Case("matmul_batched", lambda m, a, b: a @ b, ((2, 3, 4), (4, 2))),
    Case("matmul_broadcast_batch", lambda m, a, b: a @ b, ((2, 1, 3, 4), (3, 4, 2))),
    Case("matmul_1d_batched", lambda m, a, b: a @ b, ((4,), (2, 4, 3))),
    # joining and indexing
    Case("cat", lambda m, a, b: m.cat([a, b], 1), ((3, 4), (3, 2))),
    Case("stack", lambda m, a, b: m.stack([a, b], 1), ((3, 4), (3, 4))),
    Case("gather", lambda m, a: a.gather(1, _index_tensor(m, [[0, 0], [3, 1], [2, 2]])), ((3, 4),)),
    Case(
        "scatter_add",
        lambda m, a, b: a.scatter_add(1, _index_tensor(m, [[0, 0], [3, 1], [2, 2]]), b),
        ((3, 4), (3, 2)),
    ),
    Case(
        "scatter",
        lambda m, a, b: a.scatter(1, _index_tensor(m, [[0, 1], [3, 1], [2, 0]]), b),
        ((3, 4), (3, 2)),
    ),
    Case("index_select", lambda m, a: a.index_select(0, _index_tensor(m, [2, 0, 2])), ((3, 4),)),
    Case("masked_fill", lambda m, a: a.masked_fill(a > 0, 0.5), ((3, 4),)),
    Case("masked_select", lambda m, a: a.masked_select(a > 0), ((3, 4),)),
    Case("tril", lambda m, a: a.tril(1), ((3, 4),)),
    Case("triu", lambda m, a: a.triu(-1), ((3, 4),)),
    Case("getitem_int", lambda m, a: a[1], ((3, 4),)),
    Case("getitem_slice", lambda m, a: a[:, 1:3], ((3, 4),)),
    Case("getitem_step", lambda m, a: a[::2, 1::2], ((3, 4),)),
    Case("getitem_ellipsis_none", lambda m, a: a[None, ..., 1], ((2, 3, 4),)),
    Case("getitem_advanced_repeat", lambda m, a: a[[0, 2, 0]], ((3, 4),)),
    Case("getitem_mixed", lambda m, a: a[1:, [0, 3, 3]], ((3, 4),)),
    Case("getitem_bool_mask", lambda m, a: a[a > 0], ((3, 4),)),
    # views
    Case("expand", lambda m, a: a.expand(3, 4), ((1, 4),)),
    Case("expand_new_dims", lambda m, a: a.expand(2, 3, 4), ((4,),)),
    Case("reshape", lambda m, a: a.reshape(6, 2), ((3, 4),)),
    Case("view", lambda m, a: a.view(2, 6), ((3, 4),), layouts=("contiguous",)),
    Case("flatten", lambda m, a: a.flatten(), ((2, 3, 4),)),
    Case("unflatten", lambda m, a: a.unflatten(1, (2, 2)), ((3, 4),)),
    Case("permute", lambda m, a: a.permute(2, 0, 1), ((2, 3, 4),)),
    Case("movedim", lambda m, a: a.movedim(0, 2), ((2, 3, 4),)),
    Case("transpose", lambda m, a: a.transpose(0, 1), ((3, 4),)),
    Case("t", lambda m, a: a.t(), ((3, 4),)),
    Case("mT", lambda m, a: a.mT, ((2, 3, 4),)),
    Case("squeeze_all", lambda m, a: a.squeeze(), ((1, 3, 1, 4),)),
    Case("squeeze_dim", lambda m, a: a.squeeze(2), ((3, 4, 1),)),
    Case("unsqueeze", lambda m, a: a.unsqueeze(1), ((3, 4),)),
    Case("narrow", lambda m, a: a.narrow(1, 1, 2), ((3, 4),)),
    Case("select", lambda m, a: a.select(0, 2), ((3, 4),)),
    Case("diagonal", lambda m, a: a.diagonal(), ((3, 4),)),
    Case("diagonal_offset", lambda m, a: a.diagonal(1, 1, 0), ((3, 4),)),
    Case("diagonal_3d", lambda m, a: a.diagonal(0, 1, 2), ((2, 3, 3),)),
    Case("unfold", lambda m, a: a.unfold(1, 2, 1), ((3, 5),)),
    Case("unfold_step", lambda m, a: a.unfold(0, 2, 2), ((5, 3),)),
    Case(
        "as_strided",
        lambda m, a: a.as_strided((2, 3), (1, 2), 1),
        ((3, 4),),
        layouts=("contiguous",),
    ),
    Case(
        "as_strided_overlap",
        lambda m, a: a.as_strided((3, 3), (1, 1)),
        ((3, 4),),
        layouts=("contiguous",),
    ),
    Case("split_pieces", _two_pieces, ((3, 4),)),
    Case("chunk", lambda m, a: a.chunk(2, 0)[0] * 2, ((4, 3),)),
    Case("unbind", _unbind_mix, ((3, 4),)),
    # copies and conversions
    Case("clone", lambda m, a: a.clone(), ((3, 4),)),
    Case("contiguous", lambda m, a: a.contiguous() * 2, ((3, 4),)),
    Case(
        "to_float32_and_back",
        lambda m, a: a.to(m.float32).to(m.float64) * 2,
        ((3, 4),),
        check_numerically=False,
    ),  # a float32 round trip is not smooth at eps=1e-6
    Case("detach_blocks", lambda m, a: a * a.detach(), ((3, 4),), check_numerically=False),
    # in-place ops and writes through views
    Case("inplace_chain", _inplace_chain, ((3, 4), (4,))),
    Case(
        "inplace_div_pow",
        lambda m, a, b: (a * 1).div_(b).pow_(2),
        ((3, 4), (4,)),
        ("normal", "positive"),
    ),
    Case("inplace_clamp", lambda m, a: (a * 1).clamp_(-0.5, 0.5), ((3, 4),)),
    Case("inplace_masked_fill", lambda m, a: (a * 1).masked_fill_(a > 0, 1.0), ((3, 4),)),
    Case(
        "inplace_scatter_add",
        lambda m, a, b: (a * 1).scatter_add_(1, _index_tensor(m, [[0, 0], [3, 1], [2, 2]]), b),
        ((3, 4), (3, 2)),
    ),
    Case("setitem_slice", _setitem_slice, ((3, 4), (3,))),
    Case("setitem_advanced", _setitem_advanced, ((3, 4), (2, 4))),
    Case("view_then_inplace", _view_then_inplace, ((3, 4),)),
    Case("fill_view", _fill_view, ((3, 4),)),
    Case("copy_broadcast", _copy_broadcast, ((3, 4), (4,))),
]


def _run(case, module, pairs):
    inputs = [pair.w if module is whylab else pair.t for pair in pairs]
    return first(case.fn(module, *inputs))


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


@pytest.mark.parametrize(
    ("case", "layout"),
    [(case, layout) for case in CASES for layout in case.layouts],
    ids=lambda value: value.name if isinstance(value, Case) else value,
)
def test_gradient_matches_torch(case, layout):
    rng = np.random.default_rng(_seed(case.name, layout))
    pairs = [Pair(sample(rng, shape, case.kind(i)), layout) for i, shape in enumerate(case.shapes)]
    w_out = _run(case, whylab, pairs)
    t_out = _run(case, torch, pairs)
    assert_close(w_out.detach().numpy(), t_out.detach().numpy(), what=f"{case.name} forward")
    grad_output = rng.standard_normal(tuple(t_out.shape))
    w_out.backward(whylab.tensor(grad_output, dtype=w_out.dtype))
    t_out.backward(torch.tensor(grad_output, dtype=t_out.dtype))
    for index, pair in enumerate(pairs):
        expected = pair.t_leaf.grad
        actual = pair.w_leaf.grad
        if expected is None:
            assert actual is None or not actual.numpy().any(), f"{case.name}: input {index}"
            continue
        assert actual is not None, f"{case.name}: input {index} got no gradient"
        assert actual.shape == pair.w_leaf.shape
        assert_close(
            actual.numpy(),
            expected.numpy(),
            atol=1e-6 if "float32" in case.name else 1e-10,
            what=f"{case.name} grad of input {index}",
        )


@pytest.mark.parametrize("case", [c for c in CASES if c.check_numerically], ids=lambda c: c.name)
def test_gradcheck_passes(case):
    rng = np.random.default_rng(_seed(case.name))
    leaves = [
        whylab.tensor(sample(rng, shape, case.kind(i)), dtype=whylab.float64, requires_grad=True)
        for i, shape in enumerate(case.shapes)
    ]
    assert gradcheck(lambda *xs: first(case.fn(whylab, *xs)), leaves)


SECOND_ORDER = [
    Case("matmul", lambda m, a, b: a @ b, ((3, 4), (4, 2))),
    Case("matmul_batched", lambda m, a, b: a @ b, ((2, 3, 4), (4,))),
    Case("tanh", lambda m, a: a.tanh(), ((3, 4),)),
    Case("softmax", lambda m, a: a.softmax(1), ((3, 4),)),
    Case("log_softmax", lambda m, a: a.log_softmax(1), ((3, 4),)),
    Case("mul", lambda m, a, b: a * b, ((3, 4), (4,))),
    Case("div", lambda m, a, b: a / b, ((3, 4), (4,)), ("normal", "positive")),
    Case("pow_scalar", lambda m, a: a.pow(3), ((3, 4),)),
    Case("pow_tensor", lambda m, a, b: a.pow(b), ((3, 4), (4,)), ("positive", "normal")),
    Case("exp", lambda m, a: a.exp(), ((3, 4),)),
    Case("sigmoid", lambda m, a: a.sigmoid(), ((3, 4),)),
    Case("log", lambda m, a: a.log(), ((3, 4),), ("positive",)),
    Case("sqrt", lambda m, a: a.sqrt(), ((3, 4),), ("positive",)),
    Case("relu_mul", lambda m, a, b: a.relu() * b, ((3, 4), (3, 4))),
    Case("logsumexp", lambda m, a: a.logsumexp(1), ((3, 4),)),
    Case("mean_var", lambda m, a: a.var(0) + a.mean(), ((3, 4),)),
    Case(
        "gather_cross_entropy",
        lambda m, a: -a.log_softmax(1).gather(1, _index_tensor(m, [[1], [0], [3]])).mean(),
        ((3, 4),),
    ),
    Case("getitem_cat", lambda m, a: m.cat([a[:, :2] * a[:, 2:], a[1:, 1:3]], 0), ((3, 4),)),
]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=lambda c: c.name)
def test_second_order_matches_torch(case):
    rng = np.random.default_rng(_seed("second", case.name))
    pairs = [Pair(sample(rng, shape, case.kind(i))) for i, shape in enumerate(case.shapes)]
    results = {}
    for module in (whylab, torch):
        leaves = [p.w_leaf if module is whylab else p.t_leaf for p in pairs]
        out = case.fn(module, *leaves)
        seed = module.tensor(
            np.linspace(-1.0, 1.0, int(np.prod(tuple(out.shape)))).reshape(tuple(out.shape)),
            dtype=module.float64,
        )
        grads = module.autograd.grad(out, leaves, grad_outputs=seed, create_graph=True)
        directions = [
            module.tensor(
                np.cos(np.arange(np.prod(p.data.shape))).reshape(p.data.shape), dtype=module.float64
            )
            for p in pairs
        ]
        total = sum((g * d).sum() for g, d in zip(grads, directions, strict=True))
        second = module.autograd.grad(total, leaves, allow_unused=True)
        results[module.__name__] = [
            np.zeros(p.data.shape) if s is None else s.detach().numpy()
            for s, p in zip(second, pairs, strict=True)
        ]
    for index, (w, t) in enumerate(zip(results["whylab"], results["torch"], strict=True)):
        assert_close(w, t, what=f"{case.name} second derivative, input {index}")


@pytest.mark.parametrize("case", SECOND_ORDER[:10], ids=lambda c: c.name)
def test_gradgradcheck_passes(case):
    rng = np.random.default_rng(_seed("gg", case.name))
    leaves = [
        whylab.tensor(sample(rng, shape, case.kind(i)), dtype=whylab.float64, requires_grad=True)
        for i, shape in enumerate(case.shapes)
    ]
    assert gradgradcheck(lambda *xs: case.fn(whylab, *xs), leaves)


def test_prod_with_zeros_matches_torch():
    data = np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [2.0, -1.0, 4.0]])
    for dim in (None, 0, 1):
        w = whylab.tensor(data, dtype=whylab.float64, requires_grad=True)
        t = torch.tensor(data, requires_grad=True)
        (w.prod() if dim is None else w.prod(dim)).sum().backward()
        (t.prod() if dim is None else t.prod(dim)).sum().backward()
        assert_close(w.grad.numpy(), t.grad.numpy(), what=f"prod dim={dim}")


def test_max_ties_share_gradient_like_torch():
    data = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    for reduce in (lambda x: x.max(), lambda x: x.amax(1), lambda x: x.amin(0)):
        w = whylab.tensor(data, dtype=whylab.float64, requires_grad=True)
        t = torch.tensor(data, requires_grad=True)
        reduce(w).sum().backward()
        reduce(t).sum().backward()
        assert_close(w.grad.numpy(), t.grad.numpy())


BINARY_OPS = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / (b.abs() + 0.5),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "where": lambda m, a, b: m.where(a > b, a * b, b),
    "pow": lambda m, a, b: (a.abs() + 0.5).pow(b),
    "atan_like": lambda m, a, b: (a * b).tanh() + a.sigmoid() * b.exp(),
}


@st.composite
def _broadcast_pair(draw):
    ndim = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    other = list(shape[draw(st.integers(0, ndim - 1)) :])
    other = [1 if draw(st.booleans()) else size for size in other]
    if draw(st.booleans()):
        shape, other = other, shape
    return tuple(shape), tuple(other)


@settings(max_examples=40, deadline=None)
@given(
    shapes=_broadcast_pair(),
    op=st.sampled_from(sorted(BINARY_OPS)),
    layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
    seed=st.integers(0, 2**16),
)
def test_broadcast_gradients_match_torch_for_random_shapes(shapes, op, layouts, seed):
    rng = np.random.default_rng(seed)
    pairs = [
        Pair(sample(rng, shape), layout) for shape, layout in zip(shapes, layouts, strict=True)
    ]
    outputs = []
    for module in (whylab, torch):
        inputs = [p.w if module is whylab else p.t for p in pairs]
        outputs.append(BINARY_OPS[op](module, *inputs))
    grad_output = rng.standard_normal(tuple(outputs[1].shape))
    outputs[0].backward(whylab.tensor(grad_output, dtype=whylab.float64))
    outputs[1].backward(torch.tensor(grad_output))
    for index, pair in enumerate(pairs):
        assert pair.w_leaf.grad.shape == pair.w_leaf.shape
        assert_close(
            pair.w_leaf.grad.numpy(),
            pair.t_leaf.grad.numpy(),
            what=f"{op} {shapes} {layouts} input {index}",
        )
