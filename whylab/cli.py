"""The ``whylab`` command: serve the explorer, and use its topics from a terminal.

::

    whylab serve [--host 127.0.0.1] [--port 8000] [--workers N] [--redis-url URL]
                 [--public-url URL]
    whylab worker --redis-url URL [--workers N]
    whylab topics
    whylab search QUERY [--lang en|zh]
    whylab run TOPIC EXPERIMENT [--PARAM VALUE ...] [--lang en|zh] [--json]
    whylab check [--topic SLUG] [--controls]
    whylab check --mutants [--topic SLUG] [--sample N] [--write-table]
    whylab export DIR [--live-url URL] [--public-url URL]

``run`` and ``check`` run experiments in this process (``serve`` uses worker
processes with limits; with ``--redis-url``, or ``$WHYLAB_REDIS_URL``, the
result cache and the run queue are shared on that Redis and runs are done by
``whylab worker`` processes on any machine). Exit codes: 0 success; 1 a check failed (``run``,
``check``) or nothing matched (``search``); 2 bad usage, e.g. an unknown topic,
a parameter outside its bound, or any option out of its range -- always as one
line on stderr naming the option and the bound; 3 nothing failed but a timing
check stayed inconclusive (its interval straddles its bound: rerun it). Text that comes from the
command line or from topics is printed as it is, never read as rich markup.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

import whylab

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INCONCLUSIVE = 3  # nothing failed, but a timing check could not be decided here and now

console = Console()
errors = Console(stderr=True)


class UsageError(Exception):
    """A bad argument found after parsing; printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``whylab serve: error: ...``) and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def int_in(low: int, high: int | None = None, allow_zero: bool = False):
    """An argparse type: an integer within [low, high] (0 too when ``allow_zero``)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if allow_zero and value == 0:
            return value
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f">= {low}"
            extra = " (or 0)" if allow_zero else ""
            raise argparse.ArgumentTypeError(f"must be {bound}{extra}, got {value}")
        return value

    return parse


def finite_float(low: float, allow_zero: bool = False):
    """An argparse type: a finite number > ``low`` (or exactly 0 when ``allow_zero``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if allow_zero and value == 0:
            return value
        if value <= low:
            extra = " (or 0)" if allow_zero else ""
            raise argparse.ArgumentTypeError(f"must be > {low:g}{extra}, got {value:g}")
        return value

    return parse


def existing_dir(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a folder")
    return path


def http_url(text: str) -> str:
    """An argparse type: an absolute http(s) URL (anything else could run script in links)."""
    from urllib.parse import urlsplit

    parts = urlsplit(text.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"must be an http:// or https:// URL, got {text!r}")
    if any(ch.isspace() or ord(ch) < 32 for ch in text.strip()):
        raise argparse.ArgumentTypeError("must not contain spaces or control characters")
    return text.strip()


def public_url(text: str) -> str:
    """An argparse type: the public base URL of the site (see whylab.explorer.web.seo)."""
    from whylab.explorer.web.seo import check_public_url

    try:
        return check_public_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def redis_url(text: str) -> str:
    """An argparse type: a Redis URL (redis://host:port/db, rediss://..., unix://...)."""
    from whylab.explorer.runs.redis.link import check_redis_url

    try:
        return check_redis_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def proxy_address(text: str) -> str:
    """An argparse type: an IP address or network whose X-Forwarded-For is believed."""
    from whylab.explorer.web.conn_limits import proxy_networks

    try:
        proxy_networks([text])
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text.strip()


def folder_path(text: str) -> Path:
    """An argparse type: a folder's path, not empty (``Path("")`` would be the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a folder, got an empty path")
    return Path(text)


REDIS_EXTRA = "--redis-url needs the redis and rq packages: pip install 'whylab[redis]'"


def _registry(args: argparse.Namespace):
    from whylab.explorer.content.topics import TopicError, load_registry

    try:
        return load_registry(args.topics_dir)
    except TopicError as error:
        raise UsageError(str(error).replace("\n", " ")) from None


# ---------------------------------------------------------------- serve


def check_port_free(host: str, port: int) -> None:
    """Raise UsageError naming ``--port`` when ``host:port`` cannot be bound (taken, or no
    such address here), before minutes of start-up are spent; uvicorn binds it right after."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise UsageError(f"--host {host!r} is not an address of this machine ({error})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # As uvicorn does, so a port left in TIME_WAIT by a stopped server counts as free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            raise UsageError(
                f"cannot listen on {host}:{port}: {error.strerror or error}; is another server "
                f"running there? choose another port with --port"
            ) from None


def cmd_serve(args: argparse.Namespace) -> int:
    import logging

    import uvicorn

    from whylab.explorer.content.topics import TopicError
    from whylab.explorer.web.app import create_app
    from whylab.explorer.web.config import ExplorerConfig
    from whylab.explorer.web.server import raise_descriptor_limit, server_settings

    config = ExplorerConfig(
        topics_dir=args.topics_dir,
        cache_dir=args.cache_dir,
        cache_max_mb=args.cache_max_mb,
        workers=args.workers,
        memory_limit_mb=args.memory_limit_mb,
        max_queue=args.max_queue,
        rate_per_s=args.rate,
        rate_burst=args.burst,
        warm_cache=not args.no_warm,
        measure_timing=not args.no_warm and not args.no_measure,
        trusted_proxies=tuple(args.trusted_proxy),
        header_timeout_s=args.header_timeout,
        body_timeout_s=args.body_timeout,
        max_connections=args.max_connections,
        max_connections_per_client=args.max_client_connections,
        redis_url=args.redis_url,
        public_url=args.public_url,
    )
    check_port_free(args.host, args.port)
    if config.redis_url is None:
        console.print(
            "Starting the experiment workers; the first start on a machine compiles the "
            "numerical kernels (about 10-40 s), later starts reuse numba's cache."
        )
    try:
        app = create_app(config)
    except TopicError as error:
        raise UsageError(str(error).replace("\n", " ")) from None
    except ModuleNotFoundError as error:
        if config.redis_url is None or error.name not in ("redis", "rq"):
            raise
        raise UsageError(REDIS_EXTRA) from None
    # whylab's own log lines (the start-up warm-up's, the cache's faults) beside uvicorn's.
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    # Each connection holds a descriptor; leave room for the cache, pipes and workers too.
    raise_descriptor_limit(config.max_connections + 256)
    url = f"http://{args.host}:{args.port}/"
    console.print(
        f"[bold]whylab explorer[/bold] {whylab.__version__} on "
        f"[link={escape(url)}]{escape(url)}[/link]"
    )
    if config.redis_url is None:
        runs = f"{args.workers} experiment workers"
    else:
        runs = app.state.pool.describe()
    console.print(escape(f"{len(app.state.registry)} topics, {runs}. Ctrl-C stops."))
    cache = app.state.cache
    console.print(escape(cache.describe() if cache is not None else "result cache off"))
    if config.trusted_proxies:
        proxies = ", ".join(config.trusted_proxies)
        console.print(escape(f"X-Forwarded-For believed from: {proxies}"))
    if args.open:
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    uvicorn.run(
        app, host=args.host, port=args.port, log_level=args.log_level, **server_settings(config)
    )
    return EXIT_OK


# ---------------------------------------------------------------- worker


def cmd_worker(args: argparse.Namespace) -> int:
    import logging

    if args.redis_url is None:
        raise UsageError(
            "--redis-url (or $WHYLAB_REDIS_URL) is needed: the Redis to take runs from"
        )
    registry = _registry(args)
    try:
        from whylab.explorer.runs.redis import worker as remote_worker
        from whylab.explorer.runs.redis.link import redacted
    except ModuleNotFoundError as error:
        if error.name not in ("redis", "rq"):
            raise
        raise UsageError(REDIS_EXTRA) from None
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    memory = f"{args.memory_limit_mb} MiB" if args.memory_limit_mb else "no"
    console.print(
        escape(
            f"whylab worker {whylab.__version__}: {len(registry)} topics, {args.workers} "
            f"{'process' if args.workers == 1 else 'processes'} taking runs from "
            f"{redacted(args.redis_url)}, {memory} memory limit a run. Ctrl-C stops (after "
            "the runs in hand; twice: at once)."
        )
    )
    try:
        if args.workers == 1:
            remote_worker.serve(args.redis_url, registry, args.memory_limit_mb)
        else:
            remote_worker.serve_many(
                args.workers, args.redis_url, args.topics_dir, args.memory_limit_mb, args.log_level
            )
    except ModuleNotFoundError as error:
        if error.name not in ("redis", "rq"):
            raise
        raise UsageError(REDIS_EXTRA) from None
    return EXIT_OK


# ---------------------------------------------------------------- topics and search


def cmd_topics(args: argparse.Namespace) -> int:
    registry = _registry(args)
    table = RichTable(title=f"{len(registry)} topics")
    for column in ("slug", "title", "标题", "question", "experiments"):
        table.add_column(column)
    for topic in registry:
        table.add_row(
            escape(topic.slug),
            escape(topic.meta["en"].title),
            escape(topic.meta["zh"].title),
            escape(topic.meta[args.lang].question),
            escape(", ".join(topic.experiments)),
        )
    console.print(table)
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    registry = _registry(args)
    hits = registry.search_index.search(args.query[:200], args.lang, limit=args.limit)
    if not hits:
        console.print(
            f"No topic matches {escape(repr(args.query))}. Try another keyword, or `whylab topics`."
        )
        return EXIT_FAILED
    table = RichTable()
    for column in ("slug", "score", "title", "snippet"):
        table.add_column(column)
    for hit in hits:
        table.add_row(escape(hit.slug), f"{hit.score:.2f}", escape(hit.title), escape(hit.snippet))
    console.print(table)
    return EXIT_OK


# ---------------------------------------------------------------- run and check


def parse_param_args(tokens: Sequence[str]) -> dict[str, str]:
    """``["--phase", "0.5", "--seed=3"]`` -> ``{"phase": "0.5", "seed": "3"}``.

    Dashes in names become underscores, so ``--log-y`` sets ``log_y``.
    """
    values: dict[str, str] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not token.startswith("--") or len(token) < 3:
            raise ValueError(f"expected --PARAM VALUE, got {token!r}")
        name, equals, value = token[2:].partition("=")
        if not equals:
            if index + 1 >= len(tokens):
                raise ValueError(f"--{name} needs a value")
            index += 1
            value = tokens[index]
        values[name.replace("-", "_")] = value
        index += 1
    return values


class LazyProgress:
    """A progress bar that appears only once an experiment reports progress."""

    def __init__(self, label: str):
        self.label = label
        self.progress: Progress | None = None
        self.task = None

    def __call__(self, fraction: float) -> None:
        if self.progress is None:
            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                console=errors,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=1.0)
        self.progress.update(self.task, completed=fraction)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _run_with_progress(topic, experiment, params: dict[str, Any]):
    from whylab.explorer.runs.service import run_locally

    progress = LazyProgress(f"{topic.slug}/{experiment.name}")
    try:
        return run_locally(topic, experiment, params, progress=progress)
    finally:
        progress.close()


