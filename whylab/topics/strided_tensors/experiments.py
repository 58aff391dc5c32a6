"""Experiments for "strided tensors": views as sizes, strides and an offset over one storage.

Every experiment runs the real whylab engine. What the engine does is compared
with the page's formulas, implemented separately in :mod:`.layout` (which does
not import the engine), and with NumPy doing the same indexing. The comparisons
are small functions (:func:`address_check`, :func:`layout_check`, ...) so tests
can hand them wrong inputs and watch them fail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

import whylab
from whylab.explorer.experiment import (
    Check,
    Control,
    GraphDiagram,
    GraphNode,
    Metric,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.topics.strided_tensors import layout as formulas
from whylab.topics.strided_tensors.chains import CHAINS, STARTING_LAYOUTS, TARGET_SHAPES
from whylab.topics.strided_tensors.costs import copy_cost, mm_operands
from whylab.topics.strided_tensors.writes import expanded_write

MARKER = -1000.0  # written through a view; random normal storage never holds it
MAX_LISTED_CELLS = 64  # storage-map table rows shown (the checks cover every cell)
# Legend entries of the view diagram; code, so they read the same in both languages.
CONTIGUOUS_GROUP = "✓ is_contiguous()"
STRIDED_GROUP = "✗ is_contiguous()"
STORAGE_GROUP = "untyped_storage()"
# Their colours: the storage grey (bookkeeping), contiguous views green, strided orange.
VIEW_COLOURS = {STORAGE_GROUP: "grey", CONTIGUOUS_GROUP: "green", STRIDED_GROUP: "orange"}


# ---------------------------------------------------------------- reading the engine


def layout_of(tensor: whylab.Tensor) -> formulas.Layout:
    """The engine's own description of a tensor: sizes, strides, storage offset."""
    return formulas.Layout(tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset())


def read_every_element(tensor: whylab.Tensor) -> list[float]:
    """Each element read through the view by indexing, in row-major logical order."""
    return [tensor[index].item() for index in formulas.logical_indices(tuple(tensor.shape))]


