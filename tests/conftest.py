"""Shared pytest setup: a hypothesis profile sized for the 2-core CI machine, and reruns
for the tests whose claims rest on wall-clock timings."""

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "whylab",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("whylab")


def _timing_experiment_names() -> set[str]:
    """The names of the topics' timing experiments, as they appear in test ids."""
    from pathlib import Path

    import whylab.topics
    from whylab.explorer.content.topics import load_registry

    names = set()
    for topic in load_registry(Path(whylab.topics.__path__[0])):
        for experiment in topic.experiments.values():
            if experiment.timing:
                names.add(f"[{experiment.name}]")
                names.add(f"/{experiment.name}]")
    return names


def pytest_collection_modifyitems(items):
    """Timing claims get up to two reruns: ``wallclock`` and ``slow`` tests, and topic
    tests parametrized by a timing experiment.

    A topic's timing check compares ratios with wide margins, but on a shared machine
    another tenant can still disturb one measurement badly; a claim that fails three
    runs in a row is a real failure. Deterministic tests are never rerun.
    """
    timing_ids = _timing_experiment_names()
    for item in items:
        timed = item.get_closest_marker("wallclock") or item.get_closest_marker("slow")
        if not timed and "tests/topics/" in item.nodeid:
            timed = any(name in item.nodeid for name in timing_ids)
        if timed:
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=2))