def _print_record(record, experiment, lang: str) -> None:
    from whylab.explorer.content.i18n import translate
    from whylab.explorer.experiment import in_language
    from whylab.explorer.runs.service import format_param
    from whylab.explorer.web.render import format_value

    console.print(
        f"[bold]{escape(experiment.title.get(lang))}[/bold]  (whylab {record.engine_version})"
    )
    console.print(
        escape(
            "parameters: " + ", ".join(f"{k}={format_param(v)}" for k, v in record.params.items())
        )
    )
    kind = "live measurement" if record.timing else "computed"
    console.print(f"{kind} in {record.elapsed_s:.3g} s")
    result = record.result
    if result.checks:
        table = RichTable(title="checks")
        for column in ("", "claim", "measured", "expected"):
            table.add_column(column)
        for check in result.checks:
            mark = {
                "passed": "[green]✓[/green]",
                "failed": "[red]✗[/red]",
                "not_applicable": "[yellow]n/a[/yellow]",
                "inconclusive": "[yellow]?[/yellow]",
            }[check.state]
            if check.state == "not_applicable":
                measured = check.when_applicable.get(lang) if check.when_applicable else ""
            else:
                measured = check.measured_in(lang)
            if check.state == "inconclusive":
                measured = f"{translate('inconclusive', lang)}: {measured}"
            table.add_row(
                mark,
                escape(check.name.get(lang)),
                escape(measured),
                escape(check.expected_in(lang)),
            )
        console.print(table)
    if result.metrics:
        table = RichTable(title="metrics")
        table.add_column("name")
        table.add_column("value", justify="right")
        for name, value in result.metrics.items():
            table.add_row(escape(name), escape(format_value(value)))
        console.print(table)
    for data in result.tables:
        table = RichTable(title=escape(data.title.get(lang)))
        for column in data.columns:
            table.add_column(escape(column.get(lang)))
        for row in data.rows:
            table.add_row(*(escape(format_value(in_language(v, lang))) for v in row))
        console.print(table)
    for figure in result.figures:
        title = escape(figure.title.get(lang))
        console.print(f"figure: {title} (open it in the explorer: whylab serve)")
    for note in result.notes:
        console.print(escape(note.get(lang)))


