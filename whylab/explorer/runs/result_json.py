"""Turn experiment results into plain JSON data and back.

Experiments run in worker processes and their results are cached on disk, so a
:class:`~whylab.explorer.experiment.Result` has to travel as JSON. This module is
the one place that knows the JSON shape. Topic code may hand us NumPy scalars
and arrays; they become plain floats here. JSON has no NaN or infinity, so a
non-finite number is written as ``{"float": "inf"}`` (``"-inf"``, ``"nan"``) and
read back as that float: a data table shows ∞ where the run had ∞ (charts skip
non-finite points). Records written before these tags hold ``null``, read as NaN.
"""

from __future__ import annotations

import json
import math
from typing import Any

from whylab.explorer.experiment import (
    Check,
    Figure,
    GraphDiagram,
    GraphNode,
    LineChart,
    Result,
    Series,
    Table,
    Text,
)


class SerializationError(TypeError):
    """A result holds something that cannot be written as JSON."""


def _number(value: Any) -> float | dict[str, str]:
    number = float(value)
    return number if math.isfinite(number) else {"float": repr(number)}


def _text(text: Text) -> dict[str, str]:
    if not isinstance(text, Text):
        raise SerializationError(f"expected Text(en, zh), got {type(text).__name__}")
    return {"en": text.en, "zh": text.zh}


def _words(value: str | Text) -> str | dict[str, str]:
    """A check's measured/expected value: a Text keeps both languages, a str stays a str."""
    return _text(value) if isinstance(value, Text) else str(value)


def _cell(
    value: Any, *, words: bool = True
) -> str | dict[str, str] | bool | float | int | None:
    """A table cell (``words``: a Text may hold words) or a metric (numbers and plain strings)."""
    if hasattr(value, "item"):  # NumPy scalar
        value = value.item()
    if isinstance(value, Text) and words:
        return _text(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):  # before int: bool is a subclass of int
        return value  # a JSON boolean, so a page can say yes/no (是/否) in its language
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _number(value)
    raise SerializationError(
        f"table cells and metrics must be str/Text/int/float, got {type(value)}"
    )


def _figure(figure: Figure) -> dict[str, Any]:
    if isinstance(figure, LineChart):
        return {
            "kind": "line",
            "title": _text(figure.title),
            "x_label": _text(figure.x_label),
            "y_label": _text(figure.y_label),
            "log_x": bool(figure.log_x),
            "log_y": bool(figure.log_y),
            "equal_aspect": bool(figure.equal_aspect),
            "series": [
                {
                    "name": _text(series.name),
                    "x": [_number(v) for v in series.x],
                    "y": [_number(v) for v in series.y],
                    "draw": series.draw,
                }
                for series in figure.series
            ],
        }
    if isinstance(figure, GraphDiagram):
        graph = {
            "kind": "graph",
            "title": _text(figure.title),
            "direction": figure.direction,
            "nodes": [
                {
                    "id": n.id,
                    "label": _words(n.label),
                    "detail": _words(n.detail),
                    "group": n.group,
                    "layer": n.layer,
                    "order": n.order,
                }
                for n in figure.nodes
            ],
            "edges": [[str(s), str(t), str(label)] for s, t, label in figure.edges],
        }
        if figure.group_colours:  # written only when declared: other records stay as they were
            graph["group_colours"] = dict(figure.group_colours)
        return graph
    raise SerializationError(f"unknown figure type {type(figure).__name__}")


