"""Experiment ``expanded-write`` for "strided tensors": writing into a stride-0 view.

``expand`` repeats a row without copying it, so many elements of the view name
one storage cell. Reading that is harmless; an elementwise in-place write is not
(each cell would be written once per element that names it), and PyTorch refuses
it with an error that whylab's engine repeats. The experiment shows the layout,
triggers the refusal, writes one element to see every row change, and writes
into a ``clone()``, which has a cell per element.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import whylab
from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)

#: PyTorch's message for an in-place write into a tensor whose elements overlap
#: (``assert_no_internal_overlap`` in ATen's MemoryOverlap.cpp; the tests compare
#: it with the message torch 2.13 raises).
TORCH_OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to "
                         "tensor refers to a single memory location")

IN_PLACE_WRITES: dict[str, tuple[str, Callable]] = {
    "add_": (".add_(1)", lambda t: t.add_(1.0)),
    "mul_": (".mul_(2)", lambda t: t.mul_(2.0)),
    "copy_": (".copy_(ones)", lambda t: t.copy_(whylab.ones(tuple(t.shape), dtype=t.dtype))),
}
MARKER = -1000.0


def storage_values(tensor: whylab.Tensor) -> np.ndarray:
    """A copy of the flat storage under ``tensor``."""
    return tensor.untyped_storage().data.copy()


def expand_under_test(row: whylab.Tensor, rows: int) -> whylab.Tensor:
    """``row.expand(rows, -1)``, or under the control ``expand-copies`` an expand that
    materialises the repeated rows."""
    expanded = row.expand(rows, -1)
    if control_active("expand-copies"):
        return expanded.contiguous()
    return expanded


def clone_under_test(tensor: whylab.Tensor) -> whylab.Tensor:
    """``tensor.clone()``, or under the control ``clone-returns-view`` the view itself."""
    return tensor if control_active("clone-returns-view") else tensor.clone()


@experiment(
    name="expanded-write",
    title=T("Writing into an expanded view", "写入 expand 出来的视图"),
    description=T(
        "Expands one row of n numbers to rows × n (stride 0 along the rows), then tries an "
        "elementwise in-place write into it, writes a single element, and writes into a "
        "clone().",
        "把一行 n 个数 expand 成 rows × n（沿行方向步幅为 0），然后尝试对它做逐元素的原地写入，"
        "再只写一个元素，最后写入它的 clone()。",
    ),
    params=[
        Param("op", "choice", "add_", T("in-place write", "原地写入"),
              choices=tuple(IN_PLACE_WRITES),
              choice_labels=tuple(T(f"e{code}", f"e{code}")
                                  for code, _ in IN_PLACE_WRITES.values())),
        Param("rows", "int", 4, T("rows", "行数"), minimum=2, maximum=6, step=1),
        Param("n", "int", 6, T("row length n", "每行长度 n"), minimum=2, maximum=8, step=1),
    ],
    controls=[
        Control("expand-copies",
                T("expand copies the row into rows × n new cells instead of using stride 0",
                  "expand 把这一行复制成 rows × n 个新单元，而不是用步幅 0"),
                breaks=("stride-zero-view", "overlapping-write-refused",
                        "one-cell-every-row")),
        Control("clone-returns-view",
                T("clone() returns the expanded view itself, without its own storage",
                  "clone() 直接返回 expand 出来的视图本身，没有自己的存储"),
                breaks=("clone-takes-the-write",)),
    ],
    metrics=[
        Metric(
            "storage_cells",
            T("cells in the expand() view's storage", "expand() 视图的存储单元个数"),
        ),
        Metric("elements", T("elements the view shows", "视图呈现的元素个数")),
    ],
)
def expanded_write(op: str, rows: int, n: int) -> Result:
    code, write = IN_PLACE_WRITES[op]
    row = whylab.arange(n, dtype=whylab.float64)
    e = expand_under_test(row, rows)
    shares = e.untyped_storage().data_ptr() == row.untyped_storage().data_ptr()
    layout_ok = tuple(e.stride()) == (0, 1) and shares and e.untyped_storage().size == n

    before = storage_values(row)
    try:
        write(e)
        message = None
    except RuntimeError as error:
        message = str(error)
    untouched = np.array_equal(storage_values(row), before)
    refused = message is not None and TORCH_OVERLAP_MESSAGE in message and untouched

    column = n // 2
    before = storage_values(row)
    e[0, column] = MARKER
    changed = np.flatnonzero(storage_values(row) != before).tolist()
    every_row = bool(np.all(e.numpy()[:, column] == MARKER))

    fresh = whylab.arange(n, dtype=whylab.float64).expand(rows, -1)
    copy = clone_under_test(fresh)
    try:
        write(copy)
        clone_error = None
    except RuntimeError as error:
        clone_error = str(error)
    clone_ok = (clone_error is None and copy.untyped_storage().size == rows * n
                and tuple(copy.stride()) == (n, 1))

    yes, no = T("yes", "是"), T("no", "否")
    checks = [
        Check(id="stride-zero-view",
              name=T(f"e = row.expand({rows}, -1) has strides (0, 1) and shares the row's "
                     f"{n}-cell storage",
                     f"e = row.expand({rows}, -1) 的步幅为 (0, 1)，"
                     f"并与这一行共用那 {n} 个单元的存储"),
              passed=layout_ok,
              measured=T(f"stride {tuple(e.stride())}, {e.untyped_storage().size} cells",
                         f"步幅 {tuple(e.stride())}，{e.untyped_storage().size} 个单元"),
              expected=T(f"stride (0, 1), {n} cells", f"步幅 (0, 1)，{n} 个单元")),
        Check(id="overlapping-write-refused",
              name=T(f"e{code} is refused with PyTorch's error, before anything is written",
                     f"e{code} 被拒绝，报出与 PyTorch 相同的错误，而且什么都没写进去"),
              passed=refused,
              measured=(T("no error", "没有报错") if message is None
                        else T(f"“{message}”; storage unchanged: "
                               f"{(yes if untouched else no).en}",
                               f"“{message}”；存储未变：{(yes if untouched else no).zh}")),
              expected=f"“…{TORCH_OVERLAP_MESSAGE}…”"),
        Check(id="one-cell-every-row",
              name=T(f"Writing the single element e[0, {column}] changes one storage cell, and "
                     f"every row of e reads the new value",
                     f"只写一个元素 e[0, {column}]，只改变一个存储单元，e 的每一行都读到新值"),
              passed=changed == [column] and every_row,
              measured=T(f"changed cells {changed}; all {rows} rows read it: "
                         f"{(yes if every_row else no).en}",
                         f"改变的单元 {changed}；全部 {rows} 行都读到："
                         f"{(yes if every_row else no).zh}"),
              expected=T(f"changed cells [{column}]; all rows", f"改变的单元 [{column}]；全部行")),
        Check(id="clone-takes-the-write",
              name=T(f"e.clone() has its own {rows} × {n} row-major storage, and "
                     f"e.clone(){code} works",
                     f"e.clone() 有自己的 {rows} × {n} 行主序存储，e.clone(){code} 可以执行"),
              passed=clone_ok,
              measured=(T(f"error: {clone_error}", f"报错：{clone_error}") if clone_error
                        else T(f"{copy.untyped_storage().size} cells, stride "
                               f"{tuple(copy.stride())}",
                               f"{copy.untyped_storage().size} 个单元，步幅 "
                               f"{tuple(copy.stride())}")),
              expected=T(f"{rows * n} cells, stride ({n}, 1)",
                         f"{rows * n} 个单元，步幅 ({n}, 1)")),
    ]
    table = Table(
        title=T("Which storage cell each element of e reads", "e 的每个元素读取哪个存储单元"),
        columns=[T("row", "行")] + [T(f"column {j}", f"第 {j} 列") for j in range(n)],
        rows=[[i] + [j * e.stride()[1] + i * e.stride()[0] + e.storage_offset()
                     for j in range(n)] for i in range(rows)],
        grid=True,
    )
    notes = [] if message is None else [
        T(f"e{code} raised: {message}", f"e{code} 报错：“{message}”")
    ]
    return Result(checks=checks, tables=[table], notes=notes,
                  metrics={"storage_cells": e.untyped_storage().size, "elements": rows * n})