def cmd_run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from whylab.explorer.experiment import ParamError

    registry = _registry(args)
    topic = registry.get(args.topic)
    if topic is None:
        known = ", ".join(registry.topics)
        raise UsageError(f"unknown topic {args.topic!r}; topics: {known}")
    experiment = topic.experiments.get(args.experiment)
    if experiment is None:
        raise UsageError(
            f"topic {topic.slug} has no experiment {args.experiment!r}; "
            f"experiments: {', '.join(topic.experiments)}"
        )
    try:
        params = experiment.parse_params(parse_param_args(extra))
    except (ParamError, ValueError) as error:
        names = ", ".join(f"--{p.name}" for p in experiment.params)
        raise UsageError(f"bad parameter: {error}  (parameters: {names or 'none'})") from None
    record = _run_with_progress(topic, experiment, params)
    if args.json:
        print(json.dumps(record.to_json(), ensure_ascii=False, indent=2))
    else:
        _print_record(record, experiment, args.lang)
    return _exit_code(record.result)


def _exit_code(result) -> int:
    """EXIT_FAILED if a check failed, else EXIT_INCONCLUSIVE if one was undecided, else EXIT_OK."""
    if not result.passed:
        return EXIT_FAILED
    return EXIT_INCONCLUSIVE if result.inconclusive else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    registry = _registry(args)
    topics = [t for t in registry if args.topic in (None, t.slug)]
    if not topics:
        raise UsageError(f"unknown topic {args.topic!r}; topics: {', '.join(registry.topics)}")
    if (args.sample is not None or args.write_table) and not args.mutants:
        raise UsageError("--sample and --write-table go with --mutants")
    if args.mutants:
        try:
            from whylab.mutation.command import check_mutants
        except ImportError as error:
            raise UsageError(f"--mutants needs cosmic-ray ({error}): pip install "
                             "'whylab[dev]'") from None

        try:
            return check_mutants(topics, args.sample, args.write_table, console, errors)
        except ValueError as error:
            raise UsageError(str(error)) from None
    if args.controls:
        return _check_controls(topics)
    table = RichTable(title="default runs")
    for column in ("topic", "experiment", "checks", "seconds"):
        table.add_column(column)
    failures: list[str] = []
    undecided: list[str] = []
    for topic in topics:
        for experiment in topic.experiments.values():
            started = time.perf_counter()
            try:
                record = _run_deciding(topic, experiment)
            except Exception as error:
                failures.append(
                    f"{topic.slug}/{experiment.name}: raised {type(error).__name__}: {error}"
                )
                table.add_row(escape(topic.slug), escape(experiment.name), "[red]error[/red]", "")
                continue
            checks = record.result.checks
            passed = sum(c.state == "passed" for c in checks)
            for check in checks:
                if check.state == "failed":
                    failures.append(
                        f"{topic.slug}/{experiment.name}: {check.name.en}: measured "
                        f"{check.measured_in('en')}, expected {check.expected_in('en')}"
                    )
                elif check.state == "not_applicable":
                    failures.append(
                        f"{topic.slug}/{experiment.name}: {check.name.en}: not applicable "
                        "at the defaults"
                    )
                elif check.state == "inconclusive":
                    undecided.append(
                        f"{topic.slug}/{experiment.name}: {check.name.en}: inconclusive on "
                        f"this machine now: measured {check.measured_in('en')}, expected "
                        f"{check.expected_in('en')}"
                    )
            colour = "green" if passed == len(checks) else "red"
            table.add_row(
                escape(topic.slug),
                escape(experiment.name),
                f"[{colour}]{passed}/{len(checks)}[/{colour}]",
                f"{time.perf_counter() - started:.2f}",
            )
    console.print(table)
    for failure in failures:
        errors.print(f"[red]✗[/red] {escape(failure)}")
    _print_undecided(undecided)
    if failures:
        return EXIT_FAILED
    if undecided:
        return EXIT_INCONCLUSIVE
    console.print("[green]every check passed[/green]")
    return EXIT_OK


