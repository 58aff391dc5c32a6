"""The one line a result's checks fold behind ("8 of 8 checks passed"), and what a
control run did to the checks its control declares it breaks.

A page (and a notebook cell) leads with the result -- its measurements and
figures -- and folds the list of checks, two or three lines each, behind one
``<summary>`` line. The line counts what the checks did: how many passed out of
how many, then each other state that occurred ("6 of 8 checks passed, 1 failed,
1 not applicable"). A failed or inconclusive check opens the fold
(:attr:`CheckSummary.open`), so a failure is never hidden behind it; a check
that is not applicable does not open it (it is no evidence either way, and the
line says how many there are).

A control run (:meth:`~whylab.explorer.runs.service.ExperimentService.run_control`)
says, above its checks, which checks its control is declared to break and how
many of them failed in that run (:class:`ControlOutcome`): counted from the
result, so a control that failed to break a check is seen not to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from whylab.explorer.content.i18n import translate
from whylab.explorer.experiment import Check, Control, Lang

MARKS = {"passed": "✓", "failed": "✗", "not_applicable": "–", "inconclusive": "?"}


@dataclass(frozen=True)
class CheckSummary:
    """How many of a result's checks ended in each state."""

    total: int
    passed: int
    failed: int
    not_applicable: int
    inconclusive: int

    @classmethod
    def of(cls, checks: Iterable[Check]) -> CheckSummary:
        states = Counter(check.state for check in checks)
        return cls(
            total=sum(states.values()),
            passed=states["passed"],
            failed=states["failed"],
            not_applicable=states["not_applicable"],
            inconclusive=states["inconclusive"],
        )

    @property
    def open(self) -> bool:
        """Whether the fold starts open: some check failed or could not be decided."""
        return bool(self.failed or self.inconclusive)

    @property
    def state(self) -> str:
        """The worst state present: failed, then inconclusive, then passed; not applicable
        only when every check is."""
        for state in ("failed", "inconclusive", "passed"):
            if getattr(self, state):
                return state
        return "not_applicable"

    @property
    def mark(self) -> str:
        return MARKS[self.state]

    def sentence(self, lang: Lang) -> str:
        """``8 of 8 checks passed`` / ``8 项验证中 8 项通过``, then the other states' counts."""
        key = "checks_summary_one" if self.total == 1 else "checks_summary"
        parts = [translate(key, lang, passed=self.passed, total=self.total)]
        for state in ("failed", "not_applicable", "inconclusive"):
            count = getattr(self, state)
            if count:
                parts.append(translate(f"summary_{state}", lang, count=count))
        return translate("comma", lang).join(parts)


@dataclass(frozen=True)
class ControlOutcome:
    """The checks a control is declared to break, as a run under it left them."""

    named: int  # how many checks the control names
    failed: int  # how many of them failed in this run

    @classmethod
    def of(cls, checks: Iterable[Check], control: Control) -> ControlOutcome:
        failed = sum(check.state == "failed" and check.id in control.breaks for check in checks)
        return cls(len(control.breaks), failed)

    def sentence(self, lang: Lang) -> str:
        return translate("control_declared", lang, failed=self.failed, declared=self.named)
