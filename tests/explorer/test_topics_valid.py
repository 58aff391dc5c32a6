"""Every topic shipped with whylab: both languages, every formula, every default check.

Parametrized over the folders found under ``whylab/topics/``, so a new topic is
covered the moment its folder exists.
"""

from __future__ import annotations

import re

import pytest

from whylab.explorer.prose import HtmlBlock
from whylab.explorer.service import run_locally
from whylab.explorer.topics import (
    DEFAULT_TOPICS_DIR,
    discover_topic_folders,
    import_experiments,
    load_topic,
)

FOLDERS = discover_topic_folders(DEFAULT_TOPICS_DIR)
EXPERIMENTS = [(folder, name) for folder in FOLDERS for name in import_experiments(folder)]


def test_whylab_ships_topics():
    assert FOLDERS, f"no topic folders under {DEFAULT_TOPICS_DIR}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_topic_loads_in_both_languages_with_every_formula_converted(folder):
    topic = load_topic(folder)  # raises on a missing field, an unpaired tag or a bad formula
    for lang in ("en", "zh"):
        meta = topic.meta[lang]
        assert meta.title and meta.question and meta.summary
        html = "".join(s.html for s in topic.prose[lang].segments if isinstance(s, HtmlBlock))
        assert html.count("<math") >= topic.prose[lang].formula_count > 0
        text_only = re.sub(r"<code>.*?</code>|<pre>.*?</pre>", "", html, flags=re.S)
        assert "$" not in re.sub(r"<[^>]+>", "", text_only), "raw $ left in the prose"


@pytest.mark.parametrize("folder, name", EXPERIMENTS, ids=[f"{f.name}/{n}" for f, n in EXPERIMENTS])
def test_default_run_passes_its_checks(folder, name):
    topic = load_topic(folder)
    experiment = topic.experiments[name]
    record = run_locally(topic, experiment, experiment.defaults())
    assert record.result.checks, f"{name} states no checks"
    failed = [
        f"{c.name.en}: measured {c.measured}, expected {c.expected}"
        for c in record.result.checks
        if not c.passed
    ]
    assert not failed, failed
