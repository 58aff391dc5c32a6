"""torch.matmul's rank rules, written out from the page's prose -- not from the engine.

The experiments compare what the engine really did (read from a dispatcher
trace) with what these rules predict, so this module must not import the
engine: it works on plain shapes, NumPy strides and two ``requires_grad`` flags.

The rules (PyTorch's ``matmul``, which whylab follows):

* 1-D · 1-D → ``dot``; 2-D · 1-D → ``mv``; 2-D · 2-D → ``mm``;
  1-D · 2-D → the vector becomes a 1×k matrix, ``mm``, and the 1 is squeezed away;
* one operand at least 3-D and the other at most 2-D → the batch dimensions of the
  larger one are *folded* into the rows of a single ``mm`` (or ``mv``) when the
  smaller operand requires grad (whether the larger one does plays no part), or
  else when that fold is a free reshape;
* anything else → broadcast the batch dimensions and call ``bmm``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INNER_OPS = ("dot", "mv", "mm", "bmm")

#: Each row of the rule table, in English and Chinese.
RULES = {
    "1d-1d": ("1-D · 1-D", "1 维 · 1 维"),
    "2d-1d": ("2-D · 1-D", "2 维 · 1 维"),
    "1d-2d": ("1-D · 2-D: unsqueeze, mm, squeeze_ in place",
              "1 维 · 2 维：unsqueeze、mm、原地 squeeze_"),
    "2d-2d": ("2-D · 2-D", "2 维 · 2 维"),
    "fold-a": ("fold the batch of a into one product", "把 a 的批维度折叠进一次乘法"),
    "fold-b": ("fold the batch of bᵀ into one product", "把 bᵀ 的批维度折叠进一次乘法"),
    "bmm": ("broadcast the batch dimensions, bmm", "广播批维度，再做 bmm"),
}


#: Why the batched case folded or not, in English and Chinese.
FOLD_REASONS = {
    "grad": ("the smaller operand requires grad", "较小的操作数需要梯度"),
    "view": ("the fold is a free view", "折叠只是零拷贝的视图"),
    "copy": ("the smaller operand needs no grad and the fold would copy",
             "较小的操作数不需要梯度，而折叠需要复制"),
}


@dataclass(frozen=True)
class MatmulPrediction:
    """What the rules say ``a @ b`` does: the product operator and the result's shape."""

    inner_op: str
    shape: tuple[int, ...]
    rule: str  # which row of the rule table applied: a key of RULES
    fold_reason: str | None = None  # for one ≥3-D and one ≤2-D operand: a key of FOLD_REASONS


def broadcast_batch(batch_a: tuple[int, ...], batch_b: tuple[int, ...]) -> tuple[int, ...]:
    """Broadcast two batch shapes: align on the right, pad with 1s, sizes equal or 1.

    A size of 1 stretches to the other size, whatever it is, 0 included; any other
    pair must be equal. So 0 against 1 gives 0 (not max(0, 1) = 1), and 0 against
    a size above 1 is an error.
    """
    length = max(len(batch_a), len(batch_b))
    padded_a = (1,) * (length - len(batch_a)) + tuple(batch_a)
    padded_b = (1,) * (length - len(batch_b)) + tuple(batch_b)
    result = []
    for size_a, size_b in zip(padded_a, padded_b, strict=True):
        if size_a != size_b and 1 not in (size_a, size_b):
            raise ValueError(f"batch shapes {batch_a} and {batch_b} do not broadcast")
        result.append(size_b if size_a == 1 else size_a)
    return tuple(result)


def result_shape(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> tuple[int, ...]:
    """The shape formula: broadcast(batch_a, batch_b) + (n if a is ≥2-D) + (p if b is ≥2-D)."""
    if not shape_a or not shape_b:
        raise ValueError("matmul needs operands of at least one dimension")
    inner_a = shape_a[-1]
    inner_b = shape_b[-2] if len(shape_b) >= 2 else shape_b[0]
    if inner_a != inner_b:
        raise ValueError(f"inner sizes differ: {shape_a} @ {shape_b}")
    shape = broadcast_batch(tuple(shape_a[:-2]), tuple(shape_b[:-2]))
    if len(shape_a) >= 2:
        shape += (shape_a[-2],)
    if len(shape_b) >= 2:
        shape += (shape_b[-1],)
    return shape


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides in elements of a C-contiguous array, as NumPy lays it out."""
    array = np.empty(shape, dtype=np.float64)
    return tuple(stride // array.itemsize for stride in array.strides)


def flattens_without_copy(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether all dimensions but the last can merge into one by a reshape that is a view.

    That needs ``stride[i] == stride[i + 1] * size[i + 1]`` for every leading dimension.
    """
    if int(np.prod(shape)) == 0:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def predict(
    shape_a: tuple[int, ...], shape_b: tuple[int, ...], grad_a: bool, grad_b: bool,
    folds: bool = True,
) -> MatmulPrediction:
    """The matmul rule table applied to two contiguous operands.

    ``grad_a`` and ``grad_b`` say which operands require a gradient; only the
    smaller operand's flag can change the product. ``folds=False`` is the table
    without the fold refinement (every batched case uses ``bmm``), which PyTorch
    does not follow.
    """
    dim_a, dim_b = len(shape_a), len(shape_b)
    shape = result_shape(shape_a, shape_b)
    if dim_a == 1 and dim_b == 1:
        return MatmulPrediction("dot", shape, "1d-1d")
    if dim_a == 2 and dim_b == 1:
        return MatmulPrediction("mv", shape, "2d-1d")
    if dim_a == 1 and dim_b == 2:
        return MatmulPrediction("mm", shape, "1d-2d")
    if dim_a == 2 and dim_b == 2:
        return MatmulPrediction("mm", shape, "2d-2d")
    if folds and max(dim_a, dim_b) >= 3 and min(dim_a, dim_b) <= 2:
        folded_op = "mm" if min(dim_a, dim_b) == 2 else "mv"
        if dim_a >= dim_b:
            # a's batch folds into rows; a contiguous a always flattens for free.
            rule, smaller_needs_grad = "fold-a", grad_b
            free = flattens_without_copy(shape_a, contiguous_strides(shape_a))
        else:
            # b is the larger one: fold bᵀ. For a 2-D a that would need a copy of the
            # result, so then it folds only for the gradient's sake.
            rule, smaller_needs_grad = "fold-b", grad_a
            transposed_shape = shape_b[:-2] + (shape_b[-1], shape_b[-2])
            strides = contiguous_strides(shape_b)
            transposed_strides = strides[:-2] + (strides[-1], strides[-2])
            free = dim_a == 1 and flattens_without_copy(transposed_shape, transposed_strides)
        if smaller_needs_grad:
            return MatmulPrediction(folded_op, shape, rule, "grad")
        if free:
            return MatmulPrediction(folded_op, shape, rule, "view")
        return MatmulPrediction("bmm", shape, "bmm", "copy")
    return MatmulPrediction("bmm", shape, "bmm")