def storage_ptr(tensor: whylab.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def _fmt(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


# ---------------------------------------------------------------- comparisons


def _as_the_page_computes(layout: formulas.Layout) -> formulas.Layout:
    """The layout the address formula is applied to: itself, or under the control
    ``address-without-offset`` the same sizes and strides with the offset dropped."""
    if control_active("address-without-offset"):
        return formulas.Layout(layout.sizes, layout.strides, 0)
    return layout


def formula_address(layout: formulas.Layout, index: tuple[int, ...]) -> int:
    """The page's address formula for one element."""
    return formulas.address(_as_the_page_computes(layout), index)


def formula_addresses(layout: formulas.Layout) -> list[int]:
    """The page's address formula for every element, in row-major logical order."""
    return formulas.addresses(_as_the_page_computes(layout))


def address_mismatches(values: Sequence[float], storage: np.ndarray,
                       layout: formulas.Layout) -> int:
    """How many elements differ from storage[offset + Σ i_j s_j] (by the layout's formula).

    An element whose formula address falls outside the storage counts as a mismatch.
    """
    cells = formula_addresses(layout)
    if len(cells) != len(values):
        return max(len(cells), len(values))
    wrong = 0
    for value, cell in zip(values, cells, strict=True):
        if not 0 <= cell < storage.shape[0] or storage[cell] != value:
            wrong += 1
    return wrong


def address_check(readings: Sequence[tuple[Sequence[float], formulas.Layout]],
                  storage: np.ndarray) -> Check:
    """Every element read through every view equals the storage cell its formula names."""
    elements = sum(len(values) for values, _ in readings)
    wrong = sum(address_mismatches(values, storage, layout) for values, layout in readings)
    return Check(
        id="address-formula",
        name=T("Every element read through each view equals storage[offset + Σ iⱼ sⱼ], "
               "computed from that view's own sizes, strides and offset",
               "通过每个视图读出的每个元素，都等于按该视图自己的尺寸、步幅和偏移"
               "算出的 storage[offset + Σ iⱼ sⱼ]"),
        passed=wrong == 0 and elements > 0,
        measured=T(f"{elements} elements, {wrong} mismatches",
                   f"{elements} 个元素，{wrong} 个不符"),
        expected=T("0 mismatches", "0 个不符"),
    )


def layout_check(engine: Sequence[formulas.Layout], predicted: Sequence[formulas.Layout]) -> Check:
    """The engine's sizes, strides and offset equal the formulas' prediction at every step.

    Layout 0 is the starting tensor (contiguous strides), then one per step.
    """
    differing = [i for i, (e, p) in enumerate(zip(engine, predicted, strict=False))
                 if e != p]
    passed = not differing and len(engine) == len(predicted) > 0
    if passed:
        measured = T(f"{len(engine)} layouts agree; last: {engine[-1].describe('en')}",
                     f"{len(engine)} 个布局一致；最后一个：{engine[-1].describe('zh')}")
    elif differing:
        measured = T(f"layout(s) {differing} differ", f"布局 {differing} 不同")
    else:
        measured = T(f"{len(engine)} layouts for {len(predicted)} predictions",
                     f"{len(engine)} 个布局对应 {len(predicted)} 个预测")
    return Check(
        id="layouts-as-predicted",
        name=T("The starting strides and the sizes, strides and offset after each step are "
               "those the formulas predict",
               "初始步幅，以及每一步之后的尺寸、步幅和偏移，都与公式的预测一致"),
        passed=passed,
        measured=measured,
        expected=T(f"{len(predicted)} layouts as predicted",
                   f"{len(predicted)} 个布局都如预测"),
    )


def shared_storage_check(base_ptr: int, base_cells: int, view_ptrs: Sequence[int],
                         view_cells: Sequence[int]) -> Check:
    """Every view points at the base's storage (same address, same size): nothing was copied."""
    same = all(p == base_ptr for p in view_ptrs) and all(c == base_cells for c in view_cells)
    return Check(
        id="one-storage",
        name=T("Each view shares the base's storage: same untyped_storage().data_ptr(), "
               "no new buffer",
               "每个视图都与原张量共用同一块存储：untyped_storage().data_ptr() 相同，没有新缓冲区"),
        passed=bool(same and view_ptrs),
        measured=(T(f"{len(view_ptrs)} view(s) on the same {base_cells}-element storage",
                    f"{len(view_ptrs)} 个视图共用同一块 {base_cells} 个元素的存储") if same
                  else T("a view has its own storage", "有视图拥有自己的存储")),
        expected=T("one storage", "一块存储"),
    )


def write_through_check(index: str, changed_cells: Sequence[int], predicted_cell: int | None,
                        base_reads_marker: bool) -> Check:
    """A write through the view changed exactly the predicted cell, and the base sees it."""
    if predicted_cell is None:
        passed = False
        measured = T("the view is empty: nothing to write", "视图为空：没有可写的元素")
    else:
        passed = list(changed_cells) == [predicted_cell] and base_reads_marker
        measured = T(f"changed cells {list(changed_cells)}; base reads the new value: "
                     f"{'yes' if base_reads_marker else 'no'}",
                     f"改变的单元 {list(changed_cells)}；原张量读到新值："
                     f"{'是' if base_reads_marker else '否'}")
    return Check(
        id="write-through",
        name=T(f"Writing view element {index} changes exactly the storage cell the formula "
               "names, and the base tensor reads the new value",
               f"写入视图元素 {index}，只改变公式指出的那个存储单元，原张量也读到新值"),
        passed=bool(passed),
        measured=measured,
        expected=T(f"changed cells [{predicted_cell}]", f"改变的单元 [{predicted_cell}]"),
    )


def values_check(name, values: Sequence[float], reference: np.ndarray,
                 check_id: str = "values-as-numpy") -> Check:
    """Exact equality of the engine's values with NumPy's (both only move numbers around)."""
    reference = np.asarray(reference, dtype=float).reshape(-1)
    same = len(values) == reference.shape[0] and bool(np.array_equal(values, reference))
    return Check(id=check_id, name=name, passed=same and len(values) > 0,
                 measured=T(f"{len(values)} values, {'identical' if same else 'different'}",
                            f"{len(values)} 个数值，{'完全相同' if same else '不同'}"),
                 expected=T("identical", "完全相同"))


# ---------------------------------------------------------------- view-chain


def _chain_diagram(tensors: Sequence[whylab.Tensor], codes: Sequence[str]) -> GraphDiagram:
    """The storage on the left, every tensor of the chain on the right, pointing into it."""
    storage = tensors[0].untyped_storage()
    nodes = [GraphNode(id="storage", label="untyped_storage()",
                       detail=T(f"{storage.size} elements, float64",
                              f"{storage.size} 个 float64 元素"),
                       group=STORAGE_GROUP,
                       layer=0, order=(len(tensors) - 1) / 2)]
    for row, (tensor, code) in enumerate(zip(tensors, codes, strict=True)):
        shown = layout_of(tensor)
        nodes.append(GraphNode(
            id=f"t{row}", label=code,
            detail=f"size() {_fmt(shown.sizes)} stride() {_fmt(shown.strides)} "
                   f"storage_offset() {shown.offset}",
            group=CONTIGUOUS_GROUP if tensor.is_contiguous() else STRIDED_GROUP,
            layer=1, order=row))
    return GraphDiagram(
        title=T("Every tensor in the chain is a view of the same storage",
                "链上的每个张量都是同一块存储的视图"),
        nodes=nodes, edges=[("storage", f"t{row}", "") for row in range(len(tensors))],
        direction="LR", group_colours=VIEW_COLOURS)


def _storage_map(final_layout: formulas.Layout, values: np.ndarray) -> Table:
    """One row per storage cell: its value and which elements of the final view read it."""
    readers: dict[int, list[str]] = {}
    for index in formulas.logical_indices(final_layout.sizes):
        readers.setdefault(formulas.address(final_layout, index), []).append(_fmt(index))
    return Table(
        title=T("Where the final view's elements live in the flat storage",
                "最终视图的元素位于扁平存储的哪些位置"),
        columns=[T("storage address", "存储地址"), T("value", "数值"),
                 T("view elements reading it", "读取它的视图元素")],
        rows=[[cell, f"{values[cell]:.3f}", " ".join(readers.get(cell, ["·"]))]
              for cell in range(min(values.shape[0], MAX_LISTED_CELLS))],
    )


def _write_one_element(x: whylab.Tensor, view: whylab.Tensor, seed: int) -> Check:
    """Write MARKER into one element of ``view`` (picked by the seed) and see where it lands."""
    shown = layout_of(view)
    indices = formulas.logical_indices(shown.sizes)
    if not indices:
        return write_through_check("()", [], None, False)
    index = indices[int(np.random.default_rng(seed).integers(len(indices)))]
    cell = formula_address(shown, index)
    storage = x.untyped_storage().data  # the flat buffer itself: writes show up here
    before = storage.copy()
    view[index].fill_(MARKER)
    changed = np.flatnonzero(storage != before).tolist()
    base_index = tuple(int(i) for i in np.unravel_index(cell, tuple(x.shape)))
    return write_through_check(_fmt(index), changed, cell, x[base_index].item() == MARKER)


def run_step(step, tensor: whylab.Tensor) -> whylab.Tensor:
    """One view operation in the engine, or a wrong version of it under a control.

    ``copying-views``: every step copies its result into fresh row-major storage
    (a transpose that moves the data). ``transpose-by-view``: a transpose is done
    by ``view`` with the swapped sizes, which reinterprets the storage in order
    instead of swapping strides -- a classic bug.
    """
    if control_active("transpose-by-view") and step.code.startswith(".transpose"):
        sizes = list(tensor.shape)
        sizes[0], sizes[1] = sizes[1], sizes[0]
        return tensor.view(*sizes)
    result = step.engine(tensor)
    if control_active("copying-views"):
        return result.contiguous()
    return result


@experiment(
    name="view-chain",
    title=T("A chain of views over one storage", "同一块存储上的一串视图"),
    description=T(
        "Applies a chain of view operations to a tensor of random numbers and shows, after each "
        "step, the sizes, strides and storage offset the engine reports, then where in the flat "
        "storage every element of the final view lives.",
        "对一个随机数张量依次施加几个视图操作，列出每一步之后引擎报告的尺寸、步幅和存储偏移，"
        "再列出最终视图的每个元素位于扁平存储中的哪个位置。",
    ),
    params=[
        Param("chain", "choice", "transpose", T("operations", "操作"),
              choices=tuple(CHAINS), choice_labels=tuple(T(c.code(), c.code())
                                                         for c in CHAINS.values())),
        Param("n0", "int", 2, T("size n₀", "尺寸 n₀"), minimum=2, maximum=5, step=1),
        Param("n1", "int", 3, T("size n₁", "尺寸 n₁"), minimum=2, maximum=5, step=1),
        Param("n2", "int", 4, T("size n₂", "尺寸 n₂"), minimum=2, maximum=5, step=1),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("copying-views",
                T("the transpose copies the data into new storage instead of returning a view",
                  "转置把数据复制到新存储里，而不是返回视图"),
                breaks=("layouts-as-predicted", "one-storage", "write-through")),
        Control("transpose-by-view",
                T("the transpose reinterprets the storage with view(n₁, n₀, n₂) instead of "
                  "swapping the strides",
                  "转置用 view(n₁, n₀, n₂) 重新解读存储，而不是交换步幅"),
                breaks=("layouts-as-predicted", "values-as-numpy")),
        Control("address-without-offset",
                T("the address formula leaves out the storage offset (chain x[1][:, 1::2].t(), "
                  "whose offset is not 0)",
                  "地址公式漏掉了存储偏移（操作链 x[1][:, 1::2].t()，其偏移不为 0）"),
                breaks=("address-formula", "write-through"),
                params={"chain": "select-slice-transpose"}),
    ],
    metrics=[
        Metric("elements_in_view", T("elements of the final view", "最终视图的元素个数")),
        Metric(
            "distinct_cells_read",
            T("distinct storage cells they read", "它们读取的不同存储单元个数"),
        ),
        Metric("storage_cells", T("cells in the storage", "存储中的单元个数")),
        Metric("final_is_contiguous", T("final view is contiguous", "最终视图是连续的")),
    ],
)
def view_chain(chain: str, n0: int, n1: int, n2: int, seed: int) -> Result:
    operations = CHAINS[chain]
    generator = whylab.Generator().manual_seed(seed)
    x = whylab.randn(n0, n1, n2, generator=generator, dtype=whylab.float64)
    storage_values = x.untyped_storage().data.copy()  # before anything writes to it

    # Walk the chain three ways at once: the engine, the page's formulas, NumPy.
    tensors, codes = [x], ["x"]
    predicted = [formulas.contiguous((n0, n1, n2))]
    expected_values = storage_values.reshape(n0, n1, n2)
    for step in operations.steps:
        tensors.append(run_step(step, tensors[-1]))
        codes.append(codes[-1] + step.code)
        predicted.append(step.predict(predicted[-1]))
        expected_values = step.reference(expected_values)
    views = tensors[1:]
    readings = [(read_every_element(t), layout_of(t)) for t in tensors]

    checks = [
        address_check(readings, storage_values),
        layout_check([layout_of(t) for t in tensors], predicted),
        shared_storage_check(storage_ptr(x), x.untyped_storage().size,
                             [storage_ptr(v) for v in views],
                             [v.untyped_storage().size for v in views]),
        values_check(T("The final view holds the same values as the same indexing in NumPy",
                       "最终视图的数值与 NumPy 做同样索引得到的完全相同"),
                     readings[-1][0], expected_values),
        _write_one_element(x, views[-1], seed),
    ]

    final_layout = layout_of(views[-1])
    cells = formulas.addresses(final_layout)
    steps_table = Table(
        title=T("Layout after each step", "每一步之后的布局"),
        columns=[T("expression", "表达式"), T("sizes", "尺寸"), T("strides", "步幅"),
                 T("offset", "偏移"), T("is_contiguous()", "is_contiguous()")],
        rows=[[code, _fmt(t.shape), _fmt(t.stride()), t.storage_offset(), t.is_contiguous()]
              for code, t in zip(codes, tensors, strict=True)],
    )
    notes = []
    if storage_values.shape[0] > MAX_LISTED_CELLS:
        notes.append(T(f"The storage map lists the first {MAX_LISTED_CELLS} of "
                       f"{storage_values.shape[0]} cells; the checks cover all of them.",
                       f"存储对照表只列出 {storage_values.shape[0]} 个单元中的前 "
                       f"{MAX_LISTED_CELLS} 个；校验覆盖全部单元。"))
    return Result(
        checks=checks,
        figures=[_chain_diagram(tensors, codes)],
        tables=[steps_table, _storage_map(final_layout, storage_values)],
        notes=notes,
        metrics={"elements_in_view": len(cells), "distinct_cells_read": len(set(cells)),
                 "storage_cells": int(storage_values.shape[0]),
                 "final_is_contiguous": views[-1].is_contiguous()},
    )


# ---------------------------------------------------------------- view-or-copy


def numpy_can_view(array: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether NumPy can reshape without copying (its own, separate implementation)."""
    try:
        np.reshape(array, shape, copy=False)
    except ValueError:
        return False
    return True


def predictions_check(check_id: str, name, outcomes: Sequence[bool], predictions: Sequence[bool],
                      shapes: Sequence[str]) -> Check:
    """Pass when every observed yes/no equals the predicted one."""
    wrong = [s for s, o, p in zip(shapes, outcomes, predictions, strict=True) if o != p]
    return Check(id=check_id, name=name, passed=not wrong and len(outcomes) > 0,
                 measured=(T(f"{len(outcomes)} target shapes agree",
                             f"{len(outcomes)} 个目标形状都一致") if not wrong
                           else T(f"disagree at {', '.join(wrong)}",
                                  f"在 {', '.join(wrong)} 处不一致")),
                 expected=T(f"all {len(outcomes)} agree", f"{len(outcomes)} 个全部一致"))


def predict_view(source: formulas.Layout, shape: tuple[int, ...],
                 with_size_one_exception: bool) -> formulas.Layout | None:
    """The merging rule's answer for ``view(shape)`` (under the control
    ``rule-ignores-strides``, the answer for a contiguous tensor of the same sizes)."""
    if control_active("rule-ignores-strides"):
        source = formulas.contiguous(source.sizes)
    return formulas.view_layout(source, shape, with_size_one_exception)


def reshape(x: whylab.Tensor, shape: tuple[int, ...]) -> whylab.Tensor:
    """``x.reshape(shape)``, or one of two wrong reshapes under a control: one that
    always copies, and one that reads the storage in memory order, ignoring strides."""
    if control_active("reshape-always-copies"):
        return x.clone().reshape(shape)
    if control_active("reshape-in-storage-order"):
        return x.as_strided(shape, formulas.contiguous_strides(shape), x.storage_offset())
    return x.reshape(shape)


def size_one_check(with_size_one_exception: bool) -> Check:
    """A size-1 dimension never blocks a merge, whatever its stride (PyTorch's rule too).

    The tensor is fixed: sizes (4, 1, 6), strides (6, 1, 1). The bare condition
    fails between dimensions 0 and 1 (6 ≠ 1·1); skipping the size-1 dimension,
    6 = 1·6 holds, so the whole tensor is one block and view(24) must work.
    """
    start = STARTING_LAYOUTS["size-one"]
    x = start.engine()
    source = layout_of(x)
    bare_fails = source.strides[0] != source.strides[1] * source.sizes[1]
    try:
        x.view(24)
        engine_views = True
    except RuntimeError:
        engine_views = False
    rule_views = formulas.view_layout(source, (24,), with_size_one_exception) is not None
    yes, no = T("yes", "能"), T("no", "不能")
    return Check(
        id="size-one-exception",
        name=T(f"A size-1 dimension never blocks a merge: {start.code} has sizes "
               f"{_fmt(source.sizes)}, strides {_fmt(source.strides)} and "
               f"{source.strides[0]} ≠ {source.strides[1]}·{source.sizes[1]}, yet view(24) "
               "works, as the rule that skips size-1 dimensions predicts",
               f"尺寸为 1 的维度从不妨碍合并：{start.code} 的尺寸为 {_fmt(source.sizes)}、"
               f"步幅为 {_fmt(source.strides)}，{source.strides[0]} ≠ "
               f"{source.strides[1]}·{source.sizes[1]}，但 view(24) 照样可行，"
               "与跳过尺寸 1 维度的合并规则的预言一致"),
        passed=bare_fails and engine_views and rule_views,
        measured=T(f"engine: {'view' if engine_views else 'error'}; rule: "
                   f"{(yes if rule_views else no).en}",
                   f"引擎：{'视图' if engine_views else '报错'}；"
                   f"规则：{(yes if rule_views else no).zh}"),
        expected=T("engine: view; rule: yes", "引擎：视图；规则：能"),
    )


@experiment(
    name="view-or-copy",
    title=T("view() or a copy?", "view() 还是复制？"),
    description=T(
        "Takes a 4 × 6 tensor in one of several layouts and asks the engine for view() and "
        "reshape() to other shapes. The page's merging condition, coded separately from the "
        "engine, predicts which views are possible; reshape() should copy exactly when view() "
        "fails.",
        "取一个按某种布局存放的 4 × 6 张量，让引擎对它调用 view() 和 reshape()，变成其他形状。"
        "页面上的合并条件（独立于引擎另写了一份）预言哪些 view 可行；"
        "reshape() 应当恰好在 view() 失败时复制。",
    ),
    params=[
        Param("layout", "choice", "transposed", T("layout of the 4 × 6 tensor", "4 × 6 张量的布局"),
              choices=tuple(STARTING_LAYOUTS),
              choice_labels=tuple(s.label for s in STARTING_LAYOUTS.values())),
        Param("target", "choice", "24", T("target shape", "目标形状"),
              choices=tuple(TARGET_SHAPES),
              choice_labels=tuple(T(k.replace("x", " × "), k.replace("x", " × "))
                                  for k in TARGET_SHAPES)),
    ],
    controls=[
        Control("merge-without-size-one-exception",
                T("the merging condition is also applied next to dimensions of size 1 "
                  "(layout with a size-1 dimension)",
                  "合并条件在尺寸为 1 的维度旁边也照样检验（布局中带一个尺寸 1 的维度）"),
                breaks=("size-one-exception", "view-rule-predicts"),
                params={"layout": "size-one"}),
        Control("rule-ignores-strides",
                T("the rule predicts from the sizes alone, as if every tensor were contiguous",
                  "规则只看尺寸来预言，仿佛每个张量都是连续的"),
                breaks=("view-rule-predicts", "numpy-agrees", "view-strides-as-rule")),
        Control("reshape-always-copies",
                T("reshape() copies even when a view would do",
                  "即使可以返回视图，reshape() 也复制"),
                breaks=("reshape-copies-iff-view-fails",)),
        Control("reshape-in-storage-order",
                T("reshape() reads the storage in memory order, ignoring the strides",
                  "reshape() 无视步幅，按存储里的先后顺序读取"),
                breaks=("values-as-numpy",)),
    ],
    metrics=[
        Metric("blocks", T("blocks after merging dimensions", "合并维度后的块数")),
        Metric(
            "chosen_target_views",
            T("view() works for the chosen shape", "所选形状可以用 view()"),
        ),
        Metric("views_possible", T("target shapes that can be views", "能成为视图的目标形状数")),
        Metric("targets", T("target shapes tried", "尝试的目标形状数")),
    ],
)
def view_or_copy(layout: str, target: str) -> Result:
    start = STARTING_LAYOUTS[layout]
    x = start.engine()
    twin = start.reference()
    source = layout_of(x)
    with_size_one_exception = not control_active("merge-without-size-one-exception")
    blocks = formulas.mergeable_blocks(source, with_size_one_exception)
    # The chosen target first; the other shapes follow so the checks cover them all.
    names = [target] + [name for name in TARGET_SHAPES if name != target]

    rows, errors = [], {}
    viewed, predicted, copied, numpy_views, strides_ok, values_ok = [], [], [], [], [], []
    for name in names:
        shape = TARGET_SHAPES[name]
        prediction = predict_view(source, shape, with_size_one_exception)
        try:
            view = x.view(shape)
        except RuntimeError as error:
            view, errors[name] = None, str(error)
        reshaped = reshape(x, shape)
        reference = np.reshape(twin, shape)
        shares = storage_ptr(reshaped) == storage_ptr(x)
        viewed.append(view is not None)
        predicted.append(prediction is not None)
        copied.append(not shares)
        numpy_views.append(numpy_can_view(twin, shape))
        if view is not None and prediction is not None:
            strides_ok.append(formulas.same_addressing(layout_of(view), prediction))
        values_ok.append(np.array_equal(reshaped.numpy(), reference)
                         and (view is None or np.array_equal(view.numpy(), reference)))
        rows.append([
            _fmt(shape),
            _fmt(view.stride()) if view is not None else "✗",
            _fmt(prediction.strides) if prediction is not None else "—",
            "✓" if shares else "✗",
        ])

    checks = [
        predictions_check("view-rule-predicts",
                        T("view() succeeds exactly when the merging rule (sⱼ = sⱼ₊₁·nⱼ₊₁ "
                          "between neighbours, dimensions of size 1 skipped) predicts it can",
                          "view() 恰好在合并规则（相邻维度满足 sⱼ = sⱼ₊₁·nⱼ₊₁，"
                          "尺寸为 1 的维度跳过）预言可行时成功"),
                        viewed, predicted, names),
        predictions_check("reshape-copies-iff-view-fails",
                        T("reshape() copies exactly when view() fails (a view shares "
                          "untyped_storage().data_ptr())",
                          "reshape() 恰好在 view() 失败时复制（视图的 untyped_storage().data_ptr() "
                          "与原张量相同）"),
                        copied, [not v for v in viewed], names),
        predictions_check("numpy-agrees",
                        T("NumPy's own reshape(copy=False) can avoid the copy in exactly the "
                          "same cases",
                          "NumPy 自己的 reshape(copy=False) 在完全相同的情形下能避免复制"),
                        numpy_views, predicted, names),
        Check(id="view-strides-as-rule",
              name=T("Every successful view has the strides the merging rule gives",
                     "每个成功的 view 的步幅都与合并规则给出的一致"),
              passed=bool(strides_ok) and all(strides_ok),
              measured=T(f"{sum(strides_ok)} of {len(strides_ok)} views",
                         f"{len(strides_ok)} 个视图中 {sum(strides_ok)} 个"),
              expected=T(f"{len(strides_ok)} of {len(strides_ok)} views",
                         f"{len(strides_ok)} 个视图全部")),
        predictions_check("values-as-numpy",
                        T("view() and reshape() give the values NumPy's reshape gives",
                          "view() 和 reshape() 的数值与 NumPy 的 reshape 相同"),
                        values_ok, [True] * len(values_ok), names),
        size_one_check(with_size_one_exception),
    ]
    table = Table(
        title=T(f"{start.code}: view and reshape to each shape",
                f"{start.code}：对各个形状调用 view 与 reshape"),
        columns=[T("target shape", "目标形状"),
                 T("view(): strides, or ✗ when it fails", "view()：步幅；失败记为 ✗"),
                 T("strides predicted by merging", "按合并规则预测的步幅"),
                 T("reshape() shares x's storage", "reshape() 与 x 共用存储")],
        rows=rows,
    )
    block_text = " + ".join(f"{b.numel}@{b.stride}" for b in blocks)
    notes = [T(f"{start.code} has sizes {_fmt(source.sizes)} and strides {_fmt(source.strides)}. "
               f"Merging neighbours where sⱼ = sⱼ₊₁·nⱼ₊₁ leaves {len(blocks)} block(s) "
               f"(elements@stride): {block_text}. A target shape can be a view exactly when "
               "its dimensions split into runs whose products are these block sizes, in order.",
               f"{start.code} 的尺寸为 {_fmt(source.sizes)}，步幅为 {_fmt(source.strides)}。"
               f"把满足 sⱼ = sⱼ₊₁·nⱼ₊₁ 的相邻维度合并后剩下 {len(blocks)} 块"
               f"（元素数@步幅）：{block_text}。目标形状能成为视图，当且仅当它的各维可以按顺序"
               "分成若干段，每段尺寸之积恰好等于这些块的大小。")]
    if target in errors:
        notes.append(T(f"view{_fmt(TARGET_SHAPES[target])} raised: {errors[target]}",
                       f"view{_fmt(TARGET_SHAPES[target])} 报错：“{errors[target]}”"))
    return Result(
        checks=checks,
        tables=[table],
        notes=notes,
        metrics={"blocks": len(blocks), "chosen_target_views": target not in errors,
                 "views_possible": sum(viewed), "targets": len(names)},
    )


# ---------------------------------------------------------------- version-counter

WRITABLE_VIEWS: dict[str, tuple[str, Callable]] = {
    "row": ("[1]", lambda t: t[1]),
    "column": ("[:, 2]", lambda t: t[:, 2]),
    "transpose": (".t()", lambda t: t.t()),
    "diagonal": (".diagonal()", lambda t: t.diagonal()),
    "flat": (".view(12)", lambda t: t.view(12)),
}
IN_PLACE_OPS: dict[str, tuple[str, Callable]] = {
    "mul_": (".mul_(2)", lambda v: v.mul_(2.0)),
    "add_": (".add_(1)", lambda v: v.add_(1.0)),
    "setitem": ("[0] = 7", lambda v: v.__setitem__(0, 7.0)),
}


def version_of(tensor: whylab.Tensor) -> int:
    """The in-place write count (``t._version``, as in PyTorch; the views share one counter)."""
    return tensor._version


def sequence_check(check_id: str, name, observed: Sequence[int],
                   expected: Sequence[int]) -> Check:
    """Pass when a recorded sequence of versions is exactly the expected one."""
    return Check(id=check_id, name=name,
                 passed=list(observed) == list(expected) and len(observed) > 0,
                 measured=", ".join(str(v) for v in observed),
                 expected=", ".join(str(v) for v in expected))


def saved_tensor_error_check(message: str | None, now: int, saved: int) -> Check:
    """The backward error was raised and names the version found and the one expected."""
    wanted = [f"is at version {now}", f"expected version {saved}"]
    passed = message is not None and "modified by an inplace operation" in message and all(
        part in message for part in wanted)
    found = re.search(r"is at version \d+; expected version \d+", message or "")
    return Check(
        id="saved-tensor-error",
        name=T("backward() refuses: the error names the saved tensor's version now and "
               "when it was saved",
               "backward() 拒绝执行：错误信息写出被保存张量现在的版本号和保存时的版本号"),
        passed=bool(passed),
        measured=(T("no error raised", "没有报错") if message is None
                  else f"“…{found.group(0)}…”" if found
                  else T("an error without the versions", "报错，但没写版本号")),
        expected=f"“…{wanted[0]}; {wanted[1]}…”",
    )


@experiment(
    name="version-counter",
    title=T("Version counters: how autograd notices a write through a view",
            "版本计数器：自动微分如何察觉经由视图的写入"),
    description=T(
        "Writes in place through a view of a tensor and records the version counter of the "
        "base, the view and a second view after each write; then does the same to a tensor "
        "that autograd saved for backward.",
        "经由张量的某个视图原地写入，记录每次写入后原张量、该视图以及另一个视图的版本号；"
        "再对一个被自动微分保存下来供反向传播使用的张量做同样的事。",
    ),
    params=[
        Param("view", "choice", "diagonal", T("view written through", "写入所经由的视图"),
              choices=tuple(WRITABLE_VIEWS),
              choice_labels=tuple(T(f"x{code}", f"x{code}")
                                  for code, _ in WRITABLE_VIEWS.values())),
        Param("op", "choice", "mul_", T("in-place operation", "原地操作"),
              choices=tuple(IN_PLACE_OPS),
              choice_labels=tuple(T(f"v{code}", f"v{code}") for code, _ in IN_PLACE_OPS.values())),
        Param("writes", "int", 2, T("number of writes", "写入次数"), minimum=1, maximum=5, step=1),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("writes-through-data",
                T("the writes go through x.data, which shares the storage but not the counter",
                  "写入经由 x.data 进行：它与 x 共用存储，却不共用计数器"),
                breaks=("one-per-write", "one-counter", "detach-shares-data-fresh",
                        "saved-tensor-error")),
        Control("out-of-place-done-in-place",
                T("v * 2 is computed in place, as v.mul_(2)", "v * 2 被原地计算成 v.mul_(2)"),
                breaks=("out-of-place-no-bump",)),
        Control("written-tensor-was-saved",
                T("the tensor written into is one a backward formula saved (z · z saves z)",
                  "被写入的张量正是某个反向公式保存的张量（z · z 会保存 z）"),
                breaks=("unsaved-write-harmless",)),
    ],
    metrics=[
        Metric("final_version", T("x's version after the writes", "写入之后 x 的版本号")),
        Metric("saved_version", T("version saved for backward", "为反向传播保存的版本号")),
        Metric(
            "version_at_backward",
            T("version when backward() runs", "调用 backward() 时的版本号"),
        ),
    ],
)
def version_counter(view: str, op: str, writes: int, seed: int) -> Result:
    view_code, take_view = WRITABLE_VIEWS[view]
    op_code, write = IN_PLACE_OPS[op]
    generator = whylab.Generator().manual_seed(seed)
    x = whylab.randn(3, 4, generator=generator, dtype=whylab.float64)
    behind_the_counter = control_active("writes-through-data")
    # Under that control the writes go through x.data: same storage, another counter.
    v = take_view(x.data if behind_the_counter else x)
    sibling = x.t()[1:]  # another view of the same storage, never written through
    detached, data = x.detach(), x.data

    def versions() -> list[int]:
        return [version_of(t) for t in (x, v, sibling, detached, data)]

    history = [["—", *versions()]]
    for k in range(1, writes + 1):
        write(v)
        history.append([f"{k}: v{op_code}", *versions()])
    before_out_of_place = version_of(x)
    # Out of place: reads the view, writes a new tensor (under the control, in place).
    doubled = v.mul_(2.0) if control_active("out-of-place-done-in-place") else v * 2.0
    after_out_of_place = version_of(x)

    checks = [
        sequence_check("one-per-write",
                       T("Each write through the view adds exactly 1 to the base's version",
                         "每经由视图写入一次，原张量的版本号恰好加 1"),
                       [row[1] for row in history], list(range(writes + 1))),
        Check(id="one-counter",
              name=T("The base, the view written through and another view share one counter "
                     "object",
                     "原张量、被写入的视图和另一个视图共用同一个计数器对象"),
              passed=x._version_counter is v._version_counter is sibling._version_counter
              and all(row[1] == row[2] == row[3] for row in history),
              measured=T(f"versions after the last write: x {history[-1][1]}, "
                         f"v {history[-1][2]}, other view {history[-1][3]}",
                         f"最后一次写入后的版本号：x {history[-1][1]}，"
                         f"v {history[-1][2]}，另一个视图 {history[-1][3]}"),
              expected=T("one shared counter", "同一个计数器")),
        Check(id="out-of-place-no-bump",
              name=T("An out-of-place operation on the view (v * 2) leaves the version alone",
                     "对视图做非原地运算（v * 2）不改变版本号"),
              passed=before_out_of_place == after_out_of_place
              and storage_ptr(doubled) != storage_ptr(x),
              measured=f"{before_out_of_place} → {after_out_of_place}",
              expected=f"{before_out_of_place} → {before_out_of_place}"),
        sequence_check("detach-shares-data-fresh",
                       T("detach() shares the counter; .data gets a fresh one that stays at 0",
                         "detach() 共用计数器；.data 拿到一个新的计数器，一直是 0"),
                       [history[-1][4], history[-1][5]], [writes, 0]),
    ]

    # Autograd: exp saves its own result y for backward (d exp(a)/da = exp(a) = y).
    a = whylab.randn(3, 4, generator=generator, dtype=whylab.float64, requires_grad=True)
    y = a.exp()
    loss = y.sum()
    saved_at = version_of(y)
    y_view = take_view(y.data if behind_the_counter else y)
    for _ in range(writes):
        write(y_view)
    try:
        loss.backward()
        message = None
    except RuntimeError as error:
        message = str(error)
    checks.append(saved_tensor_error_check(message, saved_at + writes, saved_at))

    # Contrast: z = 2a, then z + 1 saves nothing, so writing into z breaks nothing.
    b = whylab.randn(3, 4, generator=generator, dtype=whylab.float64, requires_grad=True)
    z = b * 2.0
    # Under the control the sum saves z after all (z · z needs z for its gradient).
    total = ((z * z) if control_active("written-tensor-was-saved") else (z + 1.0)).sum()
    for _ in range(writes):
        write(take_view(z))
    try:
        total.backward()
    except RuntimeError:
        pass  # b.grad stays None, and the check below says so
    checks.append(Check(
        id="unsaved-write-harmless",
        name=T("Writing into a tensor that no backward formula saved is harmless: "
               "d/db sum(2b + 1) is still 2 everywhere",
               "写入一个没有被任何反向公式保存的张量不会出错：d/db sum(2b + 1) 仍处处为 2"),
        passed=bool(b.grad is not None and np.all(b.grad.numpy() == 2.0)),
        measured=T("no gradient", "没有梯度") if b.grad is None else
        T(f"gradient in [{b.grad.numpy().min():g}, {b.grad.numpy().max():g}]",
          f"梯度在 [{b.grad.numpy().min():g}, {b.grad.numpy().max():g}] 内"),
        expected=T("2 everywhere", "处处为 2")))

    table = Table(
        title=T(f"Version counters while writing through v = x{view_code}",
                f"经由 v = x{view_code} 写入时各张量的版本号"),
        columns=[T("write", "写入"), T("x", "x"), T(f"v = x{view_code}", f"v = x{view_code}"),
                 T("x.t()[1:]", "x.t()[1:]"), T("x.detach()", "x.detach()"),
                 T("x.data", "x.data")],
        rows=history,
    )
    notes = []
    if message:
        notes.append(T(f"backward() after {writes} write(s) through y{view_code}: {message}",
                       f"经由 y{view_code} 写入 {writes} 次之后调用 backward()：“{message}”"))
    return Result(checks=checks, tables=[table], notes=notes,
                  metrics={"final_version": history[-1][1], "saved_version": saved_at,
                           "version_at_backward": version_of(y)})


EXPERIMENTS = [view_chain, view_or_copy, copy_cost, mm_operands, expanded_write, version_counter]
