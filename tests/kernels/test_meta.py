"""Meta tensors: every op predicts the sizes, strides and dtype PyTorch's meta tensors have."""

import pytest
import torch
from engine_testing import DTYPE_PAIRS, TORCH_TO_WHYLAB

import whylab


def meta_pair(shape, dtype=torch.float32, transpose=False):
    w = whylab.empty(*shape, dtype=TORCH_TO_WHYLAB[dtype], device="meta")
    t = torch.empty(*shape, dtype=dtype, device="meta")
    if transpose:
        return w.transpose(0, -1), t.transpose(0, -1)
    return w, t


def assert_meta_equal(w, t):
    assert w.device.type == "meta" and w._array is None
    assert tuple(w.shape) == tuple(t.shape)
    assert tuple(w.stride()) == tuple(t.stride())
    assert DTYPE_PAIRS[w.dtype] == t.dtype


CASES = {
    "add": lambda m, a, b: m.add(a, b, alpha=2),
    "add scalar": lambda m, a, b: a + 2.5,
    "mul broadcast": lambda m, a, b: a * b[0],
    "div": lambda m, a, b: m.div(a, b),
    "div floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "pow": lambda m, a, b: a**2,
    "rpow": lambda m, a, b: 2**a,
    "eq": lambda m, a, b: a == b,
    "exp": lambda m, a, b: m.exp(a),
    "sigmoid": lambda m, a, b: m.sigmoid(a),
    "relu": lambda m, a, b: m.relu(a),
    "neg": lambda m, a, b: -a,
    "clamp": lambda m, a, b: a.clamp(0, 1),
    "where": lambda m, a, b: m.where(a > 0, a, b),
    "sum": lambda m, a, b: a.sum(1),
    "sum all": lambda m, a, b: a.sum(),
    "mean keepdim": lambda m, a, b: a.mean((0, 1), keepdim=True),
    "amax": lambda m, a, b: a.amax(-1),
    "max dim": lambda m, a, b: a.max(0)[0],
    "argmax": lambda m, a, b: a.argmax(1),
    "var": lambda m, a, b: a.var(0),
    "logsumexp": lambda m, a, b: a.logsumexp(1),
    "softmax": lambda m, a, b: a.softmax(-1),
    "log_softmax": lambda m, a, b: a.log_softmax(0),
    "matmul": lambda m, a, b: a @ b.transpose(-1, -2),
    "transpose": lambda m, a, b: a.transpose(0, 2),
    "view": lambda m, a, b: a.reshape(-1),
    "expand": lambda m, a, b: a[:, :1].expand(4, -1, 3, -1),
    "getitem": lambda m, a, b: a[1, ::2, None],
    "cat": lambda m, a, b: m.cat([a, b], 1),
    "stack": lambda m, a, b: m.stack([a, b]),
    "clone": lambda m, a, b: a.clone(),
    "contiguous": lambda m, a, b: a.contiguous(),
    "to float64": lambda m, a, b: a.double(),
    "tril": lambda m, a, b: a.tril(),
    "index_select": lambda m, a, b: a.index_select(1, m.zeros(2, dtype=m.int64, device="meta")),
    "gather": lambda m, a, b: a.gather(
        1, m.zeros(a.shape[0], 2, a.shape[2], dtype=m.int64, device="meta")
    ),
    "advanced index": lambda m, a, b: a[:, m.zeros(2, dtype=m.int64, device="meta")],
    "advanced split": lambda m, a, b: a[
        m.zeros(2, dtype=m.int64, device="meta"), :, m.zeros(2, dtype=m.int64, device="meta")
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("transpose", [False, True])
def test_meta_results_match_torch_meta(name, transpose):
    wa, ta = meta_pair((2, 3, 5), transpose=transpose)
    wb, tb = meta_pair((2, 3, 5))
    if transpose:
        wb, tb = meta_pair((5, 3, 2))
    w_result = CASES[name](whylab, wa, wb)
    t_result = CASES[name](torch, ta, tb)
    if name in ("div floor", "rpow") and transpose:
        # PyTorch's meta kernels for floor division and pow(number, tensor) lay the output
        # out differently from its own CPU kernels (row-major for rpow); whylab's meta
        # follows the CPU kernel, so compare with that.
        cpu_a = torch.ones(2, 3, 5).transpose(0, -1)
        t_result = CASES[name](torch, cpu_a, torch.ones(5, 3, 2))
        assert w_result.stride() == t_result.stride() and w_result.shape == t_result.shape
        return
    assert_meta_equal(w_result, t_result)


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_meta_factories(factory):
    assert_meta_equal(
        getattr(whylab, factory)(2, 3, device="meta"), getattr(torch, factory)(2, 3, device="meta")
    )


def test_meta_special_factories_and_integer_ops():
    assert_meta_equal(whylab.arange(0, 10, 3, device="meta"), torch.arange(0, 10, 3, device="meta"))
    assert_meta_equal(whylab.eye(3, 4, device="meta"), torch.eye(3, 4, device="meta"))
    assert_meta_equal(whylab.full((2,), 7, device="meta"), torch.full((2,), 7, device="meta"))
    ints_w = whylab.empty(4, dtype=whylab.int64, device="meta")
    ints_t = torch.empty(4, dtype=torch.int64, device="meta")
    assert_meta_equal(ints_w / 2, ints_t / 2)
    assert_meta_equal(ints_w.sum(), ints_t.sum())
    assert_meta_equal(ints_w * 2.5, ints_t * 2.5)


def test_to_meta_preserves_layout_and_meta_errors_match_cpu():
    cpu = whylab.ones(3, 4).t()
    meta = cpu.to("meta")
    assert meta.device == whylab.device("meta") and meta.stride() == (1, 4)
    with pytest.raises(RuntimeError, match=r"mm: mat1 and mat2 shapes cannot be multiplied"):
        whylab.empty(2, 3, device="meta") @ whylab.empty(4, 5, device="meta")
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        whylab.empty(2, 3, device="meta") + whylab.empty(4, device="meta")
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        meta.to("cpu")
    with pytest.raises(NotImplementedError, match="depends on the data"):
        meta.nonzero()
    assert "device='meta'" in repr(meta)


def test_every_operator_has_a_meta_kernel():
    missing = [
        op.name
        for op in whylab.dispatch.all_ops()
        if not op.name.startswith("test_op_")
        and not op.has_kernel(whylab.dispatch.DispatchKey.Meta)
    ]
    assert missing == []
