"""Bad command-line arguments: one line on stderr naming the option, exit code 2, no traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from whylab.cli import main

FIXTURE_TOPICS = Path(__file__).resolve().parent / "fixture_topics"
TOPICS = ["--topics-dir", str(FIXTURE_TOPICS)]


def usage_error(capsys, argv: list[str]) -> str:
    """Run ``whylab argv``; it must exit 2 with one line on stderr. Returns that line."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["serve", "--workers", "0"], "--workers"),
        (["serve", "--port", "99999"], "--port"),
        (["serve", "--port", "0"], "--port"),
        (["serve", "--rate", "0"], "--rate"),
        (["serve", "--rate", "nan"], "--rate"),
        (["serve", "--rate", "inf"], "--rate"),
        (["serve", "--burst", "-1"], "--burst"),
        (["serve", "--burst", "nan"], "--burst"),
        (["serve", "--max-queue", "0"], "--max-queue"),
        (["serve", "--max-queue", "-1"], "--max-queue"),
        (["serve", "--memory-limit-mb", "5"], "--memory-limit-mb"),
        (["serve", "--cache-max-mb", "0"], "--cache-max-mb"),
        (["serve", "--header-timeout", "0"], "--header-timeout"),
        (["serve", "--max-connections", "0"], "--max-connections"),
        (["serve", "--body-timeout", "0"], "--body-timeout"),
        (["serve", "--max-client-connections", "0"], "--max-client-connections"),
        (["serve", "--trusted-proxy", "proxy.example"], "--trusted-proxy"),
        (["serve", "--trusted-proxy", "*"], "--trusted-proxy"),
        (["serve", "--trusted-proxy", "10.0.0.300"], "--trusted-proxy"),
        (["serve", "--cache-dir", ""], "--cache-dir"),
        (["serve", "--log-level", "loud"], "--log-level"),
        (["search", "x", "--limit", "0"], "--limit"),
        (["search", "x", "--limit", "51"], "--limit"),
        (["topics", "--topics-dir", "/nonexistent/whylab"], "--topics-dir"),
        (["export", "site", "--live-url", "javascript:alert(1)"], "--live-url"),
        (["export", "site", "--live-url", "//evil.example/"], "--live-url"),
        (["export", "site", "--live-url", "ftp://example.org/"], "--live-url"),
    ],
)
def test_a_bad_option_is_one_line_naming_it(capsys, argv, named):
    line = usage_error(capsys, argv)
    assert named in line and line.startswith(f"whylab {argv[0]}: error:")


def test_text_from_the_command_line_is_never_read_as_markup(capsys):
    line = usage_error(capsys, ["run", "[/]", "x", *TOPICS])
    assert "unknown topic '[/]'" in line
    line = usage_error(capsys, ["run", "[bold red]boom[/]", "x", *TOPICS])
    assert "[bold red]boom[/]" in line  # shown as typed, not styled away
    assert main(["search", "[/]", *TOPICS]) == 1
    assert "[/]" in capsys.readouterr().out


def test_a_bad_parameter_and_an_unknown_experiment_are_one_line(capsys):
    line = usage_error(capsys, ["run", "tiny-demo", "sine", "--samples", "5", *TOPICS])
    assert "samples: must be >= 8 (got 5)" in line
    line = usage_error(capsys, ["run", "tiny-demo", "[x]", *TOPICS])
    assert "no experiment '[x]'" in line
    line = usage_error(capsys, ["check", "--topic", "[nope]", *TOPICS])
    assert "unknown topic '[nope]'" in line


def test_export_refuses_a_non_empty_folder_unless_forced(capsys, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "notes.txt").write_text("mine", encoding="utf-8")
    line = usage_error(capsys, ["export", str(site), *TOPICS])
    assert "is not empty" in line and "--force" in line
    assert (site / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert main(["export", str(site), "--force", *TOPICS]) == 0
    assert (site / "en" / "index.html").is_file()


def test_export_to_a_path_that_cannot_be_a_folder_is_one_line(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    line = usage_error(capsys, ["export", str(blocker), *TOPICS])
    assert "is not a folder" in line
    line = usage_error(capsys, ["export", str(blocker / "site"), *TOPICS])
    assert "cannot create" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_export_to_an_unwritable_folder_is_one_line(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    line = usage_error(capsys, ["export", str(locked / "site"), *TOPICS])
    assert "cannot create" in line


def test_a_good_live_url_is_written_into_the_links(tmp_path):
    site = tmp_path / "site"
    assert main(["export", str(site), "--live-url", "https://whylab.example/", *TOPICS]) == 0
    page = (site / "en" / "topics" / "tiny-demo" / "index.html").read_text(encoding="utf-8")
    assert "https://whylab.example/" in page


def test_serve_on_a_taken_port_is_one_line_naming_port(capsys):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        line = usage_error(capsys, ["serve", "--port", str(port), "--no-warm", *TOPICS])
    assert f"127.0.0.1:{port}" in line and "--port" in line


def test_serve_starts_with_an_unusable_cache_dir_and_says_so(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable, "-m", "whylab.cli", "serve", "--port", str(port), *TOPICS,
        "--cache-dir", str(blocker / "cache"), "--workers", "1", "--no-warm",
        "--log-level", "warning",
    ]  # fmt: skip
    root = Path(__file__).resolve().parents[2]
    server = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/topics/tiny-demo", timeout=2)
                break
            except httpx.HTTPError:
                assert server.poll() is None, "serve exited"
                time.sleep(0.1)
        assert answer.status_code == 200
        run = httpx.get(f"http://127.0.0.1:{port}/api/topics/tiny-demo/experiments/graph")
        assert run.status_code == 200 and run.json()["passed"]
    finally:
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=30)
    assert "result cache in memory only" in out and "a-file" in out