def _run_deciding(topic, experiment):
    """A default run, rerun whole (as the controls audit does) while a check is inconclusive."""
    from whylab.explorer.content.controls import RERUNS

    for _ in range(RERUNS + 1):
        record = _run_with_progress(topic, experiment, experiment.defaults())
        if not record.result.inconclusive:
            break
    return record


def _print_undecided(undecided: list[str]) -> None:
    for line in undecided:
        errors.print(f"[yellow]?[/yellow] {escape(line)} (no evidence either way; rerun it)")


def _check_controls(topics) -> int:
    """``whylab check --controls``: every check must fail under some negative control."""
    from whylab.explorer.content.controls import audit_experiment

    table = RichTable(title="checks under negative controls")
    for column in ("topic", "experiment", "check", "at defaults", "made to fail by"):
        table.add_column(column)
    problems: list[str] = []
    undecided: list[str] = []
    totals = RichTable(title="per topic")
    for column in ("topic", "experiments", "checks", "controls", "problems"):
        totals.add_column(column)
    for topic in topics:
        audits = [audit_experiment(topic.slug, e) for e in topic.experiments.values()]
        for audit in audits:
            for finding in audit.checks:
                mark = {"passed": "✓", "failed": "✗", "not_applicable": "n/a", "inconclusive": "?"}
                table.add_row(
                    escape(topic.slug),
                    escape(audit.experiment),
                    escape(finding.id),
                    mark[finding.state_at_defaults],
                    escape(", ".join(finding.broken_by)) or "[red]nothing: unfalsified[/red]",
                )
            problems.extend(audit.problems)
            undecided.extend(audit.inconclusive)
        totals.add_row(
            escape(topic.slug),
            str(len(audits)),
            str(sum(len(a.checks) for a in audits)),
            str(sum(len(a.controls) for a in audits)),
            str(sum(len(a.problems) for a in audits)),
        )
    console.print(table)
    console.print(totals)
    for problem in problems:
        errors.print(f"[red]✗[/red] {escape(problem)}")
    _print_undecided(undecided)
    if problems:
        return EXIT_FAILED
    if undecided:
        return EXIT_INCONCLUSIVE
    console.print("[green]every check passed at its defaults and failed under a control[/green]")
    return EXIT_OK


