"""What the explorer app can be told: :class:`ExplorerConfig` (its defaults: ``whylab serve``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from whylab.explorer.runs.cache import DEFAULT_MAX_BYTES
from whylab.explorer.runs.workers import DEFAULT_QUEUE_WAIT_S, DEFAULT_SPAWN_TIMEOUT_S
from whylab.explorer.web.seo import check_public_url


@dataclass
class ExplorerConfig:
    """Everything the app can be told; the defaults are what ``whylab serve`` uses."""

    topics_dir: Path | None = None  # None: the topics shipped with whylab
    cache_dir: Path | None = None  # None: default_cache_dir()
    use_cache: bool = True
    cache_max_mb: float = DEFAULT_MAX_BYTES / 2**20  # least recently used records go first
    workers: int = 2
    memory_limit_mb: int = 2048  # per worker process; 0 = no limit
    max_queue: int = 16
    queue_wait_s: float = DEFAULT_QUEUE_WAIT_S  # a job waiting longer is answered 503
    spawn_timeout_s: float = DEFAULT_SPAWN_TIMEOUT_S
    # Experiment CPU-seconds per second per client, sustained ...
    rate_per_s: float = 0.5
    rate_burst: float = 20.0  # ... and in a burst (CPU-seconds); 0 turns the rate limit off
    # The HTTP server (whylab.explorer.web.server): proxies whose X-Forwarded-For is believed
    # (none by default: every client is who the socket says), and connection limits.
    trusted_proxies: tuple[str, ...] = ()
    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    keep_alive_s: int = 5
    max_connections: int = 256
    max_connections_per_client: int = 32
    max_query_bytes: int = 4096
    max_query_params: int = 64
    max_search_chars: int = 200
    # At start-up, compute every default in the background, then fill the page cache
    # with every landing page (whylab.explorer.runs.warm_up).
    warm_cache: bool = False
    # ... and then measure every timing experiment at its defaults that has no kept
    # measurement, in the background, one at a time (readers' measurements go first).
    measure_timing: bool = False
    # Rendered result blocks kept in memory (deterministic, cached results only);
    # 0 entries turns this off. Off too when the result cache is.
    fragment_cache_entries: int = 256
    fragment_cache_chars: int = 16_000_000
    # Whole topic pages whose every block came from the cache (body + gzip), in memory.
    page_cache_entries: int = 128
    page_cache_bytes: int = 64_000_000
    # A several-machine deployment: the result cache and the run queue on this Redis
    # (redis://host:port/db), runs done by `whylab worker` processes; None: embedded.
    redis_url: str | None = None
    # Where readers reach the site (https://host[/prefix]): the base of canonical, hreflang
    # and og:url links and of sitemap.xml; None: relative links, no sitemap (web.seo).
    public_url: str | None = None

    def __post_init__(self) -> None:
        if self.public_url is not None:
            self.public_url = check_public_url(self.public_url)
