"""Time a cached read: the embedded SQLite result cache against the shared one on Redis.

Run from the repository root (needs Debian's redis-server, or --redis-url):

    PYTHONPATH=. python benchmarks/bench_shared_cache.py [--rounds 9]

Both caches hold the same records: the result of one experiment run (the fixture
topic's ``mean`` at n = 100 and n = 20000; figures keep at most 100 points a series,
so both are about 2 KB of JSON).
Each ``get`` verifies the record's checksum, as a server's cached read does. The
Redis server runs on loopback here, so its figure is the floor; on a network, add
the round-trip time. Reported: median and quartiles per cache and the ratio to
SQLite (median of per-round ratios, with quartiles).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path

from whylab.bench import compare, quartiles
from whylab.explorer.content.topics import load_registry
from whylab.explorer.runs.cache import ResultCache
from whylab.explorer.runs.redis.cache import RedisResultCache
from whylab.explorer.runs.redis.link import RedisLink
from whylab.explorer.runs.result_json import dumps, result_to_dict

FIXTURE_TOPICS = Path(__file__).resolve().parents[1] / "tests" / "explorer" / "fixture_topics"
BUDGET_S = 0.02


def start_redis(folder: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(0.3)
    return process, f"redis://127.0.0.1:{port}/0"


def both_are(record: str, got: str | None, reference: str | None) -> bool:
    """Both caches gave back exactly the stored record."""
    return got == reference == record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--redis-url", default=None, help="a Redis to use (default: start one)")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp())
    server = None
    url = args.redis_url
    if url is None:
        if shutil.which("redis-server") is None:
            raise SystemExit("needs redis-server (Debian package redis-server) or --redis-url")
        server, url = start_redis(folder)
    try:
        link = RedisLink(url)
        caches = {"sqlite": ResultCache(folder / "sqlite"), "redis": RedisResultCache(link)}
        experiment = load_registry(FIXTURE_TOPICS).get("tiny-demo").experiments["mean"]
        print(f"{'record':>10} {'cache':<8} {'median µs':>10} {'[q1, q3] µs':>20} "
              f"{'x sqlite (median [q1, q3])':>30}")  # fmt: skip
        for n in (100, 20_000):
            record = dumps(result_to_dict(experiment.run(n=n, bias=0.0, seed=7)))
            key = f"bench-{n}"
            for cache in caches.values():
                cache.put(key, "tiny-demo", "mean", record)
            result = compare(
                {name: partial(cache.get, key) for name, cache in caches.items()},
                args.rounds,
                BUDGET_S,
                check_equal=partial(both_are, record),
            )
            size = f"{len(record.encode()) / 1024:.0f} KB"
            for name, samples in result.times.items():
                micros = quartiles([t * 1e6 for t in samples])
                ratio = result.ratio_quartiles(name, "sqlite")
                spread = f"[{micros.q1:.1f}, {micros.q3:.1f}]"
                print(f"{size:>10} {name:<8} {micros.median:>10.1f} {spread:>20} "
                      f"{ratio.format('.2f'):>30}")  # fmt: skip
        caches["redis"].clear()
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
