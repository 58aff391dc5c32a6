"""Load test of the explorer: throughput and latency of cached experiments and search.

    PYTHONPATH=. python benchmarks/load_explorer.py [--duration 20] [--users 16] [--pages]
    PYTHONPATH=. python benchmarks/load_explorer.py --matrix [--duration 20] [--server-no-warm]

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

``--matrix`` measures page views four ways in one invocation -- 16 and 64
users, each as readers (1-3 s between pages) and closed loop (no pause) --
and prints one summary table. The results are computed once; then each
configuration gets a freshly started server on that result cache and locust
begins once the server has filled its page cache at start-up (it says so in its
log; servers run at log level info, as by default, access log included) --
or, with ``--server-no-warm``, as soon as it answers, so the first page views
render concurrently, as after a restart of a server started cold. About 3
minutes at 20 s per configuration.

Users arrive at ``--spawn-rate`` a second (8 by default) and the statistics
start once all have arrived (locust's ``--reset-stats``), then run for
``--duration`` seconds: the steady state of that many readers. Starting all 64
locust users within one second costs locust itself enough CPU, on the cores it
shares with the server, that even a static file's p99 rose to 180 ms in the
first seconds (7-9 ms once they had all started); a ramp keeps that start-up
cost of the load generator out of the server's figures.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
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


# (users, seconds between a reader's pages LOW,HIGH) of --matrix: readers, then closed loop.
MATRIX = [(16, "1,3"), (16, "0,0.01"), (64, "1,3"), (64, "0,0.01")]
CLOSED_LOOP = "0,0.01"


def start_server(
    port: int,
    cache_dir: str,
    workers: int,
    rate_limit: bool,
    warm_at_start: bool = False,
    log_level: str = "warning",
) -> subprocess.Popen:
    """``whylab serve`` on ``port``; with ``warm_at_start`` it fills its page cache at
    start-up. Below warning level its log goes to a pipe that :func:`read_log` reads."""
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
        *([] if warm_at_start else ["--no-warm"]),
        "--log-level",
        log_level,
    ]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    log = subprocess.DEVNULL if log_level == "warning" else subprocess.PIPE
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True
    )


def read_log(server: subprocess.Popen, wait: bool, timeout_s: float = 300) -> str:
    """Drain the server's log in a thread (so the pipe never fills); with ``wait``, wait for
    its "page cache filled" line and return it."""
    found: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in server.stderr:
            if not found and "page cache filled" in line:
                found.append(line.strip())
                seen.set()
        seen.set()  # the server ended

    threading.Thread(target=read, daemon=True).start()
    if not wait:
        return ""
    if not seen.wait(timeout_s) or not found:
        raise SystemExit("the explorer did not report a filled page cache")
    return found[0]


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
    base: str,
    users: int,
    duration: int,
    csv_prefix: str,
    user_class: str,
    think: str,
    spawn_rate: float,
) -> None:
    """``users`` arrive at ``spawn_rate`` a second; statistics count from when all have
    arrived (locust's --reset-stats) and run for ``duration`` seconds after that."""
    ramp_s = math.ceil(users / spawn_rate)
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
        str(spawn_rate),
        "-t",
        f"{ramp_s + duration}s",
        "--host",
        base,
        "--csv",
        csv_prefix,
        "--only-summary",
        "--reset-stats",
        "--stop-timeout",
        "5",
        "--loglevel",
        "WARNING",
    ]
    env = {**os.environ, "WHYLAB_LOCUST_THINK_S": think}
    finished = subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        check=False,
        timeout=ramp_s + duration + 60,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if finished.returncode not in (0, 1):  # 1: some requests failed (the table shows them)
        print(finished.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"locust exited with {finished.returncode}")


