"""The process that runs one topic's experiments at their defaults, against whatever code
is on its ``sys.path`` (the runner points it at a copy of the package holding a mutant).

``python -m whylab.mutation.worker [--controls] MODULE [EXPERIMENT ...]`` imports the
experiments module (``whylab.topics.fft.experiments``), runs the named experiments (all
of its ``EXPERIMENTS``, in declaration order, when none are named) and stops at the
first one with a failed check, a check no longer applicable, or an exception: one is
enough to kill a mutant (the baseline passes every check at the defaults). A run with a
check left inconclusive is rerun whole, as ``whylab check`` does; a timing experiment
(``timing=True``) that fails is rerun too, up to ``RERUNS`` times, and kills only if
it fails every time, so noise on a busy machine is not counted as a caught bug. It
prints one JSON line per experiment (name, outcome, seconds, the failed check).

With ``--controls`` (the runner passes it when a file under test holds negative
controls, i.e. calls ``control_active``), a run that passed at the defaults then audits
each experiment under its controls, as ``whylab check --controls`` does: a mutant in a
control's own code that stops the control from breaking a check it declares is killed
there, since the page's claim "this check can fail" would then be false. Exit codes:

* 0 -- every check passed (and, with ``--controls``, every control broke what it
  declares): a mutant survives;
* 1 -- a check failed or became not applicable, an experiment raised, or (with
  ``--controls``) the audit found a problem: killed;
* 3 -- nothing failed, but a timing check stayed inconclusive (no evidence: survives).
"""

from __future__ import annotations

import importlib
import json
import sys
import time
import traceback

from whylab.explorer.content.controls import RERUNS, audit_experiment
from whylab.explorer.experiment import Experiment, Result

EXIT_SURVIVED, EXIT_KILLED, EXIT_INCONCLUSIVE = 0, 1, 3


def experiments_module(slug: str) -> str:
    """The module that holds a whylab topic's ``EXPERIMENTS``."""
    return f"whylab.topics.{slug.replace('-', '_')}.experiments"


def module_experiments(module_name: str) -> list[Experiment]:
    """The experiments, straight from their module (no registry, no prose to load)."""
    return list(importlib.import_module(module_name).EXPERIMENTS)


def _run(experiment: Experiment) -> Result:
    for _ in range(RERUNS + 1):
        result = experiment.run(**experiment.defaults())
        if not result.inconclusive:
            break
    return result


def _failed(result: Result) -> list[str]:
    return [c.id or c.name.en for c in result.checks if c.state in ("failed", "not_applicable")]


def run_experiments(module_name: str, names: list[str], controls: bool = False) -> int:
    experiments = module_experiments(module_name)
    if names:
        by_name = {e.name: e for e in experiments}
        experiments = [by_name[name] for name in names]
    undecided = False
    for experiment in experiments:
        started = time.perf_counter()
        line = {"experiment": experiment.name}
        try:
            result = _run(experiment)
        except Exception as error:  # a mutant that makes an experiment raise is caught
            line |= {"outcome": "raised", "error": f"{type(error).__name__}: {error}",
                     "trace": traceback.format_exc(limit=3)}
            print(json.dumps(line), flush=True)
            return EXIT_KILLED
        failed = _failed(result)
        retries = 0
        while failed and experiment.timing and retries < RERUNS:
            # A timing check can fail on a busy machine with no mutant to blame (the
            # baseline passed it): a timing experiment kills only if it fails every run.
            retries += 1
            try:
                result = _run(experiment)
            except Exception:
                break  # raised now: the failed run above stands
            failed = _failed(result)
        line["seconds"] = round(time.perf_counter() - started, 3)
        if retries:
            line["timing_reruns"] = retries
        if failed:
            print(json.dumps(line | {"outcome": "failed", "checks": failed}), flush=True)
            return EXIT_KILLED
        if result.inconclusive:
            undecided = True
            line["inconclusive"] = [c.id for c in result.inconclusive]
        print(json.dumps(line | {"outcome": "passed"}), flush=True)
    if controls and audit_controls(experiments) == EXIT_KILLED:
        return EXIT_KILLED
    return EXIT_INCONCLUSIVE if undecided else EXIT_SURVIVED


def audit_controls(experiments: list[Experiment]) -> int:
    """Audit each experiment under its controls; EXIT_KILLED at the first with a problem."""
    for experiment in experiments:
        if not experiment.controls:
            continue
        started = time.perf_counter()
        audit = audit_experiment("mutant", experiment)
        line = {"experiment": experiment.name, "controls": True,
                "seconds": round(time.perf_counter() - started, 3)}
        if audit.problems:
            print(json.dumps(line | {"outcome": "failed", "checks": audit.problems[:1]}),
                  flush=True)
            return EXIT_KILLED
        print(json.dumps(line | {"outcome": "passed"}), flush=True)
    return EXIT_SURVIVED


if __name__ == "__main__":
    arguments = sys.argv[1:]
    with_controls = arguments[:1] == ["--controls"]
    arguments = arguments[1:] if with_controls else arguments
    sys.exit(run_experiments(arguments[0], arguments[1:], with_controls))
