"""The process that runs one topic's experiments at their defaults, against whatever code
is on its ``sys.path`` (the runner points it at a copy of the package holding a mutant).

``python -m whylab.mutation.worker MODULE [EXPERIMENT ...]`` imports the experiments module
(``whylab.topics.fft.experiments``), runs the named experiments (all of its
``EXPERIMENTS``, in declaration order, when none are named) and stops at the first one
with a failed check, a check no longer applicable, or an exception: one is enough to
kill a mutant (the baseline passes every check at the defaults). A run with a check
left inconclusive is rerun whole, as ``whylab check`` does. It prints one JSON line per
experiment (name, outcome, seconds, the failed check) and exits with

* 0 -- every check passed (a mutant survives);
* 1 -- a check failed or became not applicable, or an experiment raised (killed);
* 3 -- nothing failed, but a timing check stayed inconclusive (no evidence: survives).
"""

from __future__ import annotations

import importlib
import json
import sys
import time
import traceback

from whylab.explorer.content.controls import RERUNS
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


def run_experiments(module_name: str, names: list[str]) -> int:
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
        line["seconds"] = round(time.perf_counter() - started, 3)
        failed = [c.id or c.name.en for c in result.checks
                  if c.state in ("failed", "not_applicable")]
        if failed:
            print(json.dumps(line | {"outcome": "failed", "checks": failed}), flush=True)
            return EXIT_KILLED
        if result.inconclusive:
            undecided = True
            line["inconclusive"] = [c.id for c in result.inconclusive]
        print(json.dumps(line | {"outcome": "passed"}), flush=True)
    return EXIT_INCONCLUSIVE if undecided else EXIT_SURVIVED


if __name__ == "__main__":
    sys.exit(run_experiments(sys.argv[1], sys.argv[2:]))
