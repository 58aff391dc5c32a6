"""Elementwise ops against PyTorch beyond the OpInfo table (tests/ops): random layouts,
dtype promotion, reflected scalars, in-place forms and error messages."""

import itertools

import numpy as np
import pytest
import torch
from engine_testing import DTYPE_PAIRS, assert_same, layouts, pair, random_array

import whylab

UNARY_ON_INTEGERS = ["exp", "log", "sqrt", "tanh", "sigmoid", "abs", "neg", "relu"]


@pytest.mark.parametrize("name", UNARY_ON_INTEGERS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_unary_ops_on_integers_follow_torch_dtype(name, dtype):
    w_op, t_op = getattr(whylab, name), getattr(torch, name)
    w, t = pair(random_array((5,), dtype, seed=4, low=1, high=5))
    assert_same(w_op(w), t_op(t), rtol=1e-6)


def test_integer_negative_power_error_names_the_op():
    integers = whylab.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="pow: Integers to negative integer powers"):
        integers**-1
    with pytest.raises(RuntimeError, match="pow_: Integers to negative integer powers"):
        integers.pow_(-1)


def test_add_sub_alpha_and_reflected_scalars():
    for (_, wa, ta), (_, wb, tb) in itertools.product(
        layouts((3, 4), seed=1), layouts((3, 4), seed=2)
    ):
        assert_same(whylab.add(wa, wb, alpha=2.5), torch.add(ta, tb, alpha=2.5))
        assert_same(whylab.sub(wa, wb, alpha=-3), torch.sub(ta, tb, alpha=-3))
    wa, ta = pair(random_array((3,), seed=5, low=0.5))
    for w, t in [
        (2 + wa, 2 + ta),
        (2 - wa, 2 - ta),
        (2 * wa, 2 * ta),
        (2 / wa, 2 / ta),
        (wa - 1.5, ta - 1.5),
        (-wa, -ta),
        (+wa, +ta),
        (wa / 4, ta / 4),
        (wa // 0.7, ta // 0.7),
        (wa % 0.7, ta % 0.7),
        (abs(wa), abs(ta)),
    ]:
        assert_same(w, t)
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        whylab.add(whylab.tensor([1, 2]), whylab.tensor([1, 2]), alpha=0.5)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_div_rounding_modes(mode, dtype):
    a = np.array([7, -7, 7, -7, 5, 0, -1], dtype=dtype)
    b = np.array([2, 2, -2, -2, 5, 3, 4], dtype=dtype)
    wa, ta = pair(a)
    wb, tb = pair(b)
    assert_same(whylab.div(wa, wb, rounding_mode=mode), torch.div(ta, tb, rounding_mode=mode))
    assert_same(whylab.div(wa, 3, rounding_mode=mode), torch.div(ta, 3, rounding_mode=mode))
    with pytest.raises(RuntimeError, match="rounding_mode"):
        whylab.div(wa, wb, rounding_mode="round")


def test_clamp_and_where():
    for _, w, t in layouts((3, 4), seed=6):
        assert_same(w.clamp(-1, 1), t.clamp(-1, 1))
        assert_same(w.clamp(min=0.5), t.clamp(min=0.5))
        assert_same(w.clamp(max=0.5), t.clamp(max=0.5))
        wl, tl = pair(random_array((4,), seed=7, low=-2, high=0))
        assert_same(whylab.clamp(w, wl, None), torch.clamp(t, tl, None))
        cond_w, cond_t = w > 0, t > 0
        assert_same(whylab.where(cond_w, w, 0.0), torch.where(cond_t, t, 0.0))
        assert_same(whylab.where(cond_w, 1.0, w), torch.where(cond_t, 1.0, t))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        whylab.clamp(whylab.ones(2))
    with pytest.raises(RuntimeError, match="condition to be a boolean"):
        whylab.where(whylab.ones(2), whylab.ones(2), whylab.ones(2))


def test_logical_and_bitwise_ops():
    wa, ta = pair(np.array([True, False, True, False]))
    wb, tb = pair(np.array([True, True, False, False]))
    for w, t in [
        (wa & wb, ta & tb),
        (wa | wb, ta | tb),
        (wa ^ wb, ta ^ tb),
        (~wa, ~ta),
        (whylab.logical_xor(wa, wb), torch.logical_xor(ta, tb)),
        (whylab.logical_not(wa), torch.logical_not(ta)),
    ]:
        assert_same(w, t)
    wi, ti = pair(np.array([5, 3, -2]))
    assert_same(wi & 6, ti & 6)
    assert_same(~wi, ~ti)


DTYPES = [whylab.bool, whylab.int32, whylab.int64, whylab.float32, whylab.float64]


@pytest.mark.parametrize(("first", "second"), list(itertools.product(DTYPES, DTYPES)))
def test_promotion_matches_torch_for_tensor_pairs(first, second):
    t_first, t_second = DTYPE_PAIRS[first], DTYPE_PAIRS[second]
    dim = (whylab.ones(2, dtype=first), whylab.ones(2, dtype=second))
    torch_dim = (torch.ones(2, dtype=t_first), torch.ones(2, dtype=t_second))
    assert DTYPE_PAIRS[(dim[0] * dim[1]).dtype] == (torch_dim[0] * torch_dim[1]).dtype
    zero_dim = whylab.ones((), dtype=second)
    torch_zero_dim = torch.ones((), dtype=t_second)
    assert DTYPE_PAIRS[(dim[0] * zero_dim).dtype] == (torch_dim[0] * torch_zero_dim).dtype
    assert DTYPE_PAIRS[whylab.result_type(dim[0], zero_dim)] == torch.result_type(
        torch_dim[0], torch_zero_dim
    )
    assert DTYPE_PAIRS[whylab.promote_types(first, second)] == torch.promote_types(
        t_first, t_second
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [True, 3, 2.5])
def test_promotion_with_python_scalars_is_weak(dtype, scalar):
    w = whylab.ones(2, dtype=dtype)
    t = torch.ones(2, dtype=DTYPE_PAIRS[dtype])
    assert DTYPE_PAIRS[(w * scalar).dtype] == (t * scalar).dtype
    assert DTYPE_PAIRS[(w + scalar).dtype] == (t + scalar).dtype
    assert DTYPE_PAIRS[(w / scalar).dtype] == (t / scalar).dtype
    assert DTYPE_PAIRS[(w > scalar).dtype] == (t > scalar).dtype


def test_promotion_respects_default_dtype():
    whylab.set_default_dtype(whylab.float64)
    try:
        assert (whylab.tensor([1, 2]) * 2.5).dtype is whylab.float64
        assert whylab.tensor([1.0]).dtype is whylab.float64
    finally:
        whylab.set_default_dtype(whylab.float32)
    assert (whylab.tensor([1, 2]) * 2.5).dtype is whylab.float32
    assert (whylab.tensor([1, 2]) / whylab.tensor([2, 2])).dtype is whylab.float32


def test_broadcast_error_names_op_and_shapes():
    with pytest.raises(
        RuntimeError,
        match=r"add: The size of tensor a \(3\) must match the size "
        r"of tensor b \(4\) at non-singleton dimension 1 "
        r"\(shapes \[2, 3\] and \[4\]\)",
    ):
        whylab.ones(2, 3) + whylab.ones(4)
    with pytest.raises(RuntimeError, match="mul: The size of tensor a"):
        whylab.ones(2, 3) * whylab.ones(2)


def test_bool_errors_match_torch():
    b = whylab.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        whylab.sub(b, b)
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        b.__neg__()


# ------------------------------------------------------------------------------ in-place


INPLACE = [
    ("add_", lambda x, y: x.add_(y), lambda x, y: x.add_(y)),
    ("sub_", lambda x, y: x.sub_(y, alpha=2), lambda x, y: x.sub_(y, alpha=2)),
    ("mul_", lambda x, y: x.mul_(y), lambda x, y: x.mul_(y)),
    ("div_", lambda x, y: x.div_(y), lambda x, y: x.div_(y)),
    ("iadd", lambda x, y: x.__iadd__(y), lambda x, y: x.__iadd__(y)),
    ("imul", lambda x, y: x.__imul__(y), lambda x, y: x.__imul__(y)),
    ("itruediv", lambda x, y: x.__itruediv__(y), lambda x, y: x.__itruediv__(y)),
    ("isub", lambda x, y: x.__isub__(y), lambda x, y: x.__isub__(y)),
    ("copy_", lambda x, y: x.copy_(y), lambda x, y: x.copy_(y)),
    ("clamp_", lambda x, y: x.clamp_(-0.5, 0.5), lambda x, y: x.clamp_(-0.5, 0.5)),
    ("fill_", lambda x, y: x.fill_(2.5), lambda x, y: x.fill_(2.5)),
    ("zero_", lambda x, y: x.zero_(), lambda x, y: x.zero_()),
    (
        "masked_fill_",
        lambda x, y: x.masked_fill_(y > 0, -1.0),
        lambda x, y: x.masked_fill_(y > 0, -1.0),
    ),
]


@pytest.mark.parametrize(("name", "w_op", "t_op"), INPLACE)
def test_inplace_ops_write_through_views_and_bump_version(name, w_op, t_op):
    base_values = random_array((4, 6), seed=8, low=0.5)
    w_base, t_base = pair(base_values)
    w_view, t_view = w_base.t()[1:5:2], t_base.t()[1:5:2]
    w_other, t_other = pair(random_array((4,), seed=9, low=0.5))
    before = w_base._version_counter.value
    returned = w_op(w_view, w_other)
    t_op(t_view, t_other)
    assert returned is w_view
    assert w_base._version_counter.value == before + 1
    assert_same(w_base, t_base)


def test_inplace_dtype_and_shape_errors():
    ints = whylab.tensor([1, 2, 3])
    with pytest.raises(
        RuntimeError, match="result type float32 can't be cast to the desired output type int64"
    ):
        ints.add_(1.5)
    with pytest.raises(
        RuntimeError,
        match=r"output with shape \[3\] doesn't match the broadcast "
        r"shape \[2, 3\]",
    ):
        whylab.ones(3).add_(whylab.ones(2, 3))
    with pytest.raises(RuntimeError, match="single memory location"):
        whylab.ones(1).expand(3).add_(1)
    floats = whylab.zeros(3, dtype=whylab.float32)
    floats.add_(whylab.ones(3, dtype=whylab.float64))
    assert floats.dtype is whylab.float32 and floats.tolist() == [1.0, 1.0, 1.0]
    ints.mul_(2)
    assert ints.tolist() == [2, 4, 6]


INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
WRITES_TO_EXPANDED = {
    "fill_": lambda m, e: e.fill_(1.5),
    "zero_": lambda m, e: e.zero_(),
    "fill_ 0-d tensor": lambda m, e: e.fill_(m.tensor(1.5, dtype=m.float64)),
    "copy_": lambda m, e: e.copy_(m.ones(1, 3, 3, 4, dtype=m.float64)),
    "copy_ broadcast": lambda m, e: e.copy_(m.ones(4, dtype=m.float64)),
    "add_": lambda m, e: e.add_(1.0),
    "add_ tensor": lambda m, e: e.add_(m.ones(4, dtype=m.float64)),
    "mul_": lambda m, e: e.mul_(2.0),
    "sub_": lambda m, e: e.sub_(1.0),
    "clamp_": lambda m, e: e.clamp_(0.0, 5.0),
    "setitem number": lambda m, e: e.__setitem__(0, 7.0),
    "setitem tensor": lambda m, e: e.__setitem__(0, m.ones(4, dtype=m.float64)),
    "setitem non-overlapping part": lambda m, e: e.__setitem__((0, 0, 0), 7.0),
}


def _write_to_expanded(module, name):
    """Write into x[1:, :, None].expand(-1, -1, 3, -1); return the outcome and x."""
    x = module.arange(24, dtype=module.float64).reshape(2, 3, 4)
    expanded = x[1:, :, None].expand(-1, -1, 3, -1)
    try:
        WRITES_TO_EXPANDED[name](module, expanded)
    except RuntimeError as error:
        return str(error), x
    return None, x


@pytest.mark.parametrize("name", WRITES_TO_EXPANDED)
def test_inplace_writes_to_an_expanded_tensor_like_torch(name):
    # torch fills an expanded tensor with a number (every aliased element gets the same
    # value) but refuses the other writes with its internal-overlap message.
    w_error, w_x = _write_to_expanded(whylab, name)
    t_error, t_x = _write_to_expanded(torch, name)
    if t_error is None:
        assert w_error is None
    else:
        assert t_error == INTERNAL_OVERLAP
        assert w_error is not None and w_error.endswith(INTERNAL_OVERLAP)
    assert_same(w_x, t_x)


def test_python_operators_on_comparisons_return_bool_tensors():
    w, t = pair(np.array([1.0, 2.0, 3.0]))
    for w_result, t_result in [
        (w == 2, t == 2),
        (w != 2, t != 2),
        (w < 2, t < 2),
        (w <= 2, t <= 2),
        (w > 2, t > 2),
        (w >= 2, t >= 2),
    ]:
        assert_same(w_result, t_result)
    assert hash(w) != hash(whylab.ones(3))


def test_special_values_match_torch_without_numpy_warnings():
    import warnings

    values = np.array([0.0, 1.0, -1.0, 1000.0])
    w, t = pair(values)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for w_result, t_result in [
            (whylab.log(w), torch.log(t)),
            (whylab.exp(w), torch.exp(t)),
            (w / 0, t / 0),
            (whylab.sqrt(w), torch.sqrt(t)),
            (w**-1, t**-1),
            (whylab.rsqrt(w), torch.rsqrt(t)),
        ]:
            np.testing.assert_array_equal(w_result.numpy(), t_result.numpy())


def _operand(draw, shape, seed):
    """A whylab/torch pair with ``shape`` in a random memory layout: a permuted,
    possibly step-sliced view of a contiguous tensor."""
    from hypothesis import strategies as st

    order = draw(st.permutations(range(len(shape)))) if shape else []
    steps = [draw(st.integers(1, 2)) for _ in shape]
    stored_shape = [shape[d] * steps[d] for d in order]
    w, t = pair(random_array(tuple(stored_shape), seed=seed))
    inverse = [order.index(d) for d in range(len(shape))]
    if shape:
        w, t = w.permute(*inverse), t.permute(*inverse)
    index = tuple(slice(None, None, s) for s in steps)
    return w[index], t[index]


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(data=st.data(), shape=st.lists(st.integers(1, 4), max_size=4).map(tuple))
def test_random_layouts_and_broadcasts_match_torch_values_and_strides(data, shape):
    other = tuple(s if data.draw(st.booleans()) else 1 for s in shape)
    other = other[data.draw(st.integers(0, len(other))) :]
    wa, ta = _operand(data.draw, shape, 1)
    wb, tb = _operand(data.draw, other, 2)
    if data.draw(st.booleans()):
        wa, ta, wb, tb = wb, tb, wa, ta
    for w_result, t_result in [
        (wa + wb, ta + tb),
        (whylab.maximum(wa, wb), torch.maximum(ta, tb)),
        (wa.exp(), ta.exp()),
        (wa > wb, ta > tb),
    ]:
        assert_same(w_result, t_result)
        assert w_result.stride() == t_result.stride()
    for w_copy, t_copy in [
        (wa.clone(), ta.clone()),
        (wa.float(), ta.float()),
        (wa.contiguous(), ta.contiguous()),
    ]:
        assert w_copy.stride() == t_copy.stride()

    # Meta must predict what the CPU kernel produces. (PyTorch's own meta kernels
    # sometimes disagree with its CPU kernels on size-1 dimensions; we follow CPU.)
    def as_meta(x):
        return whylab.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")

    meta = as_meta(wa) * as_meta(wb)
    assert meta.stride() == (ta * tb).stride() and meta.shape == (ta * tb).shape
