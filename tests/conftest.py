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


def pytest_collection_modifyitems(items):
    """Timing claims (``wallclock`` and ``slow`` tests) get up to two reruns.

    A topic's timing check compares ratios with wide margins, but on a shared machine
    another tenant can still disturb one measurement badly; a claim that fails three
    runs in a row is a real failure. Deterministic tests are never rerun.
    """
    for item in items:
        if item.get_closest_marker("wallclock") or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=2))
