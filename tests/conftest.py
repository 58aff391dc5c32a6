"""Shared pytest setup: a hypothesis profile sized for the 2-core CI machine."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "whylab",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("whylab")
