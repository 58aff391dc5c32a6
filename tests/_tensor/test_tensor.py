"""Tensor basics: factories, conversions, repr, numpy interop, properties, errors."""

import numpy as np
import pytest
import torch
from engine_testing import DTYPE_PAIRS, assert_same, pair

import whylab


def test_constructors_and_like_factories_match_torch():
    # the dispatcher's factories (zeros, full, arange, eye, linspace...) are in tests/ops
    cases = [
        (
            whylab.zeros_like(whylab.ones(2, dtype=whylab.int32)),
            torch.zeros_like(torch.ones(2, dtype=torch.int32)),
        ),
        (whylab.full_like(whylab.ones(3), 4.0), torch.full_like(torch.ones(3), 4.0)),
        (whylab.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 2], [3, 4]])),
        (whylab.tensor([1.0, 2]), torch.tensor([1.0, 2])),
        (whylab.tensor(3), torch.tensor(3)),
        (whylab.tensor([True, False]), torch.tensor([True, False])),
        (whylab.tensor(np.array([1.0, 2.0])), torch.tensor(np.array([1.0, 2.0]))),
        (whylab.tensor([1, 2], dtype=whylab.float64), torch.tensor([1, 2], dtype=torch.float64)),
    ]
    for w, t in cases:
        assert_same(w, t)
        assert w.stride() == t.stride()


def test_random_factories_are_seeded_and_in_range():
    whylab.manual_seed(0)
    first = whylab.rand(100)
    whylab.manual_seed(0)
    assert whylab.rand(100).tolist() == first.tolist()
    assert 0 <= first.min().item() and first.max().item() < 1
    assert first.dtype is whylab.float32
    normal = whylab.randn(2000, dtype=whylab.float64)
    assert abs(normal.mean().item()) < 0.1 and abs(normal.std().item() - 1) < 0.1
    ints = whylab.randint(3, 7, (50,))
    assert ints.dtype is whylab.int64 and 3 <= ints.min().item() and ints.max().item() < 7
    assert whylab.randint(5, (3,)).max().item() < 5
    generator = whylab.Generator().manual_seed(42)
    again = whylab.Generator().manual_seed(42)
    assert (
        whylab.randn(5, generator=generator).tolist() == whylab.randn(5, generator=again).tolist()
    )
    assert whylab.rand_like(first).shape == first.shape


def test_factory_errors():
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        whylab.zeros(2, -1)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        whylab.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        whylab.randint(5, 5, (2,))
    with pytest.raises(TypeError, match="cannot be constructed directly"):
        whylab.nn.Parameter.__base__.__new__(type("Sub", (whylab.Tensor,), {}))


def test_legacy_constructors_match_torch():
    import torch

    for args in (([1, 2],), ([[1.5], [2.0]],), (2, 3), ()):
        ours, theirs = whylab.Tensor(*args), torch.Tensor(*args)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == "float32"
        if args and not isinstance(args[0], int):
            assert ours.tolist() == theirs.tolist()
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"):
        ours, theirs = getattr(whylab, name)([1, 0]), getattr(torch, name)([1, 0])
        assert ours.dtype.name == str(theirs.dtype).split(".")[1]
        assert isinstance(ours, getattr(whylab, name))
        assert ours.type() == theirs.type().replace("torch.", "whylab.")
    assert not isinstance(whylab.ones(1), whylab.LongTensor)
    assert whylab.ones(2).type("torch.LongTensor").dtype is whylab.int64