def read_rows(csv_prefix: str) -> list[dict[str, str]]:
    with open(f"{csv_prefix}_stats.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def report(
    csv_prefix: str,
    duration: int,
    users: int,
    workers: int,
    rate_limit: bool,
    load: tuple,
    spawn_rate: float,
) -> None:
    rows = read_rows(csv_prefix)
    print(
        f"\nexplorer load test: {users} locust users, {duration} s, {workers} experiment workers, "
        f"{os.cpu_count()} cores shared by server and load generator, "
        f"rate limit {'on (defaults)' if rate_limit else 'off'}, "
        f"load average before {load[0]:.1f}, after {load[1]:.1f}; users arrive at "
        f"{spawn_rate:g}/s, measured from when all have arrived\n"
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


def pace(think: str) -> str:
    return "closed loop" if think == CLOSED_LOOP else f"think {think.replace(',', '-')} s"


def run_matrix(args: argparse.Namespace, rate_limit: bool) -> None:
    """Each configuration of MATRIX on a fresh server over one precomputed result cache."""
    warm_at_start = not args.server_no_warm
    lines = []
    warm_line = ""
    with tempfile.TemporaryDirectory() as scratch:
        cache_dir = str(Path(scratch) / "cache")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start_server(port, cache_dir, args.workers, rate_limit)
        try:
            wait_until_up(base)
            warm_pages(base)
        finally:
            stop_server(server)
        for number, (users, think) in enumerate(MATRIX):
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            # Info level, as `whylab serve` runs by default (its access log included).
            server = start_server(
                port, cache_dir, args.workers, rate_limit, warm_at_start, log_level="info"
            )
            try:
                wait_until_up(base)
                warm_line = read_log(server, wait=warm_at_start) or warm_line
                prefix = str(Path(scratch) / f"locust{number}")
                load_before = os.getloadavg()[0]
                run_locust(
                    base, users, args.duration, prefix, "PageReader", think, args.spawn_rate
                )
                load_after = os.getloadavg()[0]
            finally:
                stop_server(server)
            for row in read_rows(prefix):
                lines.append((users, pace(think), row, load_before, load_after))
    print(
        f"\nexplorer page views: {args.duration} s per configuration, fresh server each "
        f"({'page cache filled at start-up' if warm_at_start else 'started with --no-warm'}), "
        f"{args.workers} experiment workers, {os.cpu_count()} cores shared with locust; "
        f"users arrive at {args.spawn_rate:g}/s, measured from when all have arrived"
    )
    if warm_line:
        print(f"locust starts once the server says (last run): {warm_line}")
    print()
    header = (
        f"{'users':>5} {'pace':16} {'endpoint':11} {'requests':>8} {'failed':>6} {'req/s':>7} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'load before-after':>18}"
    )
    print(header)
    print("-" * len(header))
    for users, label, row, before, after in lines:
        print(
            f"{users:5d} {label:16} {row['Name'][:11]:11} {int(row['Request Count']):8d} "
            f"{int(row['Failure Count']):6d} {float(row['Requests/s']):7.1f} "
            f"{float(row['50%']):7.0f} {float(row['95%']):7.0f} {float(row['99%']):7.0f} "
            f"{before:11.1f}-{after:.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=20, help="seconds of load")
    parser.add_argument("--users", type=int, default=16, help="concurrent simulated readers")
    parser.add_argument("--workers", type=int, default=2, help="experiment worker processes")
    parser.add_argument(
        "--spawn-rate",
        type=float,
        default=8.0,
        help="users arriving per second; statistics start once all have arrived (default 8)",
    )
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
    parser.add_argument(
        "--matrix",
        action="store_true",
        help="page views at 16 and 64 users, readers and closed loop, one table",
    )
    parser.add_argument(
        "--server-no-warm",
        action="store_true",
        help="with --matrix: start each server with --no-warm (no page cache fill)",
    )
    args = parser.parse_args()
    if not args.spawn_rate > 0:
        parser.error(f"--spawn-rate must be > 0 users a second, got {args.spawn_rate}")
    rate_limit = not args.no_rate_limit
    if args.matrix:
        run_matrix(args, rate_limit)
        return
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
            run_locust(
                base, args.users, args.duration, prefix, user_class, args.think, args.spawn_rate
            )
            load = (load_before[0], os.getloadavg()[0])
            report(
                prefix, args.duration, args.users, args.workers, rate_limit, load, args.spawn_rate
            )
            if args.pages:
                print(f"page readers wait {args.think.replace(',', '-')} s between pages")
        finally:
            stop_server(server)


if __name__ == "__main__":
    main()
