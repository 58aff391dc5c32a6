"""matmul's rank rules, the product it decomposes into, and linear-algebra error messages
(each op's values against torch: tests/ops)."""

import itertools

import pytest
import torch
from engine_testing import assert_same, pair, random_array
from torch.utils._python_dispatch import TorchDispatchMode

import whylab
from whylab.dispatch import trace

SHAPES = {
    1: [(3,)],
    2: [(2, 3), (3, 4), (4, 3)],
    3: [(5, 2, 3), (1, 3, 4), (5, 3, 4)],
    4: [(2, 1, 2, 3), (1, 5, 3, 4)],
}


def _compatible(shape_a, shape_b):
    inner_a = shape_a[-1]
    inner_b = shape_b[-2] if len(shape_b) > 1 else shape_b[0]
    if inner_a != inner_b:
        return False
    try:
        torch.broadcast_shapes(shape_a[:-2], shape_b[:-2])
    except RuntimeError:
        return False
    return True


CASES = [
    (a, b)
    for rank_a, rank_b in itertools.product(SHAPES, SHAPES)
    for a, b in itertools.product(SHAPES[rank_a], SHAPES[rank_b])
    if _compatible(a, b)
]


@pytest.mark.parametrize(("shape_a", "shape_b"), CASES)
def test_matmul_every_rank_combination(shape_a, shape_b):
    wa, ta = pair(random_array(shape_a, seed=20))
    wb, tb = pair(random_array(shape_b, seed=21))
    assert_same(wa @ wb, ta @ tb)
    assert_same(whylab.matmul(wa, wb), torch.matmul(ta, tb))
    assert (wa @ wb).stride() == (ta @ tb).stride()


def test_all_rank_pairs_are_covered():
    ranks = {(len(a), len(b)) for a, b in CASES}
    assert ranks == set(itertools.product(range(1, 5), range(1, 5)))


def test_matmul_on_non_contiguous_operands():
    wa, ta = pair(random_array((4, 2, 3), seed=22))
    wb, tb = pair(random_array((4, 5, 3), seed=23))
    assert_same(wa @ wb.transpose(-1, -2), ta @ tb.transpose(-1, -2))
    assert_same(wa[::2] @ wb[1::2].mT, ta[::2] @ tb[1::2].mT)
    assert_same(wa.transpose(0, 1) @ wb[0].t(), ta.transpose(0, 1) @ tb[0].t())


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "expected"),
    [
        ((3,), (3,), ["matmul", "dot"]),
        ((2, 3), (3,), ["matmul", "mv"]),
        ((3,), (3, 4), ["matmul", "unsqueeze", "mm", "squeeze_"]),
        ((2, 3), (3, 4), ["matmul", "mm"]),
    ],
)
def test_matmul_decomposes_like_torch(shape_a, shape_b, expected):
    a, b = whylab.ones(*shape_a), whylab.ones(*shape_b)
    with trace() as t:
        a @ b
    assert t.ops() == expected


def test_folding_uses_mm_for_batched_times_matrix():
    with trace() as t:
        whylab.ones(5, 2, 3) @ whylab.ones(3, 4)
    assert "mm" in t.ops() and "bmm" not in t.ops()


INNER_PRODUCTS = ("dot", "mv", "mm", "bmm")


class _AtenLog(TorchDispatchMode):
    """Records the names of the aten operators torch runs below autograd."""

    def __init__(self):
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def _fold_case_operand(rank, batch_shape, matrix_shape, contiguous_batch, seed):
    """Values of one operand, and a (whylab, torch) leaf pair holding them.

    A non-contiguous batch is every other slice of a twice-as-long first dimension,
    so flattening the batch would need a copy.
    """
    shape = matrix_shape[-rank:] if rank <= 2 else batch_shape[4 - rank:] + matrix_shape
    if contiguous_batch or rank < 3:
        return pair(random_array(shape, seed=seed))
    doubled = (2 * shape[0],) + shape[1:]
    w, t = pair(random_array(doubled, seed=seed))
    return w[::2].detach(), t[::2].detach()


@pytest.mark.parametrize("contiguous_batch", [True, False], ids=["contiguous", "strided-batch"])
@pytest.mark.parametrize(("grad_a", "grad_b"), list(itertools.product([False, True], repeat=2)),
                         ids=["neither", "grad-b", "grad-a", "both"])
@pytest.mark.parametrize(("rank_a", "rank_b"), list(itertools.product(range(1, 5), repeat=2)))
def test_matmul_chooses_torchs_product(rank_a, rank_b, grad_a, grad_b, contiguous_batch):
    # torch folds the larger operand's batch into one mm/mv when the fold is a free view,
    # or when the *smaller* operand requires grad; the larger one's flag plays no part.
    wa, ta = _fold_case_operand(rank_a, (2, 3), (2, 3) if rank_a > 1 else (3,),
                                contiguous_batch, seed=31)
    wb, tb = _fold_case_operand(rank_b, (1, 3), (3, 4) if rank_b > 1 else (3,),
                                contiguous_batch, seed=32)
    wa.requires_grad_(grad_a), ta.requires_grad_(grad_a)
    wb.requires_grad_(grad_b), tb.requires_grad_(grad_b)
    with _AtenLog() as log:
        t_out = ta @ tb
    with trace() as recorded:
        w_out = wa @ wb
    torch_product = next(op for op in log.ops if op in INNER_PRODUCTS)
    whylab_product = next(op for op in recorded.ops() if op in INNER_PRODUCTS)
    assert whylab_product == torch_product
    assert_same(w_out.detach(), t_out.detach())
    if grad_a or grad_b:
        seed_grad = random_array(tuple(t_out.shape), seed=33)
        w_out.backward(whylab.tensor(seed_grad))
        t_out.backward(torch.from_numpy(seed_grad))
        for w, t in ((wa, ta), (wb, tb)):
            if t.requires_grad:
                assert_same(w.grad, t.grad)


def test_fold_needs_the_smaller_operand_to_require_grad():
    # The case that used to differ: 2-D @ 3-D with only the 3-D operand requiring grad.
    matrix, batch = whylab.ones(2, 3), whylab.ones(4, 3, 5, requires_grad=True)
    with trace() as recorded:
        matrix @ batch
    assert "bmm" in recorded.ops() and "mm" not in recorded.ops()


def test_matmul_errors_name_shapes():
    with pytest.raises(
        RuntimeError,
        match=r"mm: mat1 and mat2 shapes cannot be multiplied "
        r"\(2x3 and 4x5\)",
    ):
        whylab.ones(2, 3) @ whylab.ones(4, 5)
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        whylab.ones(()) @ whylab.ones(3)
    with pytest.raises(RuntimeError, match=r"dot: inconsistent tensor size"):
        whylab.ones(3) @ whylab.ones(4)
    with pytest.raises(RuntimeError, match=r"bmm: Expected size for first two dimensions"):
        whylab.bmm(whylab.ones(2, 3, 4), whylab.ones(3, 4, 5))
    with pytest.raises(RuntimeError, match="same dtype"):
        whylab.ones(2, 2) @ whylab.ones(2, 2, dtype=whylab.float64)
    with pytest.raises(RuntimeError, match="size mismatch"):
        whylab.mv(whylab.ones(2, 3), whylab.ones(4))
