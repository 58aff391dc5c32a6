"""Run a topic's experiments against each of its mutants and classify the outcomes.

The code is never mutated in place: the package is copied once into a temporary folder,
each mutant is written into the copy (and the original text put back after), and every
run is a fresh process (:mod:`whylab.mutation.worker`) whose ``sys.path`` starts at the
copy, with ``PYTHONDONTWRITEBYTECODE=1`` and an empty ``NUMBA_CACHE_DIR`` of its own (see
:mod:`whylab.mutation` for why). First the unmutated copy runs -- the *baseline*: it
must pass, and its time sets each mutant's timeout (``TIMEOUT_FACTOR`` × baseline +
``TIMEOUT_SLACK_S``; a mutant that turns a loop infinite is stopped there). Then each
mutant, with the experiments in the order of their baseline time, fastest first, so a
killed mutant is usually caught early. When a file under test holds negative controls
(it calls ``control_active``), every run -- the baseline too -- also audits the
experiments under their controls once the defaults pass (the worker's ``--controls``):
a mutant that leaves a control breaking nothing it declares is killed.

Outcomes: *killed* (a check failed, became not applicable, an experiment raised, or the
process crashed),
*timed out* (counted as caught, as mutmut and cosmic-ray count it), *survived* (every
check still passed, or a timing check stayed inconclusive), *equivalent* (listed in the
topic's ``equivalent_mutants.toml`` with a reason, and not run). The score is
(killed + timed out) / (mutants tried − equivalent).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from whylab.mutation.mutants import Mutant, all_mutants, mutated_source, sample
from whylab.mutation.worker import EXIT_INCONCLUSIVE, EXIT_KILLED, EXIT_SURVIVED

TIMEOUT_FACTOR = 5.0  # room for a timing experiment rerun after a failure (the worker)
TIMEOUT_SLACK_S = 30.0


@dataclass(frozen=True)
class Equivalent:
    """A mutant declared equivalent: ``line`` is its source line when the reason was written."""

    id: str
    line: str
    reason: str


@dataclass(frozen=True)
class Target:
    """What to mutate and how to test it.

    ``root`` holds ``package`` (the folder copied for the runs) and the ``under_test``
    paths, relative to ``root``; ``module`` is the experiments module the worker runs.
    """

    slug: str
    root: Path
    package: str
    module: str
    under_test: tuple[str, ...]
    equivalents: tuple[Equivalent, ...] = ()
    extra_path: tuple[str, ...] = ()  # more sys.path entries after the copy (test fixtures)


@dataclass
class MutantOutcome:
    mutant: Mutant
    outcome: str  # "killed", "survived", "timed out", "equivalent"
    seconds: float = 0.0
    detail: str = ""  # which experiment and check caught it, or why it is equivalent


@dataclass
class TopicMutation:
    """The mutants of one topic and what became of each."""

    slug: str
    under_test: tuple[str, ...]
    mutants_total: int
    baseline_s: float = 0.0
    sampled: int | None = None  # the sample size asked for (None: every mutant)
    outcomes: list[MutantOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # a failing baseline, stale entries

    def count(self, outcome: str) -> int:
        return sum(o.outcome == outcome for o in self.outcomes)

    @property
    def score(self) -> float | None:
        """(killed + timed out) / (tried − equivalent); None when nothing was tried."""
        tried = len(self.outcomes) - self.count("equivalent")
        caught = self.count("killed") + self.count("timed out")
        return caught / tried if tried else None


def _environment(copy_root: Path, extra_path: Sequence[str], numba_cache: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy_root), *extra_path])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["NUMBA_CACHE_DIR"] = str(numba_cache)
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def holds_controls(target: Target) -> bool:
    """Whether a file under test switches negative controls in (calls ``control_active``)."""
    return any("control_active(" in (target.root / path).read_text(encoding="utf-8")
               for path in target.under_test)


def _run_worker(target: Target, copy_root: Path, order: Sequence[str], timeout_s: float | None):
    """One worker process over the copy: (exit code or None on timeout, seconds, lines)."""
    with tempfile.TemporaryDirectory(prefix="whylab-numba-") as numba_cache:
        flags = ["--controls"] if holds_controls(target) else []
        command = [sys.executable, "-m", "whylab.mutation.worker", *flags, target.module, *order]
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=copy_root, env=_environment(copy_root, target.extra_path,
                                                     Path(numba_cache)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)  # the worker and anything it started
            process.communicate()
            return None, time.perf_counter() - started, []
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if not lines and err:
        lines = [{"outcome": "raised", "error": err.strip().splitlines()[-1]}]
    return process.returncode, time.perf_counter() - started, lines


def _caught_by(lines: list[dict]) -> str:
    last = lines[-1] if lines else {}
    if last.get("outcome") == "failed":
        under = " under its controls" if last.get("controls") else ""
        return f"{last['experiment']}{under}: {', '.join(last['checks'])}"
    if last.get("outcome") == "raised":
        return f"{last.get('experiment', 'import')}: raised {last.get('error', '')}"[:200]
    return ""


def run_mutants(
    target: Target,
    sample_size: int | None = None,
    *,
    seed: int = 0,
    on_mutant: Callable[[MutantOutcome, int, int], object] | None = None,
    timeout_factor: float = TIMEOUT_FACTOR,
    timeout_slack_s: float = TIMEOUT_SLACK_S,
    only: Sequence[str] | None = None,
) -> TopicMutation:
    """Run ``target``'s experiments against its mutants (a fixed sample of ``sample_size``,
    or ``only`` the mutants with these ids)."""
    mutants = all_mutants(target.root, target.under_test)
    report = TopicMutation(target.slug, target.under_test, len(mutants), sampled=sample_size)
    by_id = {m.id: m for m in mutants}
    equivalent: dict[str, Equivalent] = {}
    for entry in target.equivalents:
        found = by_id.get(entry.id)
        if found is None or found.source_line != entry.line:
            report.problems.append(
                f"{target.slug}: equivalent mutant {entry.id} is stale (its line now reads "
                f"{found.source_line if found else 'nothing: no such mutant'!r}); check it again"
            )
        else:
            equivalent[entry.id] = entry
    chosen = sample(mutants, sample_size, seed)
    if only is not None:
        chosen = [m for m in mutants if m.id in set(only)]
    with tempfile.TemporaryDirectory(prefix="whylab-mutants-") as temporary:
        copy_root = Path(temporary)
        shutil.copytree(target.root / target.package, copy_root / target.package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        code, baseline_s, lines = _run_worker(target, copy_root, (), None)
        report.baseline_s = baseline_s
        if code != EXIT_SURVIVED:
            report.problems.append(
                f"{target.slug}: the unmutated code does not pass (exit {code}; "
                f"{_caught_by(lines) or 'a check stayed inconclusive'}), so no mutant can be judged"
            )
            return report
        order = [line["experiment"] for line in sorted(lines, key=lambda x: x["seconds"])
                 if not line.get("controls")]
        timeout_s = timeout_factor * baseline_s + timeout_slack_s
        for index, mutant in enumerate(chosen):
            if mutant.id in equivalent:
                outcome = MutantOutcome(mutant, "equivalent", detail=equivalent[mutant.id].reason)
            else:
                outcome = _try(target, copy_root, mutant, order, timeout_s)
            report.outcomes.append(outcome)
            if on_mutant is not None:
                on_mutant(outcome, index + 1, len(chosen))
    return report


def _try(target: Target, copy_root: Path, mutant: Mutant, order, timeout_s) -> MutantOutcome:
    path = copy_root / mutant.path
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(mutated_source(copy_root, mutant), encoding="utf-8")
        code, seconds, lines = _run_worker(target, copy_root, order, timeout_s)
    finally:
        path.write_text(original, encoding="utf-8")
    if code is None:
        return MutantOutcome(mutant, "timed out", seconds, f"stopped after {seconds:.0f} s")
    if code == EXIT_SURVIVED:
        return MutantOutcome(mutant, "survived", seconds)
    if code == EXIT_INCONCLUSIVE:
        return MutantOutcome(mutant, "survived", seconds, "a timing check stayed inconclusive")
    if code == EXIT_KILLED:
        return MutantOutcome(mutant, "killed", seconds, _caught_by(lines))
    # Any other exit is the process dying under the mutant (a compiled kernel writing out of
    # bounds aborts on a corrupted heap, a segfault): caught, as mutmut and cosmic-ray count it.
    caught = _caught_by(lines)
    detail = f"the process crashed (exit {code})" + (f" after {caught}" if caught else "")
    return MutantOutcome(mutant, "killed", seconds, detail)
