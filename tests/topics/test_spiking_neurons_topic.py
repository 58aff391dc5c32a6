"""The spiking-neurons topic: defaults pass, premises not reached are "not applicable",
and the controls break what they claim (the whole audit runs in
test_every_topic_survives_its_controls; here the cases it cannot see)."""

from __future__ import annotations

import pytest

from whylab.explorer.experiment import ParamError, switched_on
from whylab.topics.spiking_neurons import events, learning
from whylab.topics.spiking_neurons import experiments as topic

BY_NAME = {e.name: e for e in topic.EXPERIMENTS}


def run(name, control=None, **overrides):
    experiment = BY_NAME[name]
    with switched_on(control):
        return experiment.run(**experiment.parse_params(overrides))


@pytest.mark.parametrize("name", ["fi-curve", "stdp-window", "yin-yang-data", "bptt-surrogate",
                                  "ultralif-bounds", "eventprop-gradient"])
def test_defaults_pass_every_check(name):
    result = run(name)
    assert result.checks and result.passed
    assert all(c.applicable for c in result.checks), [c.id for c in result.checks]


def test_every_experiment_is_placed_in_both_languages():
    from pathlib import Path

    folder = Path(topic.__file__).parent
    for lang in ("en", "zh"):
        text = (folder / f"{lang}.md").read_text(encoding="utf-8")
        placed = [line.split(":")[1].strip(" }") for line in text.splitlines()
                  if line.startswith("{{ ")]
        assert placed == [e.name for e in topic.EXPERIMENTS]


def test_fi_curve_premises_not_reached_are_not_applicable():
    above_only = run("fi-curve", i_min=1.5, i_max=3.0)
    assert above_only.check("silent-below-rheobase").state == "not_applicable"
    below_only = run("fi-curve", i_min=0.1, i_max=0.9)
    assert below_only.check("rates-match-closed-form").state == "not_applicable"
    assert below_only.check("silent-below-rheobase").state == "passed"


def test_wrong_leak_makes_silent_neurons_fire():
    result = run("fi-curve", control="leak-wrong-sign")
    assert result.check("silent-below-rheobase").state == "failed"


def test_accuracy_bound_depends_on_run_length():
    short = learning.accuracy_check("a", learning.CLASS_NAMES[0], 0.5, 1, 5000, 0.6, 100)
    assert short.state == "not_applicable"
    assert learning.accuracy_check("a", learning.CLASS_NAMES[0], 0.7, 2, 800, 0.6, 50).state \
        == "not_applicable"
    default = learning.accuracy_check("a", learning.CLASS_NAMES[0], 0.7, 3, 800, 0.6, 50)
    assert default.state == "passed" and default.expected == "≥ 60%"
    full = learning.accuracy_check("a", learning.CLASS_NAMES[0], 0.93, 150, 5000, 0.6, 100)
    assert full.state == "failed" and full.expected == "≥ 93.5%"
    assert learning.accuracy_check("a", learning.CLASS_NAMES[0], 0.945, 100, 5000, 0.6, 100).state \
        == "passed"
    # A narrower network than the logged full runs' is held to the short run's bound only.
    assert learning.accuracy_check("a", learning.CLASS_NAMES[0], 0.9, 100, 5000, 0.6, 50) \
        .expected == "≥ 60%"


def test_eventprop_bound_depends_on_run_length():
    short = events.learning_check(0.35, 0.6, 1, 5000, 200)
    assert short.state == "not_applicable"
    default = events.learning_check(0.35, 0.46, 2, 480, 60)
    assert default.state == "failed" and default.expected.en == "≥ +10 points, ≥ 50%"
    assert events.learning_check(0.35, 0.56, 2, 480, 60).state == "passed"
    full = events.learning_check(0.22, 0.92, 10, 5000, 200)
    assert full.state == "failed" and full.expected == "≥ 93%"
    assert events.learning_check(0.22, 0.93, 40, 5000, 200).state == "passed"
    # Fewer hidden neurons than the paper's is not the full run the bound is for.
    assert events.learning_check(0.22, 0.9, 40, 5000, 100).expected.en == "≥ +10 points, ≥ 50%"


def test_out_of_range_parameters_are_refused():
    with pytest.raises(ParamError, match="epochs"):
        BY_NAME["yin-yang-bptt"].parse_params({"epochs": 0})
    with pytest.raises(ParamError, match="dt_max"):
        BY_NAME["integrator-order"].parse_params({"dt_max": 5})
