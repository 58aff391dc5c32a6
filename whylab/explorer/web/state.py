"""The app's state, typed: what every route reads, built once by :func:`build_state`.

The app keeps it as ``app.state``; a route reaches it through the
:func:`whylab.explorer.web.deps.explorer_state` dependency (or, on the plain
Starlette routes, ``request.app.state``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jinja2 import Environment

from whylab.explorer.content.topics import TopicRegistry, load_registry
from whylab.explorer.runs.cache import default_cache_dir
from whylab.explorer.runs.ratelimit import RateLimiter
from whylab.explorer.runs.service import ExperimentService
from whylab.explorer.runs.store import Backends, open_backends
from whylab.explorer.runs.timing import TimingQueue
from whylab.explorer.runs.warm_up import WarmUp
from whylab.explorer.web.config import ExplorerConfig
from whylab.explorer.web.fragment_cache import FragmentCache
from whylab.explorer.web.render import Links, make_environment
from whylab.explorer.web.wheel import ServedWheel


@dataclass
class ExplorerState:
    """Everything the routes share; one per app."""

    config: ExplorerConfig
    registry: TopicRegistry
    backends: Backends
    service: ExperimentService
    timing: TimingQueue
    fragments: FragmentCache | None  # rendered result blocks (cached results only)
    pages: FragmentCache | None  # whole pages whose every block came from the cache
    env: Environment
    links: Links
    tag_keys: frozenset[str]
    wheel: ServedWheel  # the running whylab's wheel, for notebooks to install
    warm_up: WarmUp = field(default_factory=WarmUp)  # what the start-up work did
    notebooks: dict[tuple[str, str], str] = field(default_factory=dict)  # (slug, lang) -> .ipynb

    @property
    def pool(self):
        return self.backends.pool

    @property
    def cache(self):
        return self.backends.cache

    @property
    def limiter(self) -> RateLimiter | None:
        return self.backends.limiter


def build_state(config: ExplorerConfig, registry: TopicRegistry | None = None) -> ExplorerState:
    """Load the topics (every formula converts now) and open the run back-ends."""
    registry = registry or load_registry(config.topics_dir)
    backends = open_backends(config, registry)
    service = ExperimentService(backends.pool, backends.cache, backends.flights, backends.calls)
    cached = backends.cache is not None
    return ExplorerState(
        config=config,
        registry=registry,
        backends=backends,
        service=service,
        timing=TimingQueue(
            service, limiter=backends.limiter, calls=backends.calls, store=backends.cache
        ),
        fragments=(
            FragmentCache(config.fragment_cache_entries, config.fragment_cache_chars)
            if cached and config.fragment_cache_entries > 0
            else None
        ),
        pages=(
            FragmentCache(config.page_cache_entries, config.page_cache_bytes)
            if cached and config.page_cache_entries > 0
            else None
        ),
        env=make_environment(),
        links=Links(public_url=config.public_url),
        tag_keys=frozenset(tag.key for tag in registry.tags()),
        wheel=ServedWheel(config.cache_dir or default_cache_dir()),
    )