def test_properties_and_conversions():
    w = whylab.arange(6.0).reshape(2, 3)
    assert w.size() == (2, 3) and w.size(-1) == 3 and w.shape == (2, 3)
    assert w.dim() == 2 and w.ndim == 2 and w.numel() == 6 and len(w) == 2
    assert w.stride() == (3, 1) and w.stride(0) == 3 and w.storage_offset() == 0
    assert w.dtype is whylab.float32 and w.device == whylab.device("cpu")
    assert w.element_size() == 4 and w.is_floating_point()
    assert w.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert w[1, 2].item() == 5.0 and isinstance(w[1, 2].item(), float)
    assert float(w[0, 1]) == 1.0 and int(w[1, 1]) == 4
    assert w.double().dtype is whylab.float64
    assert w.long().dtype is whylab.int64 and w.bool().dtype is whylab.bool
    assert w.int().dtype is whylab.int32 and w.long().float().dtype is whylab.float32
    assert w.to(whylab.float32) is w and w.to("cpu") is w
    assert w.to(whylab.int64).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert (
        w.to(torch_like_other := whylab.zeros(1, dtype=whylab.float64)).dtype
        is torch_like_other.dtype
    )
    assert [row.tolist() for row in w] == w.tolist()
    assert np.asarray(w).shape == (2, 3)
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        w.item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(w)
    with pytest.raises(IndexError, match="Dimension out of range"):
        w.size(2)


def test_requires_grad_flags_and_leaf():
    w = whylab.ones(2, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad is None and w.grad_fn is None
    with pytest.raises(RuntimeError, match="Use tensor.detach"):
        w.numpy()
    assert not w.detach().requires_grad
    assert w.detach().numpy().tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="floating point"):
        whylab.ones(2, dtype=whylab.int64).requires_grad_()
    assert "requires_grad=True" in repr(w)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64),
        lambda m: m.tensor([1.5, -2.25]),
        lambda m: m.tensor([1e-5, 1e5]),
        lambda m: m.tensor([[1, 2], [30, 4]]),
        lambda m: m.tensor([True, False]),
        lambda m: m.tensor(3.5),
        lambda m: m.tensor(7),
        lambda m: m.zeros(0, 3),
        lambda m: m.zeros(0),
        lambda m: m.arange(12.0).reshape(3, 4) / 7,
        lambda m: m.arange(24.0).reshape(2, 3, 4),
        lambda m: m.tensor([float("nan"), float("inf"), 1.0]),
        lambda m: m.arange(2000.0),
        lambda m: m.ones(2, dtype=m.int32),
    ],
)
def test_repr_matches_torch_with_whylab_dtype_names(make):
    expected = repr(make(torch)).replace("torch.", "whylab.")
    assert repr(make(whylab)) == expected


def test_device_objects():
    assert whylab.device("cpu") == whylab.device("cpu")
    assert str(whylab.device("cuda:1")) == "cuda:1"
    assert repr(whylab.device("meta")) == "device(type='meta')"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta"):
        whylab.device("tpu")


def test_dtype_names_and_aliases():
    assert whylab.float is whylab.float32 and whylab.double is whylab.float64
    assert whylab.long is whylab.int64 and whylab.int is whylab.int32
    assert repr(whylab.float64) == "whylab.float64"
    for dtype, torch_dtype in DTYPE_PAIRS.items():
        assert dtype.itemsize == torch_dtype.itemsize
        assert dtype.is_floating_point == torch_dtype.is_floating_point


def test_broadcast_helpers():
    assert whylab.broadcast_shapes((2, 1), (3,)) == torch.broadcast_shapes((2, 1), (3,))
    w, t = pair(np.ones((2, 1)))
    w_out = whylab.broadcast_tensors(w, whylab.ones(3))
    assert w_out[0].shape == (2, 3) and w_out[0].stride() == (1, 0)
    assert t.expand(2, 3).stride() == (1, 0)


def test_make_subclass_shares_data_and_keeps_type():
    class Parameter(whylab.Tensor):
        __slots__ = ()

        def __new__(cls, data, requires_grad=True):
            return whylab.Tensor._make_subclass(cls, data, requires_grad)

    data = whylab.zeros(2, 3)
    p = Parameter(data)
    assert type(p) is Parameter and p.requires_grad and p.is_leaf
    assert p.untyped_storage() is data.untyped_storage() and p.shape == (2, 3)
    assert type(p + 1) is whylab.Tensor
    assert (p.detach() * 2).tolist() == [[0.0] * 3] * 2
    with pytest.raises(RuntimeError, match="no cuda backend"):
        whylab.ones(2).to("cuda")
