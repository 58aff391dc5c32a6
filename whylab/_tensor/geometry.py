"""Sizes, strides and offsets: the arithmetic behind views, shared by every backend.

Everything here works on plain tuples of ints and knows nothing of data, so the
CPU kernels and the Meta kernels compute shapes and strides with the same code.
Strides are counted in elements, as ``Tensor.stride()`` reports them.
"""

from __future__ import annotations

from functools import lru_cache
from math import prod


def format_shape(sizes) -> str:
    """``[2, 3]`` — the way PyTorch prints a shape inside error messages."""
    return "[" + ", ".join(str(s) for s in sizes) + "]"


@lru_cache(maxsize=4096)
def contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides. A size-0 dimension counts as 1, as in PyTorch."""
    strides = [0] * len(sizes)
    step = 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = step
        step *= max(sizes[d], 1)
    return tuple(strides)


def is_contiguous(sizes, strides) -> bool:
    """Row-major contiguity, ignoring size-1 dimensions (PyTorch's rule)."""
    if 0 in sizes:
        return True
    expected = 1
    for d in range(len(sizes) - 1, -1, -1):
        size = sizes[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(sizes, strides) -> bool:
    """True when the elements fill a block of memory exactly once, in some order."""
    if len(sizes) == 1:
        return sizes[0] < 2 or strides[0] == 1
    order = sorted(range(len(sizes)), key=lambda d: (sizes[d] < 2, strides[d]))
    required = 1
    for d in order:
        if sizes[d] < 2:
            return True
        if strides[d] != required:
            return False
        required *= sizes[d]
    return True


def is_channels_last_contiguous(sizes, strides) -> bool:
    """Whether a 4-D tensor is dense in NHWC order (C fastest), size-1 dims ignored."""
    if len(sizes) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def channels_last_strides(sizes) -> tuple[int, ...]:
    """NHWC strides for a 4-D shape (PyTorch's ``get_channels_last_strides_2d``)."""
    strides = [0] * 4
    strides[1] = 1
    strides[3] = sizes[1]
    strides[2] = strides[3] * sizes[3]
    strides[0] = strides[2] * sizes[2]
    return tuple(strides)


def wrap_dim(dim: int, ndim: int, op: str = "") -> int:
    """Turn a possibly negative dimension into an index, rejecting out-of-range ones."""
    bound = max(ndim, 1)  # a 0-dim tensor accepts dim 0 and -1
    if not -bound <= dim < bound:
        prefix = f"{op}: " if op else ""
        raise IndexError(
            f"{prefix}Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], "
            f"but got {dim})"
        )
    return dim + bound if dim < 0 else dim


def wrap_dims(dims, ndim: int, op: str = "") -> tuple[int, ...]:
    """Wrap a tuple of dimensions and reject repeats."""
    wrapped = tuple(wrap_dim(d, ndim, op) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"{op}: dim {wrapped} appears multiple times in the list of dims")
    return wrapped


# ------------------------------------------------------------------ broadcasting


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...], op: str = "") -> tuple[int, ...]:
    """The shape two operands broadcast to; the error names the op and both shapes."""
    if a == b:
        return a
    ndim = max(len(a), len(b))
    result = []
    for i in range(-ndim, 0):
        size_a = a[i] if -i <= len(a) else 1
        size_b = b[i] if -i <= len(b) else 1
        if size_a == size_b or size_b == 1:
            result.append(size_a)
        elif size_a == 1:
            result.append(size_b)
        else:
            prefix = f"{op}: " if op else ""
            raise RuntimeError(
                f"{prefix}The size of tensor a ({size_a}) must match the size of tensor b "
                f"({size_b}) at non-singleton dimension {ndim + i} "
                f"(shapes {format_shape(a)} and {format_shape(b)})"
            )
    return tuple(result)


def broadcast_all(shapes, op: str = "") -> tuple[int, ...]:
    """Broadcast any number of shapes together."""
    result: tuple[int, ...] = ()
    for shape in shapes:
        result = broadcast_shapes(result, tuple(shape), op)
    return result


