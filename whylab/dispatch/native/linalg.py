"""Matrix products: mm, addmm, bmm, mv, dot, outer, matmul with torch.matmul's rules, linear.

``matmul`` is a composite: it looks at the ranks of its operands and calls
``dot``, ``mv``, ``mm`` or ``bmm`` through the dispatcher (so a trace of
``a @ b`` shows ``matmul`` and then ``mm``), folding batch dimensions into
``mm`` when that needs no copy or when the smaller operand requires grad, and
broadcasting batch dimensions otherwise.
"""

from __future__ import annotations

from math import prod

from whylab._tensor.geometry import broadcast_shapes
from whylab._tensor.tensor import tensor_method
from whylab.dispatch.native._registry import native
from whylab.dispatch.native.factory import _contiguous
from whylab.dispatch.native.shape import (
    _expand,
    _reshape,
    _squeeze,
    _t,
    _transpose,
    _unsafe_view,
    _unsqueeze,
    _view,
)
from whylab.kernels.cpu import linalg as cpu
from whylab.kernels.meta import linalg as meta

_mm = native("mm(Tensor self, Tensor mat2) -> Tensor", cpu.mm, meta.mm)
_bmm = native("bmm(Tensor self, Tensor mat2) -> Tensor", cpu.bmm, meta.bmm)
_mv = native("mv(Tensor self, Tensor vec) -> Tensor", cpu.mv, meta.mv)
_dot = native("dot(Tensor self, Tensor tensor) -> Tensor", cpu.dot, meta.dot)
_outer = native("outer(Tensor self, Tensor vec2) -> Tensor", cpu.outer, meta.outer)
_addmm = native(
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    cpu.addmm,
    meta.addmm,
)


def _should_fold(tensor1, tensor2) -> bool:
    """Whether matmul can fold the batch of the larger operand into ``mm``'s rows.

    Mirrors PyTorch's ``should_fold``. ``t1`` is the operand with more dimensions
    (transposed when it is the right one) and ``t2`` the other, which is never
    folded. Fold whenever ``t2`` requires grad, even at the price of a copy: then
    ``t2``'s gradient is one ``mm`` rather than a batch of products summed over
    the batch. Whether ``t1`` requires grad plays no part. Otherwise fold only
    when flattening ``t1``'s batch is a view, not a copy.
    """
    tensor1_larger = tensor1.ndim >= tensor2.ndim
    t1 = tensor1 if tensor1_larger else _transpose(tensor2, -2, -1)
    t2 = tensor2 if tensor1_larger else tensor1
    if not (t1.ndim >= 3 and t2.ndim <= 2):
        return False
    if t2.requires_grad:
        return True
    if tensor1.ndim == 2:
        return False
    if t1.numel() == 0:
        return True
    sizes, strides = t1._sizes, t1._strides
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(t1.ndim - 2))


def _matmul_composite(tensor1, tensor2):
    dim1, dim2 = tensor1.ndim, tensor2.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {dim1}D and {dim2}D"
        )
    if dim1 == 1 and dim2 == 1:
        return _dot(tensor1, tensor2)
    if dim1 == 2 and dim2 == 1:
        return _mv(tensor1, tensor2)
    if dim1 == 1 and dim2 == 2:
        return _squeeze(_mm(_unsqueeze(tensor1, 0), tensor2), (0,))
    if dim1 == 2 and dim2 == 2:
        return _mm(tensor1, tensor2)
    if _should_fold(tensor1, tensor2):
        transpose = dim2 > dim1
        t1 = _transpose(tensor2, -2, -1) if transpose else tensor1
        if not transpose:
            t2 = tensor2
        else:
            t2 = _transpose(tensor1, -2, -1) if dim1 == 2 else tensor1
        output_shape = list(t1._sizes[:-1])
        folded = prod(output_shape)
        t2_is_matrix = t2.ndim == 2
        if t2_is_matrix:
            output_shape.append(t2._sizes[1])
        t1_folded = _reshape(t1, (folded, t1._sizes[-1]))
        if t2_is_matrix:
            output = _unsafe_view(_mm(t1_folded, t2), tuple(output_shape))
            return _contiguous(_transpose(output, -2, -1)) if transpose else output
        return _unsafe_view(_mv(t1_folded, t2), tuple(output_shape))

    n = tensor1._sizes[-2] if dim1 > 1 else 1
    m1 = tensor1._sizes[-1]
    batch1 = tensor1._sizes[: max(dim1 - 2, 0)]
    m2 = tensor2._sizes[-2] if dim2 > 1 else tensor2._sizes[0]
    p = tensor2._sizes[-1] if dim2 > 1 else 1
    batch2 = tensor2._sizes[: max(dim2 - 2, 0)]
    if m1 != m2:
        raise RuntimeError(
            f"matmul: Expected size for first two dimensions of batch2 tensor to be: "
            f"[{prod(broadcast_shapes(batch1, batch2, 'matmul'))}, {m1}] but got: "
            f"[{prod(broadcast_shapes(batch1, batch2, 'matmul'))}, {m2}]."
        )
    batch = broadcast_shapes(batch1, batch2, "matmul")
    batch_count = prod(batch)
    tensor1_expanded = _reshape(_expand(tensor1, batch + (n, m1)), (batch_count, n, m1))
    vector_rhs = dim2 == 1
    if vector_rhs:
        tensor2_expanded = _unsqueeze(
            _reshape(_expand(tensor2, batch + (m2,)), (batch_count, m2)), 2
        )
    else:
        tensor2_expanded = _reshape(_expand(tensor2, batch + (m2, p)), (batch_count, m2, p))
    output_shape = list(batch)
    if dim1 > 1:
        output_shape.append(n)
    if dim2 > 1:
        output_shape.append(p)
    product = _bmm(tensor1_expanded, tensor2_expanded)
    if vector_rhs:
        product = _squeeze(product, (-1,))
    return _unsafe_view(product, tuple(output_shape))


