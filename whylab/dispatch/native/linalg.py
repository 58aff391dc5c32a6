"""The composites of the matrix family: ``matmul`` with torch.matmul's rules, ``outer`` and
``linear``.

Schemas, kernels and names: ``whylab/dispatch/native_functions.py``.

``matmul`` is a composite: it looks at the ranks of its operands and calls
``dot``, ``mv``, ``mm`` or ``bmm`` through the dispatcher (so a trace of
``a @ b`` shows ``matmul`` and then ``mm``), folding batch dimensions into
``mm`` when that needs no copy or when the smaller operand requires grad, and
broadcasting batch dimensions otherwise.
"""

from __future__ import annotations

from math import prod

from whylab._tensor.geometry import broadcast_shapes
from whylab.dispatch.operator import ops


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
    t1 = tensor1 if tensor1_larger else ops.transpose(tensor2, -2, -1)
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


def matmul_composite(tensor1, tensor2):
    dim1, dim2 = len(tensor1._sizes), len(tensor2._sizes)
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {dim1}D and {dim2}D"
        )
    if dim1 == 1 and dim2 == 1:
        return ops.dot(tensor1, tensor2)
    if dim1 == 2 and dim2 == 1:
        return ops.mv(tensor1, tensor2)
    if dim1 == 1 and dim2 == 2:
        return ops.squeeze_(ops.mm(ops.unsqueeze(tensor1, 0), tensor2), 0)
    if dim1 == 2 and dim2 == 2:
        return ops.mm(tensor1, tensor2)
    if _should_fold(tensor1, tensor2):
        transpose = dim2 > dim1
        t1 = ops.transpose(tensor2, -2, -1) if transpose else tensor1
        if not transpose:
            t2 = tensor2
        else:
            t2 = ops.transpose(tensor1, -2, -1) if dim1 == 2 else tensor1
        output_shape = list(t1._sizes[:-1])
        folded = prod(output_shape)
        t2_is_matrix = t2.ndim == 2
        if t2_is_matrix:
            output_shape.append(t2._sizes[1])
        t1_folded = ops.reshape(t1, (folded, t1._sizes[-1]))
        if t2_is_matrix:
            output = ops._unsafe_view(ops.mm(t1_folded, t2), tuple(output_shape))
            return ops.contiguous(ops.transpose(output, -2, -1)) if transpose else output
        return ops._unsafe_view(ops.mv(t1_folded, t2), tuple(output_shape))

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
    tensor1_expanded = ops.reshape(ops.expand(tensor1, batch + (n, m1)), (batch_count, n, m1))
    vector_rhs = dim2 == 1
    if vector_rhs:
        tensor2_expanded = ops.unsqueeze(
            ops.reshape(ops.expand(tensor2, batch + (m2,)), (batch_count, m2)), 2
        )
    else:
        tensor2_expanded = ops.reshape(ops.expand(tensor2, batch + (m2, p)), (batch_count, m2, p))
    output_shape = list(batch)
    if dim1 > 1:
        output_shape.append(n)
    if dim2 > 1:
        output_shape.append(p)
    product = ops.bmm(tensor1_expanded, tensor2_expanded)
    if vector_rhs:
        product = ops.squeeze(product, (-1,))
    return ops._unsafe_view(product, tuple(output_shape))


def outer_composite(self, vec2):
    """``self.reshape(n, 1) * vec2``, as torch composes it (nodes MulBackward0 over
    ViewBackward0; the dtypes promote as in ``mul``)."""
    for name, vector in (("self", self), ("vec2", vec2)):
        if vector.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {vector.ndim}-D")
    return ops.mul(ops.reshape(self, (self._sizes[0], 1)), vec2)


def _check_linear(input, weight, bias) -> None:
    if len(weight._sizes) != 2 or not input._sizes or input._sizes[-1] != weight._sizes[1]:
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


def linear_composite(input, weight, bias=None):
    """``input @ weight.T + bias`` as torch's ``linear`` computes it.

    With a bias and a 2-D input it is one ``addmm`` (node ``AddmmBackward0``);
    a contiguous input of another rank is flattened to rows first and the
    result viewed back. Otherwise it is ``matmul`` with ``weight.t()``, then
    an ``add`` of the bias. ``weight.t()`` is a view: BLAS reads the row-major
    weight as a transposed operand, nothing is copied.
    """
    _check_linear(input, weight, bias)
    weight_t = ops.t(weight)
    if bias is not None:
        if len(input._sizes) == 2:
            return ops.addmm(bias, input, weight_t)
        if input.is_contiguous():
            rows = ops.view(input, (-1, input._sizes[-1]))
            return ops.view(
                ops.addmm(bias, rows, weight_t), input._sizes[:-1] + (weight._sizes[0],)
            )
        return ops.matmul(input, weight_t) + bias
    return ops.matmul(input, weight_t)


def rmatmul(self, other):
    """``other @ self``."""
    return ops.matmul(other, self)
