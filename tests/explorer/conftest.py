"""Shared fixtures for the explorer tests: the tiny fixture topic and app factories."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from whylab.explorer.app import ExplorerConfig, create_app
from whylab.explorer.topics import TopicRegistry, load_registry

FIXTURE_TOPICS = Path(__file__).resolve().parent / "fixture_topics"


@pytest.fixture(scope="session")
def fixture_registry() -> TopicRegistry:
    return load_registry(FIXTURE_TOPICS)


@pytest.fixture
def topic_copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture topics folder (tests break it on purpose)."""
    target = tmp_path / "topics"
    shutil.copytree(FIXTURE_TOPICS, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """``make_client(workers=1, ...)``: a started app on the fixture topics, closed afterwards."""
    with ExitStack() as stack:

        def make(**overrides) -> TestClient:
            settings = {
                "topics_dir": FIXTURE_TOPICS,
                "cache_dir": tmp_path / "cache",
                "workers": 2,
                "memory_limit_mb": 1024,
                **overrides,
            }
            app = create_app(ExplorerConfig(**settings))
            return stack.enter_context(TestClient(app))

        yield make


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, fixture_registry) -> Iterator[TestClient]:
    """One app per test module, for tests that do not depend on counters or limits."""
    config = ExplorerConfig(
        topics_dir=FIXTURE_TOPICS,
        cache_dir=tmp_path_factory.mktemp("cache"),
        workers=2,
        memory_limit_mb=1024,
    )
    with TestClient(create_app(config, registry=fixture_registry)) as test_client:
        yield test_client
