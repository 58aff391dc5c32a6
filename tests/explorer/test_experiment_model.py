"""The experiment declaration API: params, progress hook, and the JSON round trip."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from whylab.explorer.content.i18n import param_error_message
from whylab.explorer.experiment import (
    Check,
    Experiment,
    GraphDiagram,
    GraphNode,
    LineChart,
    Param,
    ParamError,
    Result,
    Series,
    T,
    Table,
    experiment,
    progress_hook,
    report_progress,
)
from whylab.explorer.runs import result_json
from whylab.explorer.runs.result_json import (
    SerializationError,
    dumps,
    result_from_dict,
    result_to_dict,
)
from whylab.explorer.runs.service import format_param
from whylab.explorer.web.render import format_value


def test_param_bounds_name_the_bound():
    p = Param("phase", "float", 0.0, T("phase", "相位"), minimum=-3.0, maximum=3.0)
    assert p.parse("1.5") == 1.5
    with pytest.raises(ParamError, match=r"phase: must be <= 3 \(got 7\)"):
        p.parse("7")
    with pytest.raises(ParamError, match="must be >= -3"):
        p.parse(-4)
    for bad in ("nan", "inf", "abc", "", "1e999"):
        with pytest.raises(ParamError):
            p.parse(bad)


@pytest.mark.parametrize(
    "kind, raw, reason, bound, en, zh",
    [
        (
            "float",
            "7",
            "above",
            6.283185307179586,
            "φ: must be ≤ 6.283185307 (got 7)",
            "φ：必须 ≤ 6.283185307（当前值 7）",
        ),
        ("float", "-1", "below", 0.0, "φ: must be ≥ 0 (got -1)", "φ：必须 ≥ 0（当前值 -1）"),
        ("float", "abc", "not_float", None, "φ: must be a number", "φ：必须是数字"),
        ("float", "inf", "not_finite", None, "φ: must be a finite number", "φ：必须是有限的数"),
        ("int", "2.5", "not_int", None, "φ: must be a whole number", "φ：必须是整数"),
        ("int", "99", "above", 10, "φ: must be ≤ 10 (got 99)", "φ：必须 ≤ 10（当前值 99）"),
        ("choice", "x", "not_choice", None, "φ: must be one of a, b", "φ：必须是 a, b 之一"),
        ("bool", "maybe", "not_bool", None, "φ: must be true or false", "φ：必须是 true 或 false"),
    ],
)
def test_param_errors_say_which_rule_broke_in_both_languages(kind, raw, reason, bound, en, zh):
    extra = {
        "float": {"minimum": 0.0, "maximum": 6.283185307179586},
        "int": {"minimum": 0, "maximum": 10},
        "choice": {"choices": ("a", "b")},
        "bool": {},
    }[kind]
    default = {"float": 1.0, "int": 1, "choice": "a", "bool": False}[kind]
    param = Param("phi", kind, default, T("φ", "φ"), **extra)
    with pytest.raises(ParamError) as caught:
        param.parse(raw)
    error = caught.value
    assert (error.param, error.reason, error.bound, error.raw) == ("phi", reason, bound, raw)
    exp = Experiment("e", T("e", "e"), T("e", "e"), (param,), lambda **_: Result())
    assert param_error_message(error, exp, "en") == en
    assert param_error_message(error, exp, "zh") == zh


def test_unknown_parameters_are_named_as_given():
    exp = Experiment("e", T("e", "e"), T("e", "e"), (), lambda **_: Result())
    with pytest.raises(ParamError) as caught:
        exp.parse_params({"zz": "1"})
    assert caught.value.reason == "unknown"
    assert param_error_message(caught.value, exp, "zh") == "zz：未知参数"


def test_int_choice_and_bool_params():
    n = Param("n", "int", 4, T("n", "n"), minimum=1, maximum=10)
    assert n.parse("7") == 7 and isinstance(n.parse("7"), int)
    with pytest.raises(ParamError):
        n.parse("2.5")
    c = Param("mode", "choice", "a", T("m", "m"), choices=("a", "b"))
    with pytest.raises(ParamError, match="one of a, b"):
        c.parse("__import__('os')")
    b = Param("flag", "bool", False, T("f", "f"))
    assert b.parse("true") is True and b.parse("off") is False
    with pytest.raises(ParamError):
        b.parse("maybe")


def test_a_default_outside_its_bounds_fails_at_declaration():
    with pytest.raises(ParamError):
        Param("x", "int", 50, T("x", "x"), minimum=0, maximum=10)


def make_experiment():
    @experiment(
        name="demo",
        title=T("Demo", "示例"),
        description=T("d", "d"),
        params=[
            Param("x", "float", 1, T("x", "x"), minimum=0, maximum=10),
            Param("seed", "int", 0, T("seed", "种子"), minimum=0, maximum=99, seed=True),
        ],
    )
    def demo(x, seed):
        report_progress(0.5)
        report_progress(3.0)
        return Result(metrics={"x": x, "seed": seed})

    return demo


def test_parse_params_fills_parsed_defaults_and_rejects_unknown_names():
    demo = make_experiment()
    assert demo.defaults() == {"x": 1.0, "seed": 0}
    assert isinstance(demo.defaults()["x"], float)
    assert demo.parse_params({"seed": "5"}) == {"x": 1.0, "seed": 5}
    with pytest.raises(ParamError, match="unknown parameter"):
        demo.parse_params({"bogus": "1"})


def test_progress_reaches_the_hook_clamped_and_only_inside_the_block():
    demo = make_experiment()
    seen: list[float] = []
    with progress_hook(seen.append):
        demo.run(**demo.defaults())
    demo.run(**demo.defaults())  # no hook: nothing happens, nothing breaks
    assert seen == [0.5, 1.0]


def full_result() -> Result:
    return Result(
        checks=[Check(T("ok", "好"), True, "1e-12", "< 1e-9")],
        figures=[
            LineChart(
                T("c", "图"),
                T("x", "x"),
                T("y", "y"),
                [Series(T("s", "s"), np.arange(3.0), np.array([1.0, np.nan, np.inf]))],
                log_y=True,
            ),
            GraphDiagram(
                T("g", "图"),
                [GraphNode("a", "A"), GraphNode("b", "B", "d", "grp")],
                [("a", "b", "e")],
            ),
            LineChart(
                T("plane", "平面"),
                T("x", "x"),
                T("y", "y"),
                [Series(T("p", "点"), [0.0, 1.0], [0.0, 2.0], draw="points")],
                equal_aspect=True,
            ),
        ],
        tables=[
            Table(
                T("t", "表"),
                [T("a", "甲"), T("b", "乙")],
                [[np.int64(3), np.float64(0.5)], ["x", np.bool_(True)]],
            )
        ],
        metrics={"count": np.int32(4), "ratio": 0.25, "name": "fft", "bad": float("nan"),
                 "bound": float("inf"), "floor": -np.inf},
        notes=[T("note", "注")],
    )


def test_results_survive_the_json_round_trip():
    data = result_to_dict(full_result())
    text = dumps(data)  # strict JSON: NaN/inf became tagged objects
    assert "NaN" not in text and "Infinity" not in text
    again = result_from_dict(json.loads(text))
    assert again.checks == full_result().checks
    assert again.passed
    series = again.figures[0].series[0]
    assert series.x == [0.0, 1.0, 2.0]
    assert series.y[0] == 1.0 and math.isnan(series.y[1]) and series.y[2] == math.inf
    assert again.figures[0].log_y is True
    assert (series.draw, again.figures[0].equal_aspect) == ("line", False)
    plane = again.figures[2]
    assert plane.equal_aspect is True and plane.series[0].draw == "points"
    assert again.figures[1] == full_result().figures[1].__class__(
        T("g", "图"), [GraphNode("a", "A"), GraphNode("b", "B", "d", "grp")], [("a", "b", "e")]
    )
    assert again.tables[0].rows == [[3, 0.5], ["x", True]]  # a bool stays a bool
    assert again.metrics["count"] == 4 and again.metrics["name"] == "fft"
    assert math.isnan(again.metrics["bad"])
    # a reader sees metrics and table cells: infinity stays infinity, not NaN
    assert again.metrics["bound"] == math.inf and again.metrics["floor"] == -math.inf
    assert result_to_dict(again) == data


def test_infinite_table_cells_read_back_as_infinity_and_show_as_infinity():
    table = Table(T("t", "表"), [T("a", "甲")], [[np.float32(np.inf)], [-math.inf], [math.nan]])
    again = result_from_dict(json.loads(dumps(result_to_dict(Result(tables=[table])))))
    rows = again.tables[0].rows
    assert rows[0] == [math.inf] and rows[1] == [-math.inf] and math.isnan(rows[2][0])
    assert [format_value(row[0]) for row in rows] == ["∞", "−∞", "NaN"]
    # a record cached before the tags held null, which still reads as NaN
    assert math.isnan(result_json._read_cell(None))


def test_check_values_with_words_keep_both_languages_through_json():
    check = Check(T("claim", "结论"), True, T("3 runs", "执行 3 次"), "≤ 3")
    assert check.measured_in("zh") == "执行 3 次" and check.measured_in("en") == "3 runs"
    assert check.expected_in("zh") == check.expected_in("en") == "≤ 3"
    data = json.loads(dumps(result_to_dict(Result(checks=[check]))))
    assert data["checks"][0]["measured"] == {"en": "3 runs", "zh": "执行 3 次"}
    assert data["checks"][0]["expected"] == "≤ 3"
    assert result_from_dict(data).checks == [check]
    # A record cached when check values were always strings still reads.
    data["checks"][0]["measured"] = "3 runs"
    assert result_from_dict(data).checks[0].measured_in("zh") == "3 runs"
    # Table cells may hold words too; metrics may not.
    table = Table(T("t", "表"), [T("kind", "种类")], [[T("copy", "复制")], ["mm"]])
    again = result_from_dict(json.loads(dumps(result_to_dict(Result(tables=[table])))))
    assert again.tables[0].rows == [[T("copy", "复制")], ["mm"]]
    with pytest.raises(SerializationError):
        result_to_dict(Result(metrics={"kind": T("copy", "复制")}))
    with pytest.raises(TypeError, match="measured must be str or Text"):
        Check(T("claim", "结论"), True, 3.0, "3")


def test_pins_and_direction_survive_the_json_round_trip():
    diagram = GraphDiagram(
        T("g", "图"),
        [GraphNode("a", "A", layer=2, order=1.5), GraphNode("b", "B")],
        [("a", "b", "")],
        direction="LR",
    )
    data = json.loads(dumps(result_to_dict(Result(figures=[diagram]))))
    assert result_from_dict(data).figures[0] == diagram
    # A record cached before pins existed still reads, as an automatic layout.
    for node in data["figures"][0]["nodes"]:
        del node["layer"], node["order"]
    del data["figures"][0]["direction"]
    old = result_from_dict(data).figures[0]
    assert old.direction == "TB" and all(n.layer is None and n.order is None for n in old.nodes)


def test_unserializable_results_are_refused():
    with pytest.raises(SerializationError):
        result_to_dict({"not": "a result"})
    with pytest.raises(SerializationError):
        result_to_dict(Result(metrics={"x": object()}))
    with pytest.raises(SerializationError):
        result_to_dict(Result(notes=["plain string"]))


@pytest.mark.parametrize("value", [0.1, 1e-300, 12345.678, -2.5, 3, True, False, "hann"])
def test_formatted_params_parse_back_exactly(value):
    kind = {bool: "bool", int: "int", float: "float", str: "choice"}[type(value)]
    extra = {"choices": ("hann",)} if kind == "choice" else {}
    if kind in ("int", "float"):
        extra = {"minimum": -1e6, "maximum": 1e6}
    param = Param("p", kind, value, T("p", "p"), **extra)
    assert param.parse(format_param(value)) == value


def test_bound_messages_name_the_bound_exactly_enough_to_type_it():
    import math

    phase = Param("phase", "float", 1.0, T("phase", "相位"), minimum=0.0, maximum=2 * math.pi)
    with pytest.raises(ParamError) as caught:
        phase.parse("99")
    # Six digits would say 6.28319, a number that is itself above the bound.
    assert str(caught.value) == "phase: must be <= 6.283185307 (got 99)"
    assert float("6.283185307") <= phase.maximum
