"""Time to first byte of the home page and every topic page, in interleaved rounds.

    PYTHONPATH=. python benchmarks/ttfb_explorer.py [--rounds 9] [--lang en]

Starts ``whylab serve`` on a free loopback port (the helpers of
benchmarks/load_explorer.py), loads every page once so its results are
computed and cached, then in each round fetches the home page and every topic
page once, in a shuffled order, with ``curl`` (gzip accepted, as a browser
does) and records curl's ``time_starttransfer``. Prints per page the median and
quartiles in milliseconds, the median over rounds of the page's time divided
by the home page's time *in the same round* (so a burst of load from elsewhere
on the machine moves both sides of a ratio), its worst ratio, and the page's
size as HTML and as sent gzip-compressed. The machine's load average is
printed before and after: quote it with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_explorer import free_port, start_server, stop_server, wait_until_up  # noqa: E402


def ttfb_ms(url: str) -> tuple[float, int]:
    """curl's time to first byte for ``url`` (gzip accepted), in milliseconds, and the
    bytes sent (compressed)."""
    result = subprocess.run(
        [
            "curl",
            "-s",
            "-o",
            "/dev/null",
            "--compressed",
            "-w",
            "%{time_starttransfer} %{size_download}",
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, size = result.stdout.split()
    return 1000 * float(seconds), int(size)


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--lang", choices=["en", "zh"], default="en")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as scratch:
        server = start_server(port, str(Path(scratch) / "cache"), workers=2, rate_limit=True)
        try:
            wait_until_up(base)
            slugs = [t["slug"] for t in httpx.get(f"{base}/api/topics").json()]
            pages = {"home": f"{base}/{args.lang}/"}
            pages |= {slug: f"{base}/{args.lang}/topics/{slug}" for slug in slugs}
            sizes: dict[str, int] = {}
            with httpx.Client(timeout=120) as client:
                for name, url in pages.items():  # compute and cache every result first
                    client.get(url).raise_for_status()
                    sizes[name] = len(client.get(url, headers={"Accept-Encoding": ""}).content)
            load_before = os.getloadavg()
            times: dict[str, list[float]] = {name: [] for name in pages}
            ratios: dict[str, list[float]] = {name: [] for name in pages}
            gzipped: dict[str, int] = {}
            for _ in range(args.rounds):
                order = list(pages)
                random.shuffle(order)
                this_round = {}
                for name in order:
                    this_round[name], gzipped[name] = ttfb_ms(pages[name])
                for name, ms in this_round.items():
                    times[name].append(ms)
                    ratios[name].append(ms / this_round["home"])
            load_after = os.getloadavg()
        finally:
            stop_server(server)
    print(
        f"\nTTFB, /{args.lang}/ pages, {args.rounds} interleaved rounds, gzip accepted; "
        f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} "
        f"({os.cpu_count()} cores)\n"
    )
    header = (
        f"{'page':22} {'q1 ms':>8} {'median':>8} {'q3 ms':>8} {'x home':>8} {'max x':>7} "
        f"{'KB':>7} {'KB gz':>7}"
    )
    print(header)
    print("-" * len(header))
    for name in pages:
        q1, median, q3 = quartiles(times[name])
        ratio = statistics.median(ratios[name])
        print(
            f"{name:22} {q1:8.1f} {median:8.1f} {q3:8.1f} {ratio:8.2f} {max(ratios[name]):7.2f} "
            f"{sizes[name] / 1000:7.1f} {gzipped[name] / 1000:7.1f}"
        )


if __name__ == "__main__":
    main()
