"""``whylab check --controls`` passes for every topic: each check passes at its defaults and
fails under at least one negative control, and every control breaks what it declares."""

from __future__ import annotations

from pathlib import Path

import pytest

import whylab.topics
from whylab.cli import main
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
    # the exit code is the verdict (1 on any problem); the output is only shown on failure
    # ("problems" is a column header of the table, printed whatever the verdict)
    assert code == 0, capsys.readouterr().err[-4000:]


def test_every_topic_declares_controls():
    assert len(TOPICS) >= 9
    for topic in REGISTRY:
        for experiment in topic.experiments.values():
            assert experiment.controls, f"{topic.slug}/{experiment.name} declares no controls"
