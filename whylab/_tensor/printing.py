"""``repr`` of a tensor, in the style of PyTorch's ``tensor([[1., 2.], ...])``.

The rules are PyTorch's (``torch/_tensor_str.py``), re-implemented: floats print
as ``1.`` when every nonzero finite value is whole, with four decimals
otherwise, and in scientific notation when those magnitudes span more than
1000x or leave [1e-4, 1e8]; every element is right-aligned to the widest
nonzero finite one. Tensors with more than 1000 elements are summarised with
``...``. The dtype is shown unless it is a default one (float32, int64, bool).
Deviation: dtypes print as ``whylab.float64`` rather than ``torch.float64``.
"""

from __future__ import annotations

import math

import numpy as np

from whylab._tensor import dtypes

SUMMARIZE_THRESHOLD = 1000
EDGE_ITEMS = 3
LINE_WIDTH = 80
PRECISION = 4


class _Formatter:
    """Decides, from the values shown, how every element is written."""

    def __init__(self, values: np.ndarray, dtype):
        self.floating = dtype.is_floating_point
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not self.floating:
            for value in values.tolist():
                self.width = max(self.width, len(str(value)))
            return
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            return
        magnitudes = np.abs(finite.astype(np.float64))
        biggest, smallest = float(magnitudes.max()), float(magnitudes.min())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = biggest / smallest > 1000.0 or biggest > 1.0e8
        else:
            self.sci_mode = biggest / smallest > 1000.0 or biggest > 1.0e8 or smallest < 1.0e-4
        for value in finite.tolist():
            self.width = max(
                self.width,
                len(self._plain(value)) + (1 if self.int_mode and not self.sci_mode else 0),
            )

    def _plain(self, value) -> str:
        if self.sci_mode:
            return f"{value:.{PRECISION}e}"
        if self.int_mode:
            return f"{value:.0f}"
        return f"{value:.{PRECISION}f}"

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = f"{value:.{PRECISION}f}"
        return " " * (self.width - len(text)) + text


def _summarized(array: np.ndarray) -> np.ndarray:
    """The values shown when summarising: only the first and last edge items of each dim."""
    if array.ndim == 0:
        return array.reshape(1)
    if array.shape[0] > 2 * EDGE_ITEMS:
        rows = [array[i] for i in range(EDGE_ITEMS)] + [
            array[i] for i in range(array.shape[0] - EDGE_ITEMS, array.shape[0])
        ]
    else:
        rows = [array[i] for i in range(array.shape[0])]
    if array.ndim == 1:
        return np.asarray(rows)
    return np.concatenate([_summarized(row).reshape(-1) for row in rows])


def _vector(array, indent, summarize, formatter) -> str:
    values = array.tolist()
    if summarize and len(values) > 2 * EDGE_ITEMS:
        items = (
            [formatter.format(v) for v in values[:EDGE_ITEMS]]
            + [" ..."]
            + [formatter.format(v) for v in values[-EDGE_ITEMS:]]
        )
    else:
        items = [formatter.format(v) for v in values]
    per_line = max(1, (LINE_WIDTH - indent) // (formatter.width + 2))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _block(array, indent, summarize, formatter) -> str:
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _vector(array, indent, summarize, formatter)
    count = array.shape[0]
    if summarize and count > 2 * EDGE_ITEMS:
        rows = (
            [_block(array[i], indent + 1, summarize, formatter) for i in range(EDGE_ITEMS)]
            + ["..."]
            + [
                _block(array[i], indent + 1, summarize, formatter)
                for i in range(count - EDGE_ITEMS, count)
            ]
        )
    else:
        rows = [_block(array[i], indent + 1, summarize, formatter) for i in range(count)]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def tensor_repr(t) -> str:
    """The full ``repr`` of tensor ``t``."""
    prefix = "tensor("
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t._array is None:
        body = "..."
        suffixes.append(f"size={tuple(t._sizes)}")
    elif t.numel() == 0:
        body = "[]"
        if t._sizes != (0,):
            suffixes.append(f"size={tuple(t._sizes)}")
    else:
        array = np.asarray(t._array)
        summarize = array.size > SUMMARIZE_THRESHOLD
        shown = _summarized(array) if summarize else array.reshape(-1)
        formatter = _Formatter(shown, t.dtype)
        body = _block(array, len(prefix), summarize, formatter)
    if t.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        name = t.grad_fn.name() if hasattr(t.grad_fn, "name") else type(t.grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + ", ".join([body] + suffixes) + ")"