def result_to_dict(result: Result) -> dict[str, Any]:
    """A JSON-ready dict describing ``result`` (texts keep both languages)."""
    if not isinstance(result, Result):
        raise SerializationError(f"an experiment must return Result, got {type(result).__name__}")
    return {
        "checks": [
            {
                "id": c.id,
                "name": _text(c.name),
                "state": c.state,
                "passed": bool(c.passed),
                "measured": _words(c.measured),
                "expected": _words(c.expected),
                "when_applicable": None if c.when_applicable is None else _text(c.when_applicable),
            }
            for c in result.checks
        ],
        "figures": [_figure(f) for f in result.figures],
        "tables": [
            {
                "title": _text(t.title),
                "columns": [_text(c) for c in t.columns],
                "rows": [[_cell(v) for v in row] for row in t.rows],
                "grid": t.grid,
            }
            for t in result.tables
        ],
        "metrics": {str(k): _cell(v, words=False) for k, v in result.metrics.items()},
        "notes": [_text(n) for n in result.notes],
    }


def _read_text(data: dict[str, str]) -> Text:
    return Text(data["en"], data["zh"])


def _read_words(data: str | dict[str, str]) -> str | Text:
    # Records cached before check values could be Text hold plain strings.
    return data if isinstance(data, str) else _read_text(data)


def _read_number(value: float | dict[str, str] | None) -> float:
    if isinstance(value, dict):
        return float(value["float"])
    return math.nan if value is None else float(value)  # None: written before the tags


def _read_cell(
    value: str | dict[str, str] | bool | float | int | None,
) -> str | Text | bool | float | int:
    if isinstance(value, dict) and "float" not in value:
        return _read_text(value)
    if isinstance(value, (dict, type(None))):
        return _read_number(value)
    return value


def _read_figure(data: dict[str, Any]) -> Figure:
    if data["kind"] == "line":
        return LineChart(
            title=_read_text(data["title"]),
            x_label=_read_text(data["x_label"]),
            y_label=_read_text(data["y_label"]),
            series=[
                Series(
                    _read_text(s["name"]),
                    [_read_number(v) for v in s["x"]],
                    [_read_number(v) for v in s["y"]],
                    s["draw"],
                )
                for s in data["series"]
            ],
            log_x=data["log_x"],
            log_y=data["log_y"],
            equal_aspect=data["equal_aspect"],
        )
    if data["kind"] == "graph":
        return GraphDiagram(
            title=_read_text(data["title"]),
            nodes=[
                GraphNode(
                    **{
                        **node,
                        "label": _read_words(node["label"]),
                        "detail": _read_words(node["detail"]),
                    }
                )
                for node in data["nodes"]
            ],
            edges=[tuple(edge) for edge in data["edges"]],
            direction=data.get("direction", "TB"),  # records cached before pinning existed
            group_colours=data.get("group_colours", {}),
        )
    raise SerializationError(f"unknown figure kind {data['kind']!r}")


def _read_check(data: dict[str, Any]) -> Check:
    # Records cached before checks had ids and a not-applicable state lack those keys.
    when = data.get("when_applicable")
    return Check(
        _read_text(data["name"]),
        data["passed"],
        _read_words(data["measured"]),
        _read_words(data["expected"]),
        id=data.get("id", ""),
        applicable=data.get("state", "passed") != "not_applicable",
        when_applicable=None if when is None else _read_text(when),
        conclusive=data.get("state", "passed") != "inconclusive",
    )


def result_from_dict(data: dict[str, Any]) -> Result:
    """Rebuild a :class:`Result` from :func:`result_to_dict` output."""
    return Result(
        checks=[
            _read_check(c)
            for c in data["checks"]
        ],
        figures=[_read_figure(f) for f in data["figures"]],
        tables=[
            Table(
                _read_text(t["title"]),
                [_read_text(c) for c in t["columns"]],
                [[_read_cell(v) for v in row] for row in t["rows"]],
                grid=bool(t.get("grid", False)),  # records written before the flag: not grids
            )
            for t in data["tables"]
        ],
        metrics={k: _read_cell(v) for k, v in data["metrics"].items()},
        notes=[_read_text(n) for n in data["notes"]],
    )


def dumps(data: Any) -> str:
    """Compact JSON with sorted keys (the cache stores this; it is also a cache key)."""
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
