"""The nodes whylab records carry PyTorch's names (``type(grad_fn).__name__``, ``name()``).

Each case runs the same expression under whylab and torch 2.13 and compares the
names of every node reachable from the output's ``grad_fn``, not only the
top one, so a composite that records other nodes than PyTorch's shows up.

tests/ops/test_ops.py compares the same over every sample of the OpInfo table
(``test_recorded_nodes_match_torch``). Known difference: PyTorch's ``name()`` of its
C++-only nodes is namespaced (``torch::autograd::AccumulateGrad``,
``torch::autograd::CopySlices``) where whylab's is the bare class name.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import whylab
from tests.ops.core import node_names

torch.set_num_threads(1)


def _setitem_slice(m, a, b, v):
    y = a * 1
    y[:, 1] = v[:3]
    return y


def _inplace_chain(m, a, b, v):
    y = a * 1
    y.add_(v).mul_(v).sub_(0.5)
    return y


def _view_write(m, a, b, v):
    y = a.clone()
    y[1].fill_(3.0)
    return y


CASES = {
    "add": lambda m, a, b, v: a + v,
    "add_scalar": lambda m, a, b, v: a + 2.0,
    "add_alpha": lambda m, a, b, v: m.add(a, v, alpha=2.5),
    "sub": lambda m, a, b, v: a - v,
    "rsub": lambda m, a, b, v: 1 - a,
    "mul": lambda m, a, b, v: a * v,
    "div": lambda m, a, b, v: a / v,
    "div_scalar": lambda m, a, b, v: a / 2.0,
    "div_floor": lambda m, a, b, v: a.div(v, rounding_mode="floor"),
    "rdiv": lambda m, a, b, v: 1 / a,
    "remainder_tensor": lambda m, a, b, v: a.remainder(v),
    "remainder_scalar": lambda m, a, b, v: a.remainder(2.0),
    "neg": lambda m, a, b, v: -a,
    "abs": lambda m, a, b, v: a.abs(),
    "pow_scalar": lambda m, a, b, v: a**2,
    "pow_tensor": lambda m, a, b, v: a.abs().pow(v),
    "pow_scalar_base": lambda m, a, b, v: 2.0**a,
    "maximum": lambda m, a, b, v: m.maximum(a, v),
    "clamp_scalars": lambda m, a, b, v: a.clamp(-0.5, 0.5),
    "clamp_tensors": lambda m, a, b, v: m.clamp(a, v, v + 1),
    "where": lambda m, a, b, v: m.where(a > 0, a, v),
    "exp": lambda m, a, b, v: a.exp(),
    "log": lambda m, a, b, v: a.abs().log(),
    "sqrt": lambda m, a, b, v: a.abs().sqrt(),
    "sin": lambda m, a, b, v: a.sin(),
    "tanh": lambda m, a, b, v: a.tanh(),
    "sigmoid": lambda m, a, b, v: a.sigmoid(),
    "relu": lambda m, a, b, v: a.relu(),
    "sum": lambda m, a, b, v: a.sum(),
    "sum_dim": lambda m, a, b, v: a.sum(1),
    "mean": lambda m, a, b, v: a.mean(),
    "mean_dim": lambda m, a, b, v: a.mean(0),
    "prod_dim": lambda m, a, b, v: a.prod(1),
    "amax": lambda m, a, b, v: a.amax(1),
    "max": lambda m, a, b, v: a.max(),
    "max_dim": lambda m, a, b, v: a.max(1)[0],
    "var": lambda m, a, b, v: a.var(1),
    "std": lambda m, a, b, v: a.std(),
    "logsumexp": lambda m, a, b, v: a.logsumexp(1),
    "softmax": lambda m, a, b, v: a.softmax(1),
    "log_softmax": lambda m, a, b, v: a.log_softmax(1),
    "cumsum": lambda m, a, b, v: a.cumsum(1),
    "sort": lambda m, a, b, v: a.sort(1)[0],
    "topk": lambda m, a, b, v: a.topk(2)[0],
    "mm": lambda m, a, b, v: a.mm(b),
    "matmul": lambda m, a, b, v: a @ b,
    "matmul_batched": lambda m, a, b, v: a.unsqueeze(0).expand(2, 3, 4) @ b,
    "mv": lambda m, a, b, v: a.mv(v),
    "dot": lambda m, a, b, v: v.dot(v),
    "addmm": lambda m, a, b, v: m.addmm(v, a, b),
    "linear": lambda m, a, b, v: m.nn.functional.linear(a, b, v),
    "cross_entropy": lambda m, a, b, v: m.nn.functional.cross_entropy(a, m.tensor([0, 2, 1])),
    "nll_loss": lambda m, a, b, v: m.nn.functional.nll_loss(
        a.log_softmax(1), m.tensor([0, 2, 1])
    ),
    "cat": lambda m, a, b, v: m.cat([a, b], 0),
    "gather": lambda m, a, b, v: a.gather(1, m.tensor([[0, 0], [3, 1], [2, 2]])),
    "index_select": lambda m, a, b, v: a.index_select(0, m.tensor([2, 0])),
    "masked_select": lambda m, a, b, v: a.masked_select(a > 0),
    "tril": lambda m, a, b, v: a.tril(),
    "getitem_int": lambda m, a, b, v: a[1],
    "getitem_slice": lambda m, a, b, v: a[:, 1:3],
    "getitem_step": lambda m, a, b, v: a[::2],
    "getitem_list": lambda m, a, b, v: a[[0, 2, 0]],
    "getitem_mask": lambda m, a, b, v: a[a > 0],
    "expand": lambda m, a, b, v: v.expand(3, 4),
    "reshape": lambda m, a, b, v: a.reshape(6, 2),
    "reshape_copy": lambda m, a, b, v: a.t().reshape(12),
    "view": lambda m, a, b, v: a.view(2, 6),
    "flatten": lambda m, a, b, v: a.flatten(),
    "permute": lambda m, a, b, v: a.permute(1, 0),
    "transpose": lambda m, a, b, v: a.transpose(0, 1),
    "t": lambda m, a, b, v: a.t(),
    "squeeze": lambda m, a, b, v: a.unsqueeze(0).squeeze(),
    "squeeze_dim": lambda m, a, b, v: a.unsqueeze(2).squeeze(2),
    "narrow": lambda m, a, b, v: a.narrow(1, 1, 2),
    "diagonal": lambda m, a, b, v: a.diagonal(),
    "unfold": lambda m, a, b, v: a.unfold(1, 2, 1),
    "as_strided": lambda m, a, b, v: a.as_strided((2, 3), (1, 2), 1),
    "clone": lambda m, a, b, v: a.clone(),
    "contiguous": lambda m, a, b, v: a.t().contiguous(),
    "to_float32": lambda m, a, b, v: a.to(m.float32),
    "setitem_slice": _setitem_slice,
    "inplace_chain": _inplace_chain,
    "fill_view": _view_write,
    "copy_": lambda m, a, b, v: (a * 1).copy_(v),
    # composites that once recorded other nodes than torch's
    "outer": lambda m, a, b, v: m.outer(v, a[0]),
    "stack": lambda m, a, b, v: m.stack([a, b[:3]], 1),
    "split": lambda m, a, b, v: a.split(3, 1)[1],
    "split_sizes": lambda m, a, b, v: a.split([1, 3], 1)[0],
    "chunk": lambda m, a, b, v: a.chunk(2, 1)[1],
    "unbind": lambda m, a, b, v: a.unbind(1)[2],
    "matmul_vector_matrix": lambda m, a, b, v: v @ b,
    "masked_fill": lambda m, a, b, v: a.masked_fill(a > 0, 0.5),
    "squeeze_dims": lambda m, a, b, v: a.unsqueeze(0).squeeze((0,)),
    "rsub_tensor": lambda m, a, b, v: m.rsub(a, v),
    "reshape_alias": lambda m, a, b, v: a.t().reshape(2, 2, 3),
    "broadcast_tensors": lambda m, a, b, v: sum(t.sum() for t in m.broadcast_tensors(a, v)),
    "gelu": lambda m, a, b, v: m.nn.functional.gelu(a),
    "gelu_tanh": lambda m, a, b, v: m.nn.functional.gelu(a, approximate="tanh"),
    "mse_loss": lambda m, a, b, v: m.nn.functional.mse_loss(a, b[:3]),
    "layer_norm": lambda m, a, b, v: m.nn.functional.layer_norm(a, (4,), v, b[0]),
    "label_smoothing": lambda m, a, b, v: m.nn.functional.cross_entropy(
        a, m.tensor([0, 2, 1]), label_smoothing=0.1
    ),
    "nll_loss_3d": lambda m, a, b, v: m.nn.functional.nll_loss(
        a.reshape(1, 3, 4)[..., ::2], m.tensor([[0, 2]])
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_recorded_nodes_have_torchs_names(name):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 4)), rng.standard_normal((4, 4)), rng.standard_normal(4)
    graphs, tops = {}, {}
    for module in (whylab, torch):
        leaves = [module.tensor(array, requires_grad=True) for array in data]
        out = CASES[name](module, *leaves)
        graphs[module.__name__] = node_names(out.grad_fn)
        tops[module.__name__] = out.grad_fn.name().removeprefix("torch::autograd::")
    assert graphs["whylab"] == graphs["torch"]
    assert tops["whylab"] == tops["torch"]


def test_node_name_comparison_sees_a_wrong_name():
    """Negative control: the comparison above tells two different graphs apart."""
    a = whylab.ones(3, requires_grad=True)
    t = torch.ones(3, requires_grad=True)
    assert node_names((a * 2).grad_fn) != node_names((t + 2).grad_fn)
