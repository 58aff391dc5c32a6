"""Load test of the explorer: throughput and latency of cached experiments and search.

    PYTHONPATH=. python benchmarks/load_explorer.py [--duration 20] [--users 16] [--pages]

Starts ``whylab serve`` on a free loopback port with its default limits (the
per-client CPU-time limit charges only computed runs, so cached reads and pages
from the one loopback client are never refused; ``--no-rate-limit`` turns it
off), computes the experiment results the locust users will ask for, then runs
locust headless for ``--duration`` seconds with
benchmarks/locustfile_explorer.py and prints requests per second and the
50th/95th/99th percentile latency per endpoint. ``--pages`` asks for page views
only (home and every topic page, both languages; no timing experiment is run by
a page view) instead of the mix of cached runs, fragments and search. Load
generator and server share this machine's cores, so the numbers are a floor for
a dedicated server.
"""

from __future__ import annotations

import argparse
import csv
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
LOCUSTFILE = Path(__file__).resolve().parent / "locustfile_explorer.py"
sys.path.insert(0, str(LOCUSTFILE.parent))
from explorer_load_plan import PAGES, PHASES, TOPIC  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int, cache_dir: str, workers: int, rate_limit: bool) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "whylab.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--cache-dir",
        cache_dir,
        *([] if rate_limit else ["--burst", "0"]),
        "--no-warm",
        "--log-level",
        "warning",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def stop_server(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()


def wait_until_up(base: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/api/topics", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("the explorer did not start")


def warm(base: str) -> None:
    """Compute every result the load test asks for, so it measures the cached path."""
    with httpx.Client(base_url=base, timeout=60) as client:
        for phase in PHASES:
            response = client.get(f"/api/topics/{TOPIC}/experiments/superposition?phase={phase}")
            response.raise_for_status()
        client.get(f"/zh/topics/{TOPIC}").raise_for_status()
        check = client.get(f"/api/topics/{TOPIC}/experiments/superposition?phase={PHASES[3]}")
        if not check.json()["cached"]:
            raise SystemExit("warm-up did not reach the cache")


def warm_pages(base: str) -> None:
    """Load every page of the --pages run twice, so its results are computed and cached."""
    with httpx.Client(base_url=base, timeout=120) as client:
        for _ in range(2):
            for path in PAGES:
                client.get(path).raise_for_status()


def run_locust(
    base: str, users: int, duration: int, csv_prefix: str, user_class: str, think: str
) -> None:
    command = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(LOCUSTFILE),
        user_class,
        "--headless",
        "-u",
        str(users),
        "-r",
        str(users),
        "-t",
        f"{duration}s",
        "--host",
        base,
        "--csv",
        csv_prefix,
        "--only-summary",
        "--stop-timeout",
        "5",
        "--loglevel",
        "WARNING",
    ]
    env = {**os.environ, "WHYLAB_LOCUST_THINK_S": think}
    subprocess.run(
        command, cwd=ROOT, env=env, check=False, timeout=duration + 60, stdout=subprocess.DEVNULL
    )


def report(
    csv_prefix: str, duration: int, users: int, workers: int, rate_limit: bool, load: tuple
) -> None:
    with open(f"{csv_prefix}_stats.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    print(
        f"\nexplorer load test: {users} locust users, {duration} s, {workers} experiment workers, "
        f"{os.cpu_count()} cores shared by server and load generator, "
        f"rate limit {'on (defaults)' if rate_limit else 'off'}, "
        f"load average before {load[0]:.1f}, after {load[1]:.1f}\n"
    )
    header = (
        f"{'endpoint':38} {'requests':>9} {'failed':>7} {'req/s':>8} {'p50 ms':>8} "
        f"{'p95 ms':>8} {'p99 ms':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['Name']:38} {int(row['Request Count']):9d} {int(row['Failure Count']):7d} "
            f"{float(row['Requests/s']):8.1f} {float(row['50%']):8.0f} {float(row['95%']):8.0f} "
            f"{float(row['99%']):8.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=20, help="seconds of load")
    parser.add_argument("--users", type=int, default=16, help="concurrent simulated readers")
    parser.add_argument("--workers", type=int, default=2, help="experiment worker processes")
    parser.add_argument(
        "--no-rate-limit", action="store_true", help="serve with the per-client limit off"
    )
    parser.add_argument(
        "--pages", action="store_true", help="page views only (home and every topic page)"
    )
    parser.add_argument(
        "--think",
        default="0,0.01",
        help="with --pages: seconds a reader waits between pages, LOW,HIGH (default: none)",
    )
    args = parser.parse_args()
    rate_limit = not args.no_rate_limit
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as scratch:
        server = start_server(port, str(Path(scratch) / "cache"), args.workers, rate_limit)
        try:
            wait_until_up(base)
            warm_pages(base) if args.pages else warm(base)
            prefix = str(Path(scratch) / "locust")
            user_class = "PageReader" if args.pages else "Reader"
            load_before = os.getloadavg()
            run_locust(base, args.users, args.duration, prefix, user_class, args.think)
            load = (load_before[0], os.getloadavg()[0])
            report(prefix, args.duration, args.users, args.workers, rate_limit, load)
            if args.pages:
                print(f"page readers wait {args.think.replace(',', '-')} s between pages")
        finally:
            stop_server(server)


if __name__ == "__main__":
    main()
