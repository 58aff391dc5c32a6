"""Negative controls: the named wrong answers a topic's checks must catch.

An experiment asks :func:`control_active` where a perturbation goes;
``whylab check --controls``, the tests and a reader's control run on a page
("Break it") switch one on (:func:`switched_on`).
Part of the topic SDK: topics import these names from
:mod:`whylab.explorer.experiment`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from whylab.explorer.bilingual import Text

# The slug a check's id and a control's name are written in: "fft-matches-numpy".
CHECK_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Control:
    """A negative control: a named perturbation that must make some checks fail.

    A check is evidence only if a plausible wrong answer would fail it. A
    control switches such a wrong answer on inside the real experiment code (a
    wrong formula, a sabotaged implementation, a perturbed input, another
    algorithm that should be caught); the experiment asks
    :func:`control_active` where the perturbation goes. ``breaks`` lists the
    ids of the checks it must make fail; ``params`` overrides the defaults for
    the run under this control (when the perturbation needs, say, a larger n).
    ``label`` completes "fails if ..." and is shown next to those checks.

    Controls are switched on by ``whylab check --controls`` and the tests
    (:mod:`whylab.explorer.content.controls`), and by a reader's control run on a
    page (:mod:`whylab.explorer.web.routes_controls`) or through the JSON API's
    control-run endpoint (:mod:`whylab.explorer.web.routes_api`): a declared control
    only, at the parameters it declares, labelled as such and never cached. No
    ordinary run and no other JSON API answer has one switched on.
    """

    name: str
    label: Text
    breaks: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not CHECK_ID.fullmatch(self.name):
            raise ValueError(f"control name must be a lower-case slug, got {self.name!r}")
        breaks = (self.breaks,) if isinstance(self.breaks, str) else tuple(self.breaks)
        if not breaks:
            raise ValueError(f"control {self.name!r} must name the checks it breaks")
        for check_id in breaks:
            if not CHECK_ID.fullmatch(check_id):
                raise ValueError(f"control {self.name!r}: bad check id {check_id!r}")
        object.__setattr__(self, "breaks", breaks)


_active_control: ContextVar[str | None] = ContextVar("whylab_active_control", default=None)
_asked_controls: ContextVar[set[str] | None] = ContextVar("whylab_asked_controls", default=None)


def control_active(name: str) -> bool:
    """Whether the negative control ``name`` is switched on for the run in progress.

    Experiment code puts each perturbation behind this test::

        twiddles = np.exp(-2j * np.pi * k / n)
        if control_active("twiddle-off-by-one"):
            twiddles = np.exp(-2j * np.pi * (k + 1) / n)

    It is False on every ordinary run (pages, the API, ``whylab run``); only a
    control run switches one on.
    """
    asked = _asked_controls.get()
    if asked is not None:
        asked.add(name)
    return _active_control.get() == name


@contextmanager
def switched_on(name: str | None) -> Iterator[set[str]]:
    """Run the ``with`` block with control ``name`` on (None: none on).

    Yields the set of control names the code asked about, so the runner can
    tell a control the experiment never consults.
    """
    asked: set[str] = set()
    tokens = (_active_control.set(name), _asked_controls.set(asked))
    try:
        yield asked
    finally:
        _asked_controls.reset(tokens[1])
        _active_control.reset(tokens[0])
