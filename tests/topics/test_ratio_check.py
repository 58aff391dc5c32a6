"""The ratio checks the topics share (whylab.topics.shared.ratio_check and timing_check).

Three topics once had a ratio check each: strided-tensors (inclusive bound, ratio
shown to two decimals), fft (inclusive, at-least only, three significant digits)
and dispatcher (strict bound). ``ON_MAIN`` is what each call site showed before
they became one helper, captured from the three old helpers for a fixed set of
ratios -- the bound itself, just either side of it, and values that tell the
number formats apart. The test runs each topic's experiment, records how every
call site calls the shared helper now, and replays those calls at the captured
ratios: every check keeps its bound, its strictness and its displayed text.

The timing call sites have since moved to ``timing_check``, which decides on the
interval of per-round ratios; replayed with seven rounds all at the captured ratio
(an interval of one point) each keeps its bound, its strictness, its verdict and
its number format (the measured text now goes on to show the interval).
"""

from __future__ import annotations

import pytest

from whylab.explorer.experiment import Experiment, T
from whylab.topics.dispatcher import overhead_experiment
from whylab.topics.fft import accuracy, cost
from whylab.topics.shared import ratio_check, timing_check
from whylab.topics.strided_tensors import costs

NAME = T("a ratio", "一个比值")

# Two bounds two call sites each use (strided-tensors: at most 4×, at least 10×), as on main.
AT_MOST_4 = [
    (0.0123456, True, "0.01×", "≤ 4×"),
    (1.005, True, "1.00×", "≤ 4×"),
    (1.23456, True, "1.23×", "≤ 4×"),
    (2.0, True, "2.00×", "≤ 4×"),
    (3.999999996, True, "4.00×", "≤ 4×"),
    (4.0, True, "4.00×", "≤ 4×"),
    (4.000000004, False, "4.00×", "≤ 4×"),
    (8.0, False, "8.00×", "≤ 4×"),
    (123.456, False, "123.46×", "≤ 4×"),
]
AT_LEAST_10 = [
    (0.0123456, False, "0.01×", "≥ 10×"),
    (1.005, False, "1.00×", "≥ 10×"),
    (1.23456, False, "1.23×", "≥ 10×"),
    (5.0, False, "5.00×", "≥ 10×"),
    (9.999999990000001, False, "10.00×", "≥ 10×"),
    (10.0, True, "10.00×", "≥ 10×"),
    (10.00000001, True, "10.00×", "≥ 10×"),
    (20.0, True, "20.00×", "≥ 10×"),
    (123.456, True, "123.46×", "≥ 10×"),
]

# check id: (topic, experiment, [(ratio, passed, measured, expected), ...]) as on main 077df40
ON_MAIN = {
    "transpose-time-flat": ("strided-tensors", "copy-cost", AT_MOST_4),
    "self-return-cheaper-than-copy": ("strided-tensors", "copy-cost", AT_LEAST_10),
    "view-cheaper-than-copy": ("strided-tensors", "copy-cost", AT_LEAST_10),
    "lone-transposed-not-slower": ("strided-tensors", "copy-cost", AT_MOST_4),
    "mixed-layouts-slower": ("strided-tensors", "copy-cost", [
        (0.0123456, False, "0.01×", "≥ 2×"),
        (1.0, False, "1.00×", "≥ 2×"),
        (1.005, False, "1.00×", "≥ 2×"),
        (1.23456, False, "1.23×", "≥ 2×"),
        (1.999999998, False, "2.00×", "≥ 2×"),
        (2.0, True, "2.00×", "≥ 2×"),
        (2.000000002, True, "2.00×", "≥ 2×"),
        (4.0, True, "4.00×", "≥ 2×"),
        (123.456, True, "123.46×", "≥ 2×"),
    ]),
    "dft-slower-than-fft": ("fft", "cost-growth", [
        (0.0123456, False, "0.0123×", "≥ 10×"),
        (1.005, False, "1×", "≥ 10×"),
        (1.23456, False, "1.23×", "≥ 10×"),
        (5.0, False, "5×", "≥ 10×"),
        (9.999999990000001, False, "10×", "≥ 10×"),
        (10.0, True, "10×", "≥ 10×"),
        (10.00000001, True, "10×", "≥ 10×"),
        (20.0, True, "20×", "≥ 10×"),
        (123.456, True, "123×", "≥ 10×"),
    ]),
    "dft-time-is-exponentials": ("fft", "cost-growth", [
        (0.0123456, False, "0.0123×", "≥ 3×"),
        (1.005, False, "1×", "≥ 3×"),
        (1.23456, False, "1.23×", "≥ 3×"),
        (1.5, False, "1.5×", "≥ 3×"),
        (2.999999997, False, "3×", "≥ 3×"),
        (3.0, True, "3×", "≥ 3×"),
        (3.0000000030000002, True, "3×", "≥ 3×"),
        (6.0, True, "6×", "≥ 3×"),
        (123.456, True, "123×", "≥ 3×"),
    ]),
    "fft-beats-in-order-sum": ("fft", "accuracy", [
        (0.0123456, False, "0.0123×", "≥ 2×"),
        (1.0, False, "1×", "≥ 2×"),
        (1.005, False, "1×", "≥ 2×"),
        (1.23456, False, "1.23×", "≥ 2×"),
        (1.999999998, False, "2×", "≥ 2×"),
        (2.0, True, "2×", "≥ 2×"),
        (2.000000002, True, "2×", "≥ 2×"),
        (4.0, True, "4×", "≥ 2×"),
        (123.456, True, "123×", "≥ 2×"),
    ]),
    "small-overhead-dominates": ("dispatcher", "overhead", [
        (0.0123456, False, "0.01×", "> 2×"),
        (1.0, False, "1.00×", "> 2×"),
        (1.005, False, "1.00×", "> 2×"),
        (1.23456, False, "1.23×", "> 2×"),
        (1.999999998, False, "2.00×", "> 2×"),
        (2.0, False, "2.00×", "> 2×"),
        (2.000000002, True, "2.00×", "> 2×"),
        (4.0, True, "4.00×", "> 2×"),
        (123.456, True, "123.46×", "> 2×"),
    ]),
    "large-arithmetic-dominates": ("dispatcher", "overhead", [
        (0.0123456, True, "0.01×", "< 1.5×"),
        (0.75, True, "0.75×", "< 1.5×"),
        (1.005, True, "1.00×", "< 1.5×"),
        (1.23456, True, "1.23×", "< 1.5×"),
        (1.4999999985, True, "1.50×", "< 1.5×"),
        (1.5, False, "1.50×", "< 1.5×"),
        (1.5000000015000001, False, "1.50×", "< 1.5×"),
        (3.0, False, "3.00×", "< 1.5×"),
        (123.456, False, "123.46×", "< 1.5×"),
    ]),
    "recording-costs": ("dispatcher", "overhead", [
        (0.0123456, False, "0.01×", "> 1.2×"),
        (0.6, False, "0.60×", "> 1.2×"),
        (1.005, False, "1.00×", "> 1.2×"),
        (1.1999999988, False, "1.20×", "> 1.2×"),
        (1.2, False, "1.20×", "> 1.2×"),
        (1.2000000012, True, "1.20×", "> 1.2×"),
        (1.23456, True, "1.23×", "> 1.2×"),
        (2.4, True, "2.40×", "> 1.2×"),
        (123.456, True, "123.46×", "> 1.2×"),
    ]),
}