_matmul = native("matmul(Tensor self, Tensor other) -> Tensor", composite=_matmul_composite)


def _check_linear(input, weight, bias) -> None:
    if weight.ndim != 2 or input.ndim == 0 or input._sizes[-1] != weight._sizes[1]:
        raise RuntimeError(
            f"linear: input of shape {tuple(input._sizes)} does not fit weight of shape "
            f"{tuple(weight._sizes)} (need input (*, in_features) and weight "
            "(out_features, in_features))"
        )
    if bias is not None and tuple(bias._sizes) != (weight._sizes[0],):
        raise RuntimeError(
            f"linear: bias of shape {tuple(bias._sizes)} does not fit weight of shape "
            f"{tuple(weight._sizes)} (need ({weight._sizes[0]},))"
        )
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and tensor.dtype is not input.dtype:
            raise RuntimeError(
                f"linear: input and {name} must have the same dtype, but got {input.dtype} "
                f"and {tensor.dtype}"
            )


def _linear_composite(input, weight, bias=None):
    """``input @ weight.T + bias`` as torch's ``linear`` computes it.

    With a bias and a 2-D input it is one ``addmm`` (node ``AddmmBackward0``);
    a contiguous input of another rank is flattened to rows first and the
    result viewed back. Otherwise it is ``matmul`` with ``weight.t()``, then
    an ``add`` of the bias. ``weight.t()`` is a view: BLAS reads the row-major
    weight as a transposed operand, nothing is copied.
    """
    _check_linear(input, weight, bias)
    weight_t = _t(weight)
    if bias is not None:
        if input.ndim == 2:
            return _addmm(bias, input, weight_t)
        if input.is_contiguous():
            rows = _view(input, (-1, input._sizes[-1]))
            return _view(_addmm(bias, rows, weight_t), input._sizes[:-1] + (weight._sizes[0],))
        return _matmul(input, weight_t) + bias
    return _matmul(input, weight_t)


_linear = native(
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", composite=_linear_composite
)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape."""
    return _addmm(input, mat1, mat2, beta, alpha)


def mm(input, mat2):
    """Matrix product of two 2-D tensors."""
    return _mm(input, mat2)


def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors with the same batch size."""
    return _bmm(input, mat2)


def mv(input, vec):
    """Matrix-vector product of a 2-D and a 1-D tensor."""
    return _mv(input, vec)


def dot(input, tensor):
    """Inner product of two 1-D tensors (a 0-dim result)."""
    return _dot(input, tensor)


def outer(input, vec2):
    """Outer product of two 1-D tensors."""
    return _outer(input, vec2)


ger = outer


def matmul(input, other):
    """``torch.matmul``: dot, mv, mm or bmm depending on the ranks, with batch broadcasting."""
    return _matmul(input, other)


tensor_method("addmm")(addmm)
tensor_method("mm")(mm)
tensor_method("bmm")(bmm)
tensor_method("mv")(mv)
tensor_method("dot")(dot)
tensor_method("outer", "ger")(outer)
tensor_method("matmul")(matmul)


@tensor_method("__matmul__")
def _method_matmul(self, other):
    return _matmul(self, other)


@tensor_method("__rmatmul__")
def _method_rmatmul(self, other):
    return _matmul(other, self)
