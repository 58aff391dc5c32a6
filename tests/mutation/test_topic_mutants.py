"""Every topic declares what it puts under test, and a fixed sample of its mutants applies.

Running the topics' experiments against their mutants takes hours (the full table is
made by ``whylab check --mutants --write-table``); here each topic's mutants are listed,
a fixed sample of them is applied and must still compile, and the topic's list of
equivalent mutants must name mutants that exist, at the line they were judged on. One
topic's sample is run for real (marked slow).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from whylab.cli import main
from whylab.explorer.content.topics import load_registry
from whylab.mutation.mutants import all_mutants, mutated_source, sample
from whylab.mutation.report import read_equivalents

REPO_ROOT = Path(__file__).resolve().parents[2]
REGISTRY = load_registry()
SAMPLE = 3


@pytest.mark.parametrize("slug", list(REGISTRY.topics))
def test_topic_declares_under_test_and_its_mutants_apply(slug):
    topic = REGISTRY.get(slug)
    assert topic.under_test, f"{slug}: meta.toml must declare under_test"
    mutants = all_mutants(REPO_ROOT, topic.under_test)
    assert len(mutants) >= 20, f"{slug}: only {len(mutants)} mutants"
    for mutant in sample(mutants, SAMPLE, seed=0):
        text = mutated_source(REPO_ROOT, mutant)
        ast.parse(text)  # a mutant is still Python
        assert text != (REPO_ROOT / mutant.path).read_text(encoding="utf-8")
    by_id = {m.id: m for m in mutants}
    for entry in read_equivalents(topic.folder):
        assert entry.id in by_id, f"{slug}: equivalent {entry.id} is no mutant"
        assert by_id[entry.id].source_line == entry.line, f"{slug}: {entry.id} is stale"


def test_sample_is_fixed_and_spread():
    topic = REGISTRY.get("fft")
    mutants = all_mutants(REPO_ROOT, topic.under_test)
    assert sample(mutants, 10) == sample(mutants, 10)
    assert sample(mutants, 10, seed=1) != sample(mutants, 10)
    assert sample(mutants, None) == mutants


def test_mutants_option_needs_its_partner(capsys):
    assert main(["check", "--sample", "3"]) == 2
    assert "--sample and --write-table go with --mutants" in capsys.readouterr().err


@pytest.mark.slow
def test_one_topic_sample_runs_for_real(capsys):
    code = main(["check", "--mutants", "--topic", "wave-superposition", "--sample", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "wave-superposition 2/2" in out
