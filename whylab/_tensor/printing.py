"""``repr`` of a tensor, in the style of PyTorch's ``tensor([[1., 2.], ...])``.

Floats print as ``1.`` when every value is whole, with four decimals otherwise,
and in scientific notation when the magnitudes span more than 1000x or leave
[1e-4, 1e8]. Tensors with more than 1000 elements are summarised with ``...``.
The dtype is shown unless it is a default one (float32, int64, bool).
"""

from __future__ import annotations

import math

import numpy as np

from whylab._tensor import dtypes

SUMMARIZE_THRESHOLD = 1000
EDGE_ITEMS = 3
LINE_WIDTH = 80


def _element_formatter(values: np.ndarray, dtype):
    """A function formatting one element, chosen from all values shown."""
    if dtype is dtypes.bool_:
        return lambda v: "True" if v else "False"
    if not dtype.is_floating_point:
        return lambda v: str(int(v))
    finite = values[np.isfinite(values)]
    magnitudes = np.abs(finite[finite != 0])
    if magnitudes.size == 0:
        return _float_formatter("{:.0f}.")
    biggest, smallest = float(magnitudes.max()), float(magnitudes.min())
    wide_range = biggest / smallest > 1000.0 or biggest > 1e8
    if np.all(finite == np.ceil(finite)):
        return _float_formatter("{:.4e}" if wide_range else "{:.0f}.")
    if wide_range or smallest < 1e-4:
        return _float_formatter("{:.4e}")
    return _float_formatter("{:.4f}")


def _float_formatter(pattern: str):
    def format_value(value):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return pattern.format(value)

    return format_value


def _shown_values(array: np.ndarray, summarize: bool) -> np.ndarray:
    """The values that will be printed (only the edges when summarising)."""
    if not summarize or array.ndim == 0:
        return array.reshape(-1)
    parts = []
    if array.shape[0] > 2 * EDGE_ITEMS:
        rows = list(array[:EDGE_ITEMS]) + list(array[-EDGE_ITEMS:])
    else:
        rows = list(array)
    for row in rows:
        parts.append(_shown_values(np.asarray(row), summarize))
    return np.concatenate(parts) if parts else array.reshape(-1)


def _format_block(array, formatter, width, indent, summarize) -> str:
    if array.ndim == 0:
        return formatter(array.item()).rjust(width)
    if array.ndim == 1:
        items = [formatter(v).rjust(width) for v in _edges(array.tolist(), summarize)]
        per_line = max(1, (LINE_WIDTH - indent) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = []
    for row in _edges(list(range(array.shape[0])), summarize):
        if row == "...":
            rows.append("...")
        else:
            rows.append(_format_block(array[row], formatter, width, indent + 1, summarize))
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _edges(items: list, summarize: bool) -> list:
    if summarize and len(items) > 2 * EDGE_ITEMS:
        return items[:EDGE_ITEMS] + ["..."] + items[-EDGE_ITEMS:]
    return items


def tensor_repr(t) -> str:
    """The full ``repr`` of tensor ``t``."""
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.device.type == "meta" or t._array is None:
        body = "..."
        suffixes.append(f"size={tuple(t._sizes)}")
    elif t.numel() == 0:
        body = "[]"
        if t._sizes != (0,):
            suffixes.append(f"size={tuple(t._sizes)}")
    else:
        array = np.asarray(t._array)
        summarize = array.size > SUMMARIZE_THRESHOLD
        formatter = _element_formatter(_shown_values(array, summarize), t.dtype)
        shown = _shown_values(array, summarize)
        width = max(len(formatter(v)) for v in shown.tolist())
        body = _format_block(array, lambda v: v if v == "..." else formatter(v), width, 7, summarize)
    if t.dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        name = t.grad_fn.name() if hasattr(t.grad_fn, "name") else type(t.grad_fn).__name__
        suffixes.append(f"grad_fn=<{name}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffixes) + ")"
