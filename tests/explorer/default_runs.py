"""The run of each shipped experiment at its defaults, made once per test session.

Several tests only read what a default run draws or says (its charts' colours, its
diagrams, what a notebook should show); each used to run every experiment again, timing
ones included (seconds each). They share these records; a test of the run itself passes
``fresh=True``, which runs it again and keeps the new record for the readers after it.
"""

from __future__ import annotations

from whylab.explorer.content.topics import Topic
from whylab.explorer.experiment import Experiment
from whylab.explorer.runs.service import RunRecord, run_locally

_RECORDS: dict[tuple[str, str], RunRecord] = {}


def default_record(topic: Topic, experiment: Experiment, *, fresh: bool = False) -> RunRecord:
    """The run of ``experiment`` at its defaults, as ``whylab check`` makes it."""
    key = (topic.slug, experiment.name)
    if fresh or key not in _RECORDS:
        _RECORDS[key] = run_locally(topic, experiment, experiment.defaults())
    return _RECORDS[key]
