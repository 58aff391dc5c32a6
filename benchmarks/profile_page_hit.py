"""Where a page-cache hit spends its time, in this process (no sockets, no load generator).

    PYTHONPATH=. python benchmarks/profile_page_hit.py [--requests 2000] [--profile]

Builds the explorer on the shipped topics with a scratch result cache, lets it
fill its page cache at start-up, then sends GETs of every topic page (both
languages, gzip accepted) straight to the ASGI app -- the middleware, routing
and the page handler, everything but uvicorn's HTTP parsing and the socket --
and reports the time per request (median and quartiles of rounds). With
``--profile`` it prints cProfile's top functions by their own time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from whylab.explorer.runs.warm_up import get, warm_paths
from whylab.explorer.web.app import create_app
from whylab.explorer.web.config import ExplorerConfig


async def serve_hits(app, paths: list[str], requests: int, rounds: int) -> list[float]:
    """Microseconds per request in each round of ``requests`` GETs cycling over ``paths``."""
    per_request = []
    for _ in range(rounds):
        started = time.perf_counter()
        for number in range(requests):
            path = paths[number % len(paths)]
            status, _ = await get(app, path)
            if status != 200:
                raise SystemExit(f"{path} answered {status}")
        per_request.append((time.perf_counter() - started) / requests * 1e6)
    return per_request


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        config = ExplorerConfig(cache_dir=Path(scratch) / "cache", warm_cache=True)
        app = create_app(config)
        async with app.router.lifespan_context(app):
            if not await asyncio.to_thread(app.state.warm_up.done.wait, 600):
                raise SystemExit("the warm-up did not finish")
            topics, _ = warm_paths(app.state.registry)
            hits = app.state.pages.stats.hits
            await serve_hits(app, topics, 200, 1)  # warm the interpreter's caches
            profiler = cProfile.Profile() if args.profile else None
            if profiler is not None:
                profiler.enable()
            rounds = await serve_hits(app, topics, args.requests, args.rounds)
            if profiler is not None:
                profiler.disable()
            served = app.state.pages.stats.hits - hits
            if served < args.requests * args.rounds:
                raise SystemExit(f"only {served} of the timed requests were page-cache hits")
    q1, median, q3 = statistics.quantiles(rounds, n=4)
    print(
        f"page-cache hit through the ASGI app (no socket): median {median:.0f} µs a request "
        f"(quartiles {q1:.0f}-{q3:.0f}) over {args.rounds} rounds of {args.requests}"
    )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests a round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    parser.add_argument("--top", type=int, default=25, help="functions --profile prints")
    parser.add_argument("--sort", default="tottime", help="cProfile order: tottime, cumulative")
    asyncio.run(main(parser.parse_args()))