def expand_geometry(sizes, strides, target, op: str = "expand"):
    """Sizes and strides of ``expand(target)``: stretched dimensions get stride 0.

    New leading dimensions behave like size-1 dimensions whose stride continues
    the one after them (so a new dimension of size 1 keeps a nonzero stride,
    as in PyTorch's ``inferExpandGeometry``).
    """
    target = tuple(target)
    ndim, tensor_ndim = len(target), len(sizes)
    if ndim < tensor_ndim:
        raise RuntimeError(
            f"{op}: the number of sizes provided ({ndim}) must be greater or equal to "
            f"the number of dimensions in the tensor ({tensor_ndim})"
        )
    new_sizes, new_strides = [0] * ndim, [0] * ndim
    for i in range(ndim - 1, -1, -1):
        dim = tensor_ndim - ndim + i
        if dim >= 0:
            size, stride = sizes[dim], strides[dim]
        else:
            size = 1
            stride = new_sizes[i + 1] * new_strides[i + 1] if i + 1 < ndim else 1
        want = target[i]
        if want == -1:
            if dim < 0:
                raise RuntimeError(
                    f"{op}: The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            want = size
        if size != want:
            if size != 1:
                raise RuntimeError(
                    f"{op}: The expanded size of the tensor ({want}) must match the existing size "
                    f"({size}) at non-singleton dimension {i}.  Target sizes: "
                    f"{format_shape(target)}.  Tensor sizes: {format_shape(sizes)}"
                )
            size, stride = want, 0
        new_sizes[i], new_strides[i] = size, stride
    return tuple(new_sizes), tuple(new_strides)


# -------------------------------------------------------------------- view / reshape


def infer_size(shape, numel: int, op: str = "view") -> tuple[int, ...]:
    """Replace a single -1 in ``shape`` so that the element count is ``numel``."""
    if -1 not in shape and prod(shape) == numel and (not shape or min(shape) >= 0):
        return tuple(shape)
    shape = tuple(int(s) for s in shape)
    infer_at = None
    known = 1
    for i, size in enumerate(shape):
        if size == -1:
            if infer_at is not None:
                raise RuntimeError(f"{op}: only one dimension can be inferred")
            infer_at = i
        elif size < 0:
            raise RuntimeError(f"{op}: invalid shape dimension {size}")
        else:
            known *= size
    if infer_at is None:
        if known == numel:
            return shape
    elif known > 0 and numel % known == 0:
        return shape[:infer_at] + (numel // known,) + shape[infer_at + 1 :]
    raise RuntimeError(f"{op}: shape '{format_shape(shape)}' is invalid for input of size {numel}")


def view_strides(old_sizes: tuple, old_strides: tuple, new_sizes: tuple):
    """Strides that let ``new_sizes`` view memory laid out as (old_sizes, old_strides).

    Returns None when no such strides exist — then ``view`` fails and ``reshape``
    copies. This is PyTorch's ``computeStride``: walk the old dimensions from the
    last, grouping them into *chunks* that are contiguous with each other; each
    chunk must be covered exactly by a run of new dimensions.
    """
    if not old_sizes:
        return (1,) * len(new_sizes)
    if old_strides == contiguous_strides(old_sizes):
        return contiguous_strides(new_sizes)  # the walk below gives the same answer
    numel = prod(old_sizes)
    if numel == 0:
        if tuple(old_sizes) == tuple(new_sizes):
            return tuple(old_strides)
        return contiguous_strides(tuple(new_sizes))

    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_sizes) - 1, -1, -1):
        tensor_numel *= old_sizes[tensor_d]
        chunk_ends = tensor_d == 0 or (
            old_sizes[tensor_d - 1] != 1
            and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        )
        if chunk_ends:
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


VIEW_ERROR = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)

#: PyTorch's words for a write into elements that alias each other (an expand).
INTERNAL_OVERLAP_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def has_internal_overlap(sizes, strides) -> bool:
    """Whether elements provably alias each other: a dimension of stride 0 and size above 1
    (the case PyTorch's ``assert_no_internal_overlap`` proves cheaply)."""
    return any(stride == 0 and size > 1 for size, stride in zip(sizes, strides, strict=True))


# --------------------------------------------------------------- elementwise layout


def elementwise_strides(shape, operands) -> tuple[int, ...]:
    """Strides PyTorch's TensorIterator gives the output of an elementwise op.

    ``operands`` are the (sizes, strides) of the tensor inputs. The output keeps
    the memory order of its inputs: if they are all contiguous it is contiguous;
    if they are all channels-last (NHWC) it is channels-last; if they share one
    dense layout it copies it; otherwise dimensions are sorted by the inputs'
    strides (first input with an opinion wins, broadcast dimensions have none)
    and the output is dense in that order.
    """
    shape = tuple(shape)
    ndim = len(shape)
    same_shape = all(tuple(sizes) == shape for sizes, _ in operands)
    if same_shape:
        if all(is_contiguous(sizes, strides) for sizes, strides in operands):
            return contiguous_strides(shape)
        if all(is_channels_last_contiguous(sizes, strides) for sizes, strides in operands):
            return channels_last_strides(shape)
        first_strides = tuple(operands[0][1])
        if all(
            is_non_overlapping_and_dense(sizes, strides) and tuple(strides) == first_strides
            for sizes, strides in operands
        ):
            return first_strides
    if ndim <= 1:
        return contiguous_strides(shape)

    aligned = []
    for sizes, strides in operands:
        lead = ndim - len(sizes)
        row = [0] * ndim
        for i, size in enumerate(sizes):
            if not (size == 1 and shape[lead + i] != 1):
                row[lead + i] = strides[i]
        aligned.append(row)

    def should_swap(dim0: int, dim1: int) -> int:
        for row in aligned:
            stride0, stride1 = row[dim0], row[dim1]
            if stride0 == 0 or stride1 == 0:
                continue
            if stride0 < stride1:
                return -1
            if stride0 > stride1:
                return 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # perm[0] is the fastest-moving dimension
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break

    if perm == list(range(ndim - 1, -1, -1)):
        return contiguous_strides(shape)
    strides = [0] * ndim
    step = 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)
