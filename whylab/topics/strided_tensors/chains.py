"""The view operations a reader can pick on the strided-tensors page.

Each :class:`Step` is one view operation written three ways: as the engine call
(whylab), as the same indexing in NumPy (the reference for the values), and as
the page's formula for the new layout (:mod:`.layout`, no engine involved). A
chain is a short list of steps applied one after another. Readers choose a
chain by name; nothing they type is ever evaluated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from whylab.explorer.experiment import T, Text
from whylab.topics.strided_tensors import layout as formulas


@dataclass(frozen=True)
class Step:
    """One view operation: its code, the engine call, NumPy's version and the prediction."""

    code: str  # how the step is written after the previous expression, e.g. ".t()"
    engine: Callable  # whylab Tensor -> whylab Tensor
    reference: Callable[[np.ndarray], np.ndarray]
    predict: Callable[[formulas.Layout], formulas.Layout]


@dataclass(frozen=True)
class Chain:
    """Steps applied one after another; the reader picks a chain by its code."""

    steps: tuple[Step, ...]

    def code(self) -> str:
        """The whole chain as one expression, e.g. ``x[1][:, 1::2].t()``."""
        return "x" + "".join(step.code for step in self.steps)


CHAINS: dict[str, Chain] = {
    "transpose": Chain(
        (Step(".transpose(0, 1)", lambda t: t.transpose(0, 1),
              lambda a: a.transpose(1, 0, 2), lambda m: formulas.transpose(m, 0, 1)),),
    ),
    "step-slice": Chain(
        (Step("[:, ::2]", lambda t: t[:, ::2], lambda a: a[:, ::2],
              lambda m: formulas.slice_dim(m, 1, 0, None, 2)),),
    ),
    "expand": Chain(
        (Step("[1:]", lambda t: t[1:], lambda a: a[1:],
              lambda m: formulas.slice_dim(m, 0, 1, None, 1)),
         Step("[:, :, None]", lambda t: t[:, :, None], lambda a: a[:, :, None],
              lambda m: formulas.unsqueeze(m, 2)),
         Step(".expand(-1, -1, 3, -1)", lambda t: t.expand(-1, -1, 3, -1),
              lambda a: np.broadcast_to(a, (a.shape[0], a.shape[1], 3, a.shape[3])),
              lambda m: formulas.expand(m, (-1, -1, 3, -1)))),
    ),
    "permute": Chain(
        (Step(".permute(2, 0, 1)", lambda t: t.permute(2, 0, 1),
              lambda a: a.transpose(2, 0, 1), lambda m: formulas.permute(m, (2, 0, 1))),),
    ),
    "diagonal": Chain(
        (Step(".diagonal()", lambda t: t.diagonal(), lambda a: np.diagonal(a, 0, 0, 1),
              lambda m: formulas.diagonal(m, 0, 1)),),
    ),
    "unfold": Chain(
        (Step(".unfold(2, 2, 1)", lambda t: t.unfold(2, 2, 1),
              lambda a: np.lib.stride_tricks.sliding_window_view(a, 2, axis=2),
              lambda m: formulas.unfold(m, 2, 2, 1)),),
    ),
    "select-slice-transpose": Chain(
        (Step("[1]", lambda t: t[1], lambda a: a[1], lambda m: formulas.select(m, 0, 1)),
         Step("[:, 1::2]", lambda t: t[:, 1::2], lambda a: a[:, 1::2],
              lambda m: formulas.slice_dim(m, 1, 1, None, 2)),
         Step(".t()", lambda t: t.t(), lambda a: a.T, lambda m: formulas.transpose(m, 0, 1))),
    ),
}


@dataclass(frozen=True)
class StartingLayout:
    """A 4 × 6 tensor laid out some way, built in whylab and, identically, in NumPy."""

    label: Text
    code: str
    engine: Callable  # () -> whylab Tensor
    reference: Callable[[], np.ndarray]


def _arange(n: int):
    import whylab  # imported here: the page's formulas module must stay engine-free

    return whylab.arange(n, dtype=whylab.float64)


STARTING_LAYOUTS: dict[str, StartingLayout] = {
    "contiguous": StartingLayout(
        T("contiguous", "连续"), "arange(24.).reshape(4, 6)",
        lambda: _arange(24).reshape(4, 6), lambda: np.arange(24.0).reshape(4, 6)),
    "transposed": StartingLayout(
        T("transposed", "转置"), "arange(24.).reshape(6, 4).t()",
        lambda: _arange(24).reshape(6, 4).t(), lambda: np.arange(24.0).reshape(6, 4).T),
    "step-sliced": StartingLayout(
        T("every 2nd column of 4 × 12", "4 × 12 隔列取"),
        "arange(48.).reshape(4, 12)[:, ::2]",
        lambda: _arange(48).reshape(4, 12)[:, ::2],
        lambda: np.arange(48.0).reshape(4, 12)[:, ::2]),
    "column-sliced": StartingLayout(
        T("columns 1–6 of 4 × 8", "4 × 8 的第 1–6 列"),
        "arange(32.).reshape(4, 8)[:, 1:7]",
        lambda: _arange(32).reshape(4, 8)[:, 1:7],
        lambda: np.arange(32.0).reshape(4, 8)[:, 1:7]),
    "size-one": StartingLayout(
        T("a size-1 dimension in the middle, stride 1", "中间有一个尺寸为 1、步幅为 1 的维度"),
        "arange(24.).reshape(4, 6, 1).transpose(1, 2)",
        lambda: _arange(24).reshape(4, 6, 1).transpose(1, 2),
        lambda: np.arange(24.0).reshape(4, 6, 1).transpose(0, 2, 1)),
    "expanded": StartingLayout(
        T("one row expanded to 4", "一行扩展成 4 行"), "arange(6.).expand(4, 6)",
        lambda: _arange(6).expand(4, 6), lambda: np.broadcast_to(np.arange(6.0), (4, 6))),
}

TARGET_SHAPES: dict[str, tuple[int, ...]] = {
    "24": (24,),
    "2x12": (2, 12),
    "12x2": (12, 2),
    "6x4": (6, 4),
    "4x3x2": (4, 3, 2),
    "2x2x6": (2, 2, 6),
    "2x2x3x2": (2, 2, 3, 2),
    "1x24x1": (1, 24, 1),
}