# The modules whose experiments call ratio_check, and the experiment in each that does.
CALL_SITES = [
    (costs, "copy-cost"),
    (cost, "cost-growth"),
    (accuracy, "accuracy"),
    (overhead_experiment, "overhead"),
]


def experiment_named(module, name: str) -> Experiment:
    return next(v for v in vars(module).values() if isinstance(v, Experiment) and v.name == name)


ROUNDS = 7


def recorded_calls(monkeypatch) -> dict[str, tuple[object, tuple, dict]]:
    """Run each call site's experiment at its defaults; how it called the shared helpers
    (which helper, and its arguments besides the ratio), by check id."""
    calls: dict[str, tuple[object, tuple, dict]] = {}

    def spying_on(helper):
        def spy(check_id, name, ratio, *args, **kwargs):
            calls[check_id] = (helper, args, kwargs)
            return helper(check_id, name, ratio, *args, **kwargs)

        return spy

    for module, name in CALL_SITES:
        for helper_name, helper in (("ratio_check", ratio_check), ("timing_check", timing_check)):
            if hasattr(module, helper_name):
                monkeypatch.setattr(module, helper_name, spying_on(helper))
        experiment = experiment_named(module, name)
        experiment.run(**cheapest(experiment))
    return calls


def cheapest(experiment: Experiment) -> dict:
    """The defaults with every number at its minimum: the bounds the call sites pass do
    not depend on the parameters, and the timing experiments are slow at their defaults."""
    params = experiment.defaults()
    for param in experiment.params:
        if param.kind == "int" and not param.seed:
            params[param.name] = param.parse(param.minimum)
    return params


def test_every_call_site_keeps_its_bound_and_its_text(monkeypatch):
    calls = recorded_calls(monkeypatch)
    # Timing claims that were never ratio checks (fitted exponents) now use timing_check too.
    assert set(ON_MAIN) <= set(calls), "a call site disappeared"
    assert {c for c, (helper, _, _) in calls.items() if helper is ratio_check} <= set(ON_MAIN)
    changed = []
    for check_id, (_, _, rows) in ON_MAIN.items():
        helper, args, kwargs = calls[check_id]
        for ratio, passed, measured, expected in rows:
            given = [ratio] * ROUNDS if helper is timing_check else ratio
            check = helper(check_id, NAME, given, *args, **kwargs)
            for lang in ("en", "zh"):
                shown_measured = check.measured_in(lang)
                if helper is timing_check and shown_measured.startswith(measured):
                    shown_measured = measured  # then "(median of 7 rounds; ... interval ...)"
                shown = (check.passed, shown_measured, check.expected_in(lang))
                if shown != (passed, measured, expected):
                    changed.append(f"{check_id} at {ratio!r} ({lang}): {shown}, on main "
                                   f"{(passed, measured, expected)}")
    assert not changed, changed


def test_the_bound_is_inclusive_unless_strict_and_the_format_is_a_parameter():
    assert ratio_check("r", NAME, 2.0, at_least=2.0).passed
    assert not ratio_check("r", NAME, 2.0, at_least=2.0, strict=True).passed
    assert ratio_check("r", NAME, 1.5, at_most=1.5).passed
    assert not ratio_check("r", NAME, 1.5, at_most=1.5, strict=True).passed
    assert ratio_check("r", NAME, float("nan"), at_least=1.0).passed is False
    check = ratio_check("r", NAME, 123.456, at_most=4.0, strict=True, number_format=".3g")
    assert (check.measured_in("en"), check.expected_in("zh")) == ("123×", "< 4×")


@pytest.mark.parametrize("bounds", [{}, {"at_least": 2.0, "at_most": 3.0}])
def test_a_ratio_check_needs_exactly_one_bound(bounds):
    with pytest.raises(ValueError, match="exactly one of at_least and at_most"):
        ratio_check("r", NAME, 1.0, **bounds)
