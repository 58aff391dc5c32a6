"""The formulas of the strided-tensors page, written out in plain Python.

Nothing here touches the engine: a layout is a :class:`Layout` of sizes, strides
(in elements) and a storage offset, and every function computes what the page's
formulas say an operation does to it. The experiments run the real engine and
compare what it did against these predictions, so the two must stay independent:
this module deliberately does not import :mod:`whylab`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import prod


@dataclass(frozen=True)
class Layout:
    """Sizes, strides and storage offset: everything a view needs to find its elements."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    def __post_init__(self) -> None:
        if len(self.sizes) != len(self.strides):
            raise ValueError(f"{len(self.sizes)} sizes but {len(self.strides)} strides")

    def describe(self, lang: str = "en") -> str:
        """``sizes (2, 3) · strides (3, 1) · offset 0``: one line for tables (or in Chinese)."""
        sizes, strides = _tuple(self.sizes), _tuple(self.strides)
        if lang == "zh":
            return f"尺寸 {sizes} · 步幅 {strides} · 偏移 {self.offset}"
        return f"sizes {sizes} · strides {strides} · offset {self.offset}"


def _tuple(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


# ---------------------------------------------------------------- the address formula


def contiguous_strides(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides: s_j is the product of the sizes after dimension j."""
    return tuple(prod(sizes[j + 1:]) for j in range(len(sizes)))


def contiguous(sizes: tuple[int, ...]) -> Layout:
    """The layout of a freshly allocated tensor of these sizes."""
    return Layout(tuple(sizes), contiguous_strides(tuple(sizes)), 0)


def address(layout: Layout, index: tuple[int, ...]) -> int:
    """addr(i_0, ..., i_{k-1}) = offset + sum_j i_j s_j."""
    return layout.offset + sum(i * s for i, s in zip(index, layout.strides, strict=True))


def logical_indices(sizes: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every index of a tensor with these sizes, in row-major (printing) order."""
    return list(itertools.product(*(range(n) for n in sizes)))


def addresses(layout: Layout) -> list[int]:
    """The storage address of every element, in row-major logical order."""
    return [address(layout, index) for index in logical_indices(layout.sizes)]


def is_row_major(layout: Layout) -> bool:
    """Whether the layout's strides are the contiguous ones (dimensions of size 1 ignored)."""
    wanted = contiguous_strides(layout.sizes)
    return all(n == 1 or s == w for n, s, w in zip(layout.sizes, layout.strides, wanted,
                                                     strict=True))


# ---------------------------------------------------------------- views: new layouts


def transpose(layout: Layout, dim0: int, dim1: int) -> Layout:
    """Swap two dimensions: their sizes and their strides trade places."""
    return permute(layout, _swapped(len(layout.sizes), dim0, dim1))


def _swapped(ndim: int, dim0: int, dim1: int) -> tuple[int, ...]:
    order = list(range(ndim))
    order[dim0], order[dim1] = order[dim1], order[dim0]
    return tuple(order)


def permute(layout: Layout, order: tuple[int, ...]) -> Layout:
    """Dimension j of the result is dimension order[j] of the input."""
    return Layout(tuple(layout.sizes[d] for d in order), tuple(layout.strides[d] for d in order),
                  layout.offset)


def slice_dim(layout: Layout, dim: int, start: int, stop: int | None, step: int) -> Layout:
    """``x[..., start:stop:step, ...]``: the offset moves by start·s, the stride becomes step·s."""
    size = layout.sizes[dim]
    stop = size if stop is None else min(stop, size)
    start = min(start, stop)
    count = (stop - start + step - 1) // step
    sizes, strides = list(layout.sizes), list(layout.strides)
    sizes[dim], strides[dim] = count, layout.strides[dim] * step
    return Layout(tuple(sizes), tuple(strides), layout.offset + start * layout.strides[dim])


def select(layout: Layout, dim: int, index: int) -> Layout:
    """``x[..., index, ...]``: the dimension disappears and the offset moves by index·s."""
    sizes = layout.sizes[:dim] + layout.sizes[dim + 1:]
    strides = layout.strides[:dim] + layout.strides[dim + 1:]
    return Layout(sizes, strides, layout.offset + index * layout.strides[dim])


def unsqueeze(layout: Layout, dim: int) -> Layout:
    """Insert a dimension of size 1 (``x[:, None]``).

    Its stride never multiplies a nonzero index, so any value would do; PyTorch
    picks the stride the new dimension would have if it were contiguous with the
    next one (size·stride of the dimension it displaces, or 1 at the end).
    """
    stride = layout.sizes[dim] * layout.strides[dim] if dim < len(layout.sizes) else 1
    return Layout(layout.sizes[:dim] + (1,) + layout.sizes[dim:],
                  layout.strides[:dim] + (stride,) + layout.strides[dim:], layout.offset)


def expand(layout: Layout, target: tuple[int, ...]) -> Layout:
    """Stretch dimensions of size 1 to ``target`` (−1 keeps a size) by giving them stride 0."""
    if len(target) != len(layout.sizes):
        raise ValueError("this page only expands without adding dimensions")
    sizes, strides = [], []
    for size, stride, want in zip(layout.sizes, layout.strides, target, strict=True):
        if want == -1 or want == size:
            sizes.append(size)
            strides.append(stride)
        elif size == 1:
            sizes.append(want)
            strides.append(0)
        else:
            raise ValueError(f"cannot expand a dimension of size {size} to {want}")
    return Layout(tuple(sizes), tuple(strides), layout.offset)


def diagonal(layout: Layout, dim0: int = 0, dim1: int = 1) -> Layout:
    """Elements with i_dim0 = i_dim1: one dimension of stride s_dim0 + s_dim1, placed last."""
    kept = [d for d in range(len(layout.sizes)) if d not in (dim0, dim1)]
    sizes = tuple(layout.sizes[d] for d in kept) + (min(layout.sizes[dim0], layout.sizes[dim1]),)
    strides = tuple(layout.strides[d] for d in kept) + (
        layout.strides[dim0] + layout.strides[dim1],)
    return Layout(sizes, strides, layout.offset)


def unfold(layout: Layout, dim: int, size: int, step: int) -> Layout:
    """Windows of ``size`` elements every ``step`` along ``dim``; the window is a new last dim."""
    windows = (layout.sizes[dim] - size) // step + 1
    sizes, strides = list(layout.sizes), list(layout.strides)
    sizes[dim], strides[dim] = windows, layout.strides[dim] * step
    return Layout(tuple(sizes) + (size,), tuple(strides) + (layout.strides[dim],), layout.offset)


# ---------------------------------------------------------------- when can view() work?


@dataclass(frozen=True)
class Block:
    """A run of dimensions that merges into one: ``numel`` elements ``stride`` apart."""

    dims: tuple[int, ...]
    numel: int
    stride: int


def mergeable_blocks(layout: Layout, skip_size_one: bool = True) -> list[Block]:
    """Group neighbouring dimensions j, j+1 while s_j = s_{j+1} · n_{j+1}.

    Inside one block the elements sit at equal steps, so the block behaves like a
    single dimension of ``numel`` elements with the stride of its last dimension.
    Dimensions of size 1 are left out: their index is always 0, so their stride
    never enters the address formula, and the condition is tested between the
    neighbours on either side of them. ``skip_size_one=False`` applies the bare
    condition to every neighbouring pair instead (the rule without that
    exception, which refuses views PyTorch allows).
    """
    dims = [d for d, n in enumerate(layout.sizes) if n != 1 or not skip_size_one]
    blocks: list[Block] = []
    for d in dims:
        size, stride = layout.sizes[d], layout.strides[d]
        if blocks and layout.strides[blocks[-1].dims[-1]] == stride * size:
            last = blocks[-1]
            blocks[-1] = Block(last.dims + (d,), last.numel * size, stride)
        else:
            blocks.append(Block((d,), size, stride))
    return blocks


def view_layout(layout: Layout, new_sizes: tuple[int, ...],
                skip_size_one: bool = True) -> Layout | None:
    """The layout ``view(new_sizes)`` must have, or None when no strides can describe it.

    Each block of :func:`mergeable_blocks` must be covered exactly by a run of
    neighbouring new dimensions; inside the run the new strides are row-major,
    scaled by the block's stride. A run that would straddle two blocks has no
    single stride for its steps, and that is when ``view`` has to refuse. New
    dimensions of size 1 fit anywhere; they get the stride they would have if
    contiguous with the next dimension. Any stride would address the same cells
    there, and PyTorch picks differently, so compare with :func:`same_addressing`.
    ``skip_size_one`` is passed to :func:`mergeable_blocks`.
    """
    new_sizes = tuple(new_sizes)
    if prod(new_sizes) != prod(layout.sizes):
        raise ValueError(f"cannot view {prod(layout.sizes)} elements as {_tuple(new_sizes)}")
    if prod(new_sizes) == 0:
        return Layout(new_sizes, contiguous_strides(new_sizes), layout.offset)
    strides: list[int | None] = [None] * len(new_sizes)
    d = 0
    for block in mergeable_blocks(layout, skip_size_one):
        run: list[int] = []
        covered = 1
        while covered < block.numel and d < len(new_sizes):
            if new_sizes[d] != 1:
                covered *= new_sizes[d]
                run.append(d)
            d += 1
        if covered != block.numel:
            return None  # a new dimension straddles the end of this block
        step = block.stride
        for dim in reversed(run):
            strides[dim] = step
            step *= new_sizes[dim]
    if any(n != 1 for n in new_sizes[d:]):
        return None
    for dim in range(len(new_sizes) - 1, -1, -1):
        if strides[dim] is None:
            after = dim + 1
            strides[dim] = strides[after] * new_sizes[after] if after < len(new_sizes) else 1
    return Layout(new_sizes, tuple(s for s in strides if s is not None), layout.offset)


def same_addressing(a: Layout, b: Layout) -> bool:
    """Equal sizes, offset, and strides wherever a stride can matter (size > 1)."""
    return (a.sizes == b.sizes and a.offset == b.offset
            and all(n == 1 or sa == sb for n, sa, sb in zip(a.sizes, a.strides, b.strides,
                                                              strict=True)))
