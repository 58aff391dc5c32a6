"""The mutation runner end to end, on a small fixture package, and the table it writes.

The fixture has a numba kernel (so a killed mutant there shows the kernel was compiled
anew from the mutated source, not taken from a stale cache), a loop a mutant can make
endless (timed out), and code no check looks at (survived, or declared equivalent).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from whylab.mutation.mutants import all_mutants, mutated_source
from whylab.mutation.report import read_equivalents, render_table, update_table
from whylab.mutation.runner import Equivalent, Target, run_mutants

REPO_ROOT = Path(__file__).resolve().parents[2]

KERNEL = '''\
import numba


@numba.njit(cache=True)
def count_below(values, bound):
    count = 0
    for v in values:
        if v < bound:
            count += 1
    return count


def spin(n):
    i = 0
    while i < n:
        i = i + 1
    return i


def unchecked(x):
    return x * 2
'''

EXPERIMENTS = '''\
import numpy as np

from mutfix.kernel import count_below, spin
from whylab.explorer.experiment import Check, Result, T, experiment


@experiment(name="claims", title=T("c", "c"), description=T("d", "d"))
def claims():
    below = count_below(np.array([1.0, 2.0, 3.0, 4.0]), 3.0)
    return Result(checks=[
        Check(T("two values below 3", "两个值小于 3"), below == 2, str(below), "2", id="below"),
        Check(T("spin counts to 5", "数到 5"), spin(5) == 5, "", "5", id="spin"),
    ])


EXPERIMENTS = [claims]
'''


@pytest.fixture
def fixture_root(tmp_path) -> Path:
    return _fixture_package(tmp_path)


def _target(root: Path, equivalents=()) -> Target:
    return Target(slug="mutfix", root=root, package="mutfix", module="mutfix.experiments",
                  under_test=("mutfix/kernel.py",), equivalents=tuple(equivalents),
                  extra_path=(str(REPO_ROOT),))


def test_mutants_are_listed_in_a_fixed_order_and_applied_one_at_a_time(fixture_root):
    mutants = all_mutants(fixture_root, ["mutfix/kernel.py"])
    assert mutants == all_mutants(fixture_root, ["mutfix/kernel.py"])
    ids = [m.id for m in mutants]
    assert len(ids) == len(set(ids))
    kernel_lt = next(m for m in mutants if m.operator.endswith("Lt_LtE") and m.line == 8)
    assert kernel_lt.source_line == "if v < bound:"
    changed = mutated_source(fixture_root, kernel_lt).splitlines()
    original = KERNEL.splitlines()
    assert [i for i, (a, b) in enumerate(zip(original, changed, strict=True)) if a != b] == [7]
    assert changed[7].strip() == "if v <= bound:"


def _fixture_package(root: Path) -> Path:
    package = root / "mutfix"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "kernel.py").write_text(KERNEL, encoding="utf-8")
    (package / "experiments.py").write_text(EXPERIMENTS, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def four_mutants(tmp_path_factory):
    """One run of the runner over four chosen mutants (each run of the fixture's
    experiments is a fresh process, the slow part, so the tests share it)."""
    root = _fixture_package(tmp_path_factory.mktemp("fixture"))
    mutants = all_mutants(root, ["mutfix/kernel.py"])
    doubling = next(m for m in mutants if m.line == 21 and m.operator.endswith("Mul_Div"))
    chosen = [
        next(m for m in mutants if m.line == 8 and m.operator.endswith("Lt_LtE")),  # in njit
        next(m for m in mutants if m.line == 16 and m.operator.endswith("Add_Sub")),  # endless
        doubling,
        next(m for m in mutants if m.line == 21 and m.operator.endswith("NumberReplacer")),
    ]
    equivalent = Equivalent(doubling.id, doubling.source_line, "no check calls unchecked()")
    stale = Equivalent("mutfix/kernel.py:AddNot:99", "nothing", "a mutant that is gone")
    target = _target(root, [equivalent, stale])
    result = run_mutants(target, None, timeout_factor=1.5, timeout_slack_s=4.0,
                         only=[m.id for m in chosen])
    return root, mutants, chosen, result


def test_runner_kills_times_out_lets_survive_and_skips_equivalents(four_mutants):
    root, _, chosen, result = four_mutants
    outcomes = {o.mutant.id: o.outcome for o in result.outcomes}
    assert outcomes == {chosen[0].id: "killed", chosen[1].id: "timed out",
                        chosen[2].id: "equivalent", chosen[3].id: "survived"}
    killed = next(o for o in result.outcomes if o.outcome == "killed")
    assert killed.detail == "claims: below"  # the compiled kernel ran the mutant
    assert result.score == pytest.approx(2 / 3)
    assert any("AddNot:99 is stale" in p for p in result.problems)
    # the copy was mutated, never the files themselves
    assert (root / "mutfix" / "kernel.py").read_text(encoding="utf-8") == KERNEL


def test_a_baseline_that_fails_judges_no_mutant(fixture_root):
    (fixture_root / "mutfix" / "experiments.py").write_text(
        EXPERIMENTS.replace("below == 2", "below == 3"), encoding="utf-8")
    result = run_mutants(_target(fixture_root), 2)
    assert not result.outcomes and "does not pass" in result.problems[0]


def test_equivalents_file_and_table(tmp_path, four_mutants):
    (tmp_path / "equivalent_mutants.toml").write_text(textwrap.dedent('''\
        [[mutant]]
        id = "a.py:NumberReplacer:0"
        line = "x = 1"
        reason = "x is overwritten before it is read"
        '''), encoding="utf-8")
    assert read_equivalents(tmp_path) == (
        Equivalent("a.py:NumberReplacer:0", "x = 1", "x is overwritten before it is read"),)
    (tmp_path / "equivalent_mutants.toml").write_text('[[mutant]]\nid = "a"\nline = "b"\n',
                                                      encoding="utf-8")
    with pytest.raises(ValueError, match="needs id, line and a reason"):
        read_equivalents(tmp_path)

    _, mutants, chosen, result = four_mutants
    records, table = tmp_path / "mutants.json", tmp_path / "MUTANTS.md"
    update_table([result], records, table)
    stored = json.loads(records.read_text(encoding="utf-8"))
    assert stored["mutfix"]["tried"] == 4 and stored["mutfix"]["mutants"] == len(mutants)
    assert [s["id"] for s in stored["mutfix"]["survivors"]] == [chosen[3].id]
    assert "| mutfix |" in table.read_text(encoding="utf-8")
    assert render_table(stored) == table.read_text(encoding="utf-8")


CONTROLLED = '''\
from whylab.explorer.experiment import control_active


def scaled(x):
    factor = 2.0 if control_active("doubled") else 1.0
    return factor * x
'''

CONTROLLED_EXPERIMENTS = '''\
from mutctl.kernel import scaled
from whylab.explorer.experiment import Check, Control, Result, T, experiment


@experiment(name="claims", title=T("c", "c"), description=T("d", "d"),
            controls=[Control("doubled", T("doubled", "加倍"), breaks=("value",))])
def claims():
    value = scaled(3.0)
    return Result(checks=[Check(T("3 stays 3", "3 仍是 3"), value == 3.0, str(value), "3",
                                id="value")])


EXPERIMENTS = [claims]
'''


def test_a_mutant_that_disarms_a_control_is_killed_under_the_controls(tmp_path):
    package = tmp_path / "mutctl"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "kernel.py").write_text(CONTROLLED, encoding="utf-8")
    (package / "experiments.py").write_text(CONTROLLED_EXPERIMENTS, encoding="utf-8")
    target = Target(slug="mutctl", root=tmp_path, package="mutctl", module="mutctl.experiments",
                    under_test=("mutctl/kernel.py",), extra_path=(str(REPO_ROOT),))
    by_change = {}
    for mutant in all_mutants(tmp_path, ["mutctl/kernel.py"]):
        line = mutated_source(tmp_path, mutant).splitlines()[4].strip()
        by_change[line] = mutant
    disarmed = by_change['factor = 1.0 if control_active("doubled") else 1.0']
    still_wrong = by_change['factor = 3.0 if control_active("doubled") else 1.0']
    result = run_mutants(target, None, only=[disarmed.id, still_wrong.id])
    outcomes = {o.mutant.id: o for o in result.outcomes}
    assert outcomes[disarmed.id].outcome == "killed"  # the defaults still pass: the audit saw it
    assert "under its controls" in outcomes[disarmed.id].detail
    assert "'doubled' made no check fail" in outcomes[disarmed.id].detail
    assert outcomes[still_wrong.id].outcome == "survived"


CRASHING = '''\
import os


def checked(x):
    if x > 0:
        return x
    os.abort()  # what a compiled kernel writing out of bounds can end in
'''


def test_a_mutant_that_crashes_the_process_is_killed(tmp_path):
    package = tmp_path / "mutcrash"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "kernel.py").write_text(CRASHING, encoding="utf-8")
    (package / "experiments.py").write_text(
        CONTROLLED_EXPERIMENTS.replace("mutctl.kernel import scaled", "mutcrash.kernel import "
                                       "checked as scaled").replace(
            ",\n            controls=[Control(\"doubled\", T(\"doubled\", \"加倍\"), "
            "breaks=(\"value\",))]", ""), encoding="utf-8")
    target = Target(slug="mutcrash", root=tmp_path, package="mutcrash",
                    module="mutcrash.experiments", under_test=("mutcrash/kernel.py",),
                    extra_path=(str(REPO_ROOT),))
    negated = next(m for m in all_mutants(tmp_path, ["mutcrash/kernel.py"])
                   if m.operator.endswith("AddNot"))
    (outcome,) = run_mutants(target, None, only=[negated.id]).outcomes
    assert outcome.outcome == "killed" and "crashed" in outcome.detail
