"""Run an experiment under its negative controls and judge whether its checks can fail.

A check is evidence only if some plausible wrong answer makes it fail. Each
experiment declares :class:`~whylab.explorer.experiment.Control` s -- named
perturbations of its own computation -- and the checks each must break. This
module runs the experiment once at its defaults and once under every control
(never through the web app or the cache), then reports, for every check,
whether it passed at the defaults and which controls made it fail.

:func:`audit_experiment` returns the findings; ``problems`` lists everything
that makes the experiment's claims untrustworthy:

* a check that failed, or was not applicable, at the defaults;
* a check without an id, or two checks with one id;
* an *unfalsified* check: no control that declares it made it fail;
* a control that made no check fail, or left a check it declares passing;
* a control that names a check the experiment does not have, or that the
  experiment code never asks about (:func:`control_active` was not consulted);
* an experiment that raised.

A timing check can also be *inconclusive* (its ratio's confidence interval
straddles its bound; :mod:`whylab.bench.verdict`). That is no evidence either
way, so a run with one is rerun, whole, up to :data:`RERUNS` times, and the
first run in which the checks that matter are all decided is judged (at the
defaults every check matters; under a control, the checks it declares). A
check still inconclusive at the defaults is listed in ``inconclusive`` -- not a
pass, not a problem: this machine, now, cannot tell. A control that leaves a
declared check inconclusive rather than failed has not broken it: that is a
problem, as a control leaving it passing is. Rerunning until decided lets noise
choose among a few decided runs; each decided verdict is still one run's 95 %
interval clearing its bound, and taking the whole run (never the best check of
several runs) keeps the checks of one result together.

``whylab check --controls`` prints this for every topic and exits non-zero on
any problem; the test suite runs it for every topic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from whylab.explorer.experiment import Control, Experiment, Result, switched_on


@dataclass
class CheckFinding:
    """One check of one experiment: its state at the defaults and what broke it."""

    id: str
    name: str  # English name, for reports
    state_at_defaults: str
    broken_by: list[str] = field(default_factory=list)  # controls declaring it and failing it
    also_broken_by: list[str] = field(default_factory=list)  # failed it without declaring it

    @property
    def falsified(self) -> bool:
        return bool(self.broken_by)


@dataclass
class ControlFinding:
    name: str
    breaks: tuple[str, ...]
    failed_checks: list[str] = field(default_factory=list)
    error: str = ""


@dataclass
class ExperimentAudit:
    """What :func:`audit_experiment` found for one experiment."""

    topic: str
    experiment: str
    checks: list[CheckFinding] = field(default_factory=list)
    controls: list[ControlFinding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    inconclusive: list[str] = field(default_factory=list)  # undecided at the defaults
    runs: int = 0  # experiment runs made, reruns of inconclusive results included

    @property
    def ok(self) -> bool:
        return not self.problems


RERUNS = 2  # extra runs allowed when a run leaves a check that matters inconclusive


def control_params(experiment: Experiment, control: Control | None) -> dict[str, Any]:
    """The parameters a run under ``control`` takes: the defaults, overlaid with what the
    control declares (None: the defaults). The audit here and a reader's control run on a
    page (:meth:`~whylab.explorer.runs.service.ExperimentService.run_control`) both run at
    these, and only these."""
    params = experiment.defaults()
    if control is not None:
        params.update(experiment.parse_params({**params, **control.params}))
    return params


def _run_once(experiment: Experiment, control: Control | None) -> tuple[Result, set[str]]:
    params = control_params(experiment, control)
    with switched_on(None if control is None else control.name) as asked:
        result = experiment.run(**params)
    if not isinstance(result, Result):
        raise TypeError(f"returned {type(result).__name__}, not Result")
    return result, asked


def _run(
    experiment: Experiment, control: Control | None, audit: ExperimentAudit
) -> tuple[Result, set[str]]:
    """One run, rerun whole while a check that matters is inconclusive (RERUNS at most)."""
    for _ in range(RERUNS + 1):
        result, asked = _run_once(experiment, control)
        audit.runs += 1
        undecided = {c.id for c in result.inconclusive}
        if control is not None:
            undecided &= set(control.breaks)
        if not undecided:
            break
    return result, asked


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


def audit_experiment(topic: str, experiment: Experiment) -> ExperimentAudit:
    """Run ``experiment`` at its defaults and under each control; judge its checks."""
    audit = ExperimentAudit(topic, experiment.name)
    where = f"{topic}/{experiment.name}"
    try:
        baseline, _ = _run(experiment, None, audit)
    except Exception as error:  # a broken experiment is a finding, not a crash of the audit
        audit.problems.append(f"{where}: raised at its defaults: {_describe(error)}")
        return audit

    by_id: dict[str, CheckFinding] = {}
    for check in baseline.checks:
        if not check.id:
            audit.problems.append(f"{where}: check {check.name.en!r} has no id")
            continue
        if check.id in by_id:
            audit.problems.append(f"{where}: two checks share the id {check.id!r}")
            continue
        finding = CheckFinding(check.id, check.name.en, check.state)
        by_id[check.id] = finding
        audit.checks.append(finding)
        if check.state == "failed":
            audit.problems.append(
                f"{where}: check {check.id!r} failed at the defaults: measured "
                f"{check.measured_in('en')}, expected {check.expected_in('en')}"
            )
        elif check.state == "not_applicable":
            audit.problems.append(
                f"{where}: check {check.id!r} is not applicable at the defaults "
                f"({check.when_applicable.en if check.when_applicable else ''}); "
                "choose defaults that reach its premise"
            )
        elif check.state == "inconclusive":
            audit.inconclusive.append(
                f"{where}: check {check.id!r} is inconclusive on this machine now after "
                f"{RERUNS + 1} runs: measured {check.measured_in('en')}, expected "
                f"{check.expected_in('en')} (no evidence either way; rerun it)"
            )

    for control in experiment.controls:
        found = ControlFinding(control.name, control.breaks)
        audit.controls.append(found)
        for check_id in control.breaks:
            if check_id not in by_id:
                audit.problems.append(
                    f"{where}: control {control.name!r} names unknown check {check_id!r}"
                )
        try:
            perturbed, asked = _run(experiment, control, audit)
        except Exception as error:
            found.error = _describe(error)
            audit.problems.append(
                f"{where}: raised under control {control.name!r}: {found.error} "
                "(a control must produce a result whose checks fail, not an exception)"
            )
            continue
        if control.name not in asked:
            audit.problems.append(
                f"{where}: control {control.name!r} was never consulted by the experiment "
                "(no control_active() call with that name)"
            )
        found.failed_checks = [c.id for c in perturbed.checks if c.state == "failed" and c.id]
        if not found.failed_checks:
            audit.problems.append(f"{where}: control {control.name!r} made no check fail")
        for check_id in found.failed_checks:
            finding = by_id.get(check_id)
            if finding is None:
                continue
            if check_id in control.breaks:
                finding.broken_by.append(control.name)
            else:
                finding.also_broken_by.append(control.name)
        for check_id in control.breaks:
            if check_id in by_id and check_id not in found.failed_checks:
                state = perturbed.check(check_id)
                shown = "missing" if state is None else state.state.replace("_", " ")
                audit.problems.append(
                    f"{where}: control {control.name!r} must break check {check_id!r}, "
                    f"but it was {shown}"
                )

    for finding in audit.checks:
        if not finding.falsified:
            audit.problems.append(
                f"{where}: check {finding.id!r} is unfalsified: no control declares it and "
                "makes it fail"
            )
    return audit


def audit_experiments(topic: str, experiments: Iterable[Experiment]) -> list[ExperimentAudit]:
    """:func:`audit_experiment` for each of a topic's experiments."""
    return [audit_experiment(topic, experiment) for experiment in experiments]
