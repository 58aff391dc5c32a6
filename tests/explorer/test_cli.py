"""The ``whylab`` command, run through ``main(argv)`` and once as ``python -m whylab.cli``."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import whylab
from whylab.cli import LazyProgress, main, parse_param_args

FIXTURE_TOPICS = Path(__file__).resolve().parent / "fixture_topics"
TOPICS = ["--topics-dir", str(FIXTURE_TOPICS)]


def test_topics_lists_both_titles(capsys):
    assert main(["topics", *TOPICS]) == 0
    out = capsys.readouterr().out
    assert "tiny-demo" in out and "Tiny demo" in out and "小型示例" in out


def test_search_hits_and_misses(capsys):
    assert main(["search", "正弦", "--lang", "zh", *TOPICS]) == 0
    assert "小型示例" in capsys.readouterr().out
    assert main(["search", "quaternion", *TOPICS]) == 1
    assert "No topic matches" in capsys.readouterr().out


def test_run_prints_checks_metrics_and_tables(capsys):
    assert main(["run", "tiny-demo", "sine", "--amplitude", "2", "--noise=gauss", *TOPICS]) == 0
    out = capsys.readouterr().out
    assert "Parseval: energy is kept" in out and "✓" in out
    assert "amplitude=2.0" in out and "noise=gauss" in out
    assert "energy" in out and "frequency" in out


def test_run_prints_check_values_in_the_requested_language(capsys):
    assert main(["run", "tiny-demo", "graph", *TOPICS]) == 0
    assert "3 nodes with inputs" in capsys.readouterr().out
    assert main(["run", "tiny-demo", "graph", "--lang", "zh", *TOPICS]) == 0
    out = capsys.readouterr().out
    assert "3 个节点有输入" in out and "3 个运算" in out and "nodes with inputs" not in out
    assert main(["run", "tiny-demo", "sine", "--lang", "zh", *TOPICS]) == 0
    assert "频域" in capsys.readouterr().out  # a table cell with words


def test_run_exits_non_zero_when_a_check_fails(capsys):
    assert main(["run", "tiny-demo", "mean", "--bias", "0.5", *TOPICS]) == 1
    assert "✗" in capsys.readouterr().out


def test_run_rejects_bad_parameters_naming_the_bound(capsys):
    assert main(["run", "tiny-demo", "sine", "--samples", "5", *TOPICS]) == 2
    assert "samples: must be >= 8 (got 5)" in capsys.readouterr().err
    assert main(["run", "tiny-demo", "sine", "--nope", "1", *TOPICS]) == 2
    assert "unknown parameter" in capsys.readouterr().err
    assert main(["run", "tiny-demo", "sine", "--amplitude", *TOPICS[1:]]) == 2
    assert main(["run", "missing", "sine", *TOPICS]) == 2
    assert main(["run", "tiny-demo", "missing", *TOPICS]) == 2


def test_run_json_output_is_the_api_record(capsys):
    assert main(["run", "tiny-demo", "mean", "--n", "500", "--json", *TOPICS]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"] == {"n": 500, "bias": 0.0, "seed": 7} and data["passed"] is True


def test_parse_param_args():
    assert parse_param_args(["--log-y", "true", "--seed=3", "--bias", "-0.5"]) == {
        "log_y": "true",
        "seed": "3",
        "bias": "-0.5",
    }
    with pytest.raises(ValueError):
        parse_param_args(["seed", "3"])


def test_check_runs_every_default(capsys):
    assert main(["check", *TOPICS]) == 0
    out = capsys.readouterr().out
    assert "every check passed" in out and "sleepy" in out and "clock" in out


def test_check_fails_when_a_default_fails(topic_copy, capsys):
    experiments = topic_copy / "tiny_demo" / "experiments.py"
    text, count = re.subn(
        r'("bias",\s*"float",\s*)0\.0', r"\g<1>0.3", experiments.read_text(encoding="utf-8")
    )
    assert count == 1, "the fixture's bias default moved"
    experiments.write_text(text, encoding="utf-8")
    assert main(["check", "--topics-dir", str(topic_copy)]) == 1
    assert "tiny-demo/mean: Mean is 1/2 within 4σ/√n" in capsys.readouterr().err


def test_export_writes_the_site(tmp_path, capsys):
    assert main(["export", str(tmp_path / "site"), *TOPICS]) == 0
    assert (tmp_path / "site" / "zh" / "topics" / "tiny-demo" / "index.html").is_file()
    assert "wrote 9 pages" in capsys.readouterr().out


def test_module_entry_point_and_usage_errors(capsys):
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "whylab.cli", "run", "tiny-demo", "sine", "--cycles", "99", *TOPICS],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "cycles: must be <= 20 (got 99)" in done.stderr
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"whylab {whylab.__version__}"
    with pytest.raises(SystemExit) as usage:
        main(["topics", "--bogus"])
    assert usage.value.code == 2


def test_progress_bar_appears_only_when_an_experiment_reports_progress():
    bar = LazyProgress("tiny-demo/mean")
    assert bar.progress is None
    bar(0.25)
    bar(0.75)
    task = bar.progress.tasks[0]
    assert task.description == "tiny-demo/mean" and task.completed == 0.75 and task.total == 1.0
    bar.close()
    silent = LazyProgress("quiet")
    silent.close()  # never started, nothing to stop
    assert silent.progress is None


def test_serve_starts_the_explorer_and_stops_cleanly_on_ctrl_c(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = Path(__file__).resolve().parents[2]
    command = [
        sys.executable,
        "-m",
        "whylab.cli",
        "serve",
        "--port",
        str(port),
        *TOPICS,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--workers",
        "1",
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120  # its fork server compiles the numba kernels first
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", follow_redirects=True, timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
                time.sleep(0.2)
        assert page.status_code == 200 and "Begin with a question." in page.text
        assert str(page.url).endswith("/en/")
    finally:
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=30)
    assert server.returncode == 0
    assert f"http://127.0.0.1:{port}/" in out
