"""Shared fixtures for the explorer tests: the tiny fixture topic and app factories."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from whylab.explorer.content.topics import TopicRegistry, load_registry
from whylab.explorer.web.app import create_app
from whylab.explorer.web.config import ExplorerConfig
from whylab.explorer.web.server import server_settings

FIXTURE_TOPICS = Path(__file__).resolve().parent / "fixture_topics"
# How long a server may take to start: its worker pool's fork server compiles the numba
# kernels first (a few seconds with numba's disk cache, ~40 s cold on a loaded machine).
START_S = 120.0


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


@dataclass
class Live:
    """An explorer served by uvicorn (with whylab's server settings) on a loopback port."""

    app: Any
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(cache_dir: Path, port: int | None = None, **overrides) -> Iterator[Live]:
    """The explorer served by uvicorn on ``port`` (default: a free one) until the block ends."""
    settings = {
        "topics_dir": FIXTURE_TOPICS,
        "cache_dir": cache_dir,
        "workers": 1,
        "memory_limit_mb": 1024,
        **overrides,
    }
    config = ExplorerConfig(**settings)
    port = port or _free_port()
    app = create_app(config)
    uvicorn_config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", **server_settings(config)
    )
    server = uvicorn.Server(uvicorn_config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_S
        while not (server.started or not thread.is_alive() or time.monotonic() > deadline):
            time.sleep(0.01)
        assert server.started, "the server did not start"
        yield Live(app, port)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[Callable[..., Live]]:
    """``live_server(**config)``: the explorer served on a loopback port, stopped afterwards."""
    with ExitStack() as stack:
        yield lambda **overrides: stack.enter_context(serving(tmp_path / "cache", **overrides))


@pytest.fixture(scope="module")
def module_live_server(tmp_path_factory) -> Iterator[Callable[..., Live]]:
    """Like ``live_server``, for servers shared by the tests of one module."""
    with ExitStack() as stack:
        yield lambda **overrides: stack.enter_context(
            serving(tmp_path_factory.mktemp("cache"), **overrides)
        )


# ------------------------------------------------ the browser tests' server and browser
# Here, not in test_browser.py, so every browser test module shares one server and one
# browser: Playwright's sync API cannot start a second browser while one runs in the thread.

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def registry():
    return load_registry()


@pytest.fixture(scope="session")
def base_url(registry, tmp_path_factory) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ExplorerConfig(cache_dir=tmp_path_factory.mktemp("browser-cache"), workers=2)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config, registry), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_S
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the explorer did not start under uvicorn")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium); "
            "the browser tests do not download browsers"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()
