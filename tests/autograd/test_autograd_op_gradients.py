"""Gradients of compositions, special points and in-place writes, compared with PyTorch
(float64); each operator's own gradient is tested by the OpInfo table in tests/ops.

Each case runs the same function under ``whylab`` and ``torch`` on the same
random data, with three input layouts (contiguous, transposed view, strided
view), back-propagates the same random ``grad_output`` and compares the leaf
gradients. A second test runs whylab's own ``gradcheck`` on every case, and a
third compares second derivatives of compositions with PyTorch.
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


# Each operator's own gradient against torch is in the OpInfo table (tests/ops); these
# cases are what it does not hold: compositions, special points (a zero exponent, ties),
# Python operators, conversions, and in-place ops and writes through views under autograd.
CASES = [
    # special points and Python operators
    Case("div_scalar_numerator", lambda m, a: 2.0 / a, ((3, 4),), ("positive",)),
    Case("sign", lambda m, a: a.sign() * a, ((3, 4),), ("distinct",)),
    Case("pow_zero", lambda m, a: a.pow(0) * a, ((3, 4),)),
    Case("maximum_ties", lambda m, a: m.maximum(a, a * 1), ((3, 4),)),
    Case("var_all_correction0", lambda m, a: a.var(correction=0), ((3, 4),)),
    # indexing and views
    Case("getitem_ellipsis_none", lambda m, a: a[None, ..., 1], ((2, 3, 4),)),
    Case("getitem_mixed", lambda m, a: a[1:, [0, 3, 3]], ((3, 4),)),
    Case("mT", lambda m, a: a.mT, ((2, 3, 4),)),
    Case("split_pieces", _two_pieces, ((3, 4),)),
    Case("unbind", _unbind_mix, ((3, 4),)),
    # copies and conversions
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
    Case("matmul_batched", lambda m, a, b: a @ b, ((2, 3, 4), (4,))),
    Case("relu_mul", lambda m, a, b: a.relu() * b, ((3, 4), (3, 4))),
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


@pytest.mark.parametrize("case", SECOND_ORDER, ids=lambda c: c.name)
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