# ---------------------------------------------------------------- export


def _check_export_dir(out: Path, force: bool) -> None:
    """Refuse (UsageError) a target that is not a folder, not writable, or not empty."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{str(out)!r} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise UsageError(f"{str(out)!r} is not empty; choose an empty folder or pass --force")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"cannot create {str(out)!r}: {error.strerror or error}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write into {str(out)!r}")


def cmd_export(args: argparse.Namespace) -> int:
    from whylab.explorer.web.export import export_site

    registry = _registry(args)
    _check_export_dir(args.dir, args.force)
    try:
        with errors.status("running experiments") as status:
            written = export_site(
                registry,
                args.dir,
                live_url=args.live_url,
                public_url=args.public_url,
                on_experiment=lambda slug, name: status.update(escape(f"running {slug}/{name}")),
            )
    except OSError as error:
        errors.print(escape(f"whylab export: error: cannot write the site: {error}"))
        return EXIT_FAILED
    pages = sum(1 for p in written if p.suffix == ".html")
    console.print(escape(f"wrote {pages} pages and {len(written) - pages} assets to {args.dir}"))
    index = Path(args.dir) / "index.html"
    console.print(escape(f"open {index} in a browser, or host the folder as is"))
    return EXIT_OK


# ---------------------------------------------------------------- the parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="whylab",
        description="Explore how ML systems and numerical code really work, "
        "through equations, diagrams and experiments.",
    )
    parser.add_argument("--version", action="version", version=f"whylab {whylab.__version__}")
    common = Parser(add_help=False)
    common.add_argument(
        "--topics-dir",
        type=existing_dir,
        default=None,
        help="a folder of topics (default: whylab's own)",
    )
    lang = Parser(add_help=False)
    lang.add_argument("--lang", choices=("en", "zh"), default="en", help="output language")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # What serve and worker share: the Redis of a deployment, the limit of a run, logging.
    running = Parser(add_help=False)
    running.add_argument(
        "--redis-url",
        type=redis_url,
        default=os.environ.get("WHYLAB_REDIS_URL") or None,
        help="the Redis a deployment's servers and workers share: its result cache and run "
        "queue (default: $WHYLAB_REDIS_URL; for serve, none: this machine alone)",
    )
    running.add_argument(
        "--memory-limit-mb",
        type=int_in(128, allow_zero=True),
        default=2048,
        help="per experiment worker process (one run at a time); 0 = none",
    )
    running.add_argument(
        "--log-level", choices=("critical", "error", "warning", "info", "debug"), default="info"
    )

    serve = commands.add_parser(
        "serve", parents=[common, running], help="open the explorer on localhost"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int_in(1, 65535), default=8000)
    serve.add_argument(
        "--public-url",
        type=public_url,
        default=None,
        help="where readers reach the site (https://host[/prefix]): absolute canonical, "
        "hreflang and og:url links, sitemap.xml, and the wheel URL notebooks install from",
    )
    serve.add_argument(
        "--workers", type=int_in(1, 256), default=2, help="experiment worker processes"
    )
    serve.add_argument(
        "--cache-dir", type=folder_path, default=None, help="result cache folder"
    )
    serve.add_argument(
        "--cache-max-mb",
        type=finite_float(0),
        default=512.0,
        help="result cache size; least recently used results go first",
    )
    serve.add_argument(
        "--max-queue", type=int_in(1, 10_000), default=16, help="waiting runs before 503"
    )
    serve.add_argument(
        "--rate",
        type=finite_float(0),
        default=0.5,
        help="experiment CPU-seconds per second per client (cached results are free)",
    )
    serve.add_argument(
        "--burst",
        type=finite_float(0, allow_zero=True),
        default=20.0,
        help="CPU-seconds a client may use at once; 0 = no limit",
    )
    serve.add_argument(
        "--trusted-proxy",
        type=proxy_address,
        action="append",
        default=[],
        metavar="ADDRESS",
        help="believe X-Forwarded-For from this proxy (repeat for more; default: none)",
    )
    serve.add_argument(
        "--header-timeout",
        type=finite_float(0),
        default=10.0,
        help="seconds a client may take to send a request head",
    )
    serve.add_argument(
        "--max-connections",
        type=int_in(1, 100_000),
        default=256,
        help="open connections before new ones get 503",
    )
    serve.add_argument(
        "--body-timeout",
        type=finite_float(0),
        default=10.0,
        help="seconds a client may take to send a request body after its head",
    )
    serve.add_argument(
        "--max-client-connections",
        type=int_in(1, 100_000),
        default=32,
        help="open connections from one client address before new ones get 429 "
        "(trusted proxies are not limited)",
    )
    serve.add_argument(
        "--no-warm",
        action="store_true",
        help="start cold: do not compute every default result at start-up nor then render "
        "the home, topic and not-found pages into the page cache (first visits render them)",
    )
    serve.add_argument(
        "--no-measure",
        action="store_true",
        help="do not measure the timing experiments at their defaults after start-up (their "
        "blocks then show a kept measurement, or wait for a reader to press Measure)",
    )
    serve.add_argument("--open", action="store_true", help="open a browser")
    serve.set_defaults(handler=cmd_serve)

    worker = commands.add_parser(
        "worker", parents=[common, running], help="run experiments for the servers sharing a Redis"
    )
    worker.add_argument(
        "--workers",
        type=int_in(1, 256),
        default=1,
        help="worker processes under this command, each taking runs (about one per core)",
    )
    worker.set_defaults(handler=cmd_worker)

    topics = commands.add_parser("topics", parents=[common, lang], help="list the topics")
    topics.set_defaults(handler=cmd_topics)

    search = commands.add_parser("search", parents=[common, lang], help="search the topics")
    search.add_argument("query")
    search.add_argument("--limit", type=int_in(1, 50), default=10)
    search.set_defaults(handler=cmd_search)

    run = commands.add_parser(
        "run",
        parents=[common, lang],
        help="run one experiment: whylab run TOPIC EXPERIMENT --param value ...",
    )
    run.add_argument("topic")
    run.add_argument("experiment")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.set_defaults(handler=cmd_run)

    check = commands.add_parser("check", parents=[common], help="run every default, report checks")
    check.add_argument("--topic", default=None, help="only this topic")
    check.add_argument(
        "--controls",
        action="store_true",
        help="also run each experiment under its negative controls; fail on unfalsified checks",
    )
    check.add_argument(
        "--mutants",
        action="store_true",
        help="run each topic's experiments against mutants of its under_test files "
        "(cosmic-ray operators) and report the mutation score",
    )
    check.add_argument(
        "--sample", type=int_in(1), default=None, help="with --mutants: a fixed sample of N"
    )
    check.add_argument(
        "--write-table",
        action="store_true",
        help="with --mutants: store the scores in whylab/topics/MUTANTS.md",
    )
    check.set_defaults(handler=cmd_check)

    export = commands.add_parser("export", parents=[common], help="write a static copy of the site")
    export.add_argument("dir", type=Path)
    export.add_argument(
        "--live-url", type=http_url, default=None, help="link disabled forms to this explorer"
    )
    export.add_argument(
        "--public-url",
        type=public_url,
        default=None,
        help="where the copy is hosted: absolute links, robots.txt, sitemap.xml and the "
        "wheel URL notebooks install from",
    )
    export.add_argument("--force", action="store_true", help="write into a non-empty folder")
    export.set_defaults(handler=cmd_export)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command != "run" and extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return cmd_run(args, extra) if args.command == "run" else args.handler(args)
    except UsageError as error:
        print(f"whylab {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
