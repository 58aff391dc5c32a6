"""``whylab check --controls`` passes for every topic: each check passes at its defaults and
fails under at least one negative control, and every control breaks what it declares.

This is the one place each topic's controls audit runs (through the command a contributor
types); the topics' own tests test their edges and single controls, not the audit again."""

from __future__ import annotations

from pathlib import Path

import pytest

import whylab.topics
from whylab.cli import EXIT_INCONCLUSIVE, main
from whylab.explorer.content.topics import load_registry

REGISTRY = load_registry(Path(whylab.topics.__path__[0]))
TOPICS = [topic.slug for topic in REGISTRY]
TIMED = {t.slug for t in REGISTRY if any(e.timing for e in t.experiments.values())}


@pytest.mark.parametrize(
    "slug", [pytest.param(s, marks=[pytest.mark.wallclock] if s in TIMED else []) for s in TOPICS]
)
def test_check_controls_exits_zero(slug, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("WHYLAB_CACHE_DIR", str(tmp_path))
    code = main(["check", "--controls", "--topic", slug])
    captured = capsys.readouterr()
    if code == EXIT_INCONCLUSIVE and slug in TIMED:
        # No problem, but a timing claim stayed undecided after its reruns on this machine
        # now: no evidence either way, and said so (never a pass).
        assert "inconclusive on this machine now" in captured.err
        assert "every check passed" not in captured.out
    else:
        assert code == 0, captured.err[-4000:]


def test_every_topic_declares_controls():
    assert len(TOPICS) >= 9
    for topic in REGISTRY:
        for experiment in topic.experiments.values():
            assert experiment.controls, f"{topic.slug}/{experiment.name} declares no controls"
