"""A result's cache key follows every file and version that determines it, and nothing else.

Each test edits a copy of the whylab package (never the working tree) and
computes the fingerprint of a topic in that copy, as a server or a worker
running that copy would.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from whylab.explorer.content import result_key
from whylab.explorer.content.result_key import PACKAGE_ROOT, code_fingerprint, import_closure

SHARED_USER = "band_gaxpy"  # its experiments import whylab.topics.shared
VERSIONS = {"python": "3.11.7", "numpy": "2.1.0", "scipy": "1.14.0", "numba": "0.60.0"}


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the whylab package's Python files."""
    target = tmp_path / "whylab"

    def not_code(folder: str, names: list[str]) -> list[str]:
        return [
            name
            for name in names
            if name == "__pycache__" or (not name.endswith(".py") and "." in name)
        ]

    shutil.copytree(PACKAGE_ROOT, target, ignore=not_code)
    result_key.engine_fingerprint.cache_clear()
    result_key.module_files.cache_clear()
    yield target
    result_key.engine_fingerprint.cache_clear()
    result_key.module_files.cache_clear()


def fingerprint(package: Path, versions=VERSIONS) -> str:
    result_key.engine_fingerprint.cache_clear()  # a fresh process, as after an upgrade
    return code_fingerprint(package / "topics" / SHARED_USER, root=package, versions=versions)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_run_of_a_topic_imports_shared_code_and_the_check_and_record_code():
    folder = PACKAGE_ROOT / "topics" / SHARED_USER
    closure = import_closure(sorted(folder.rglob("*.py")), PACKAGE_ROOT)
    names = {path.relative_to(PACKAGE_ROOT).as_posix() for path in closure}
    assert {"topics/shared.py", "explorer/experiment.py", "bench/__init__.py"} <= names
    assert not any(name.startswith(("explorer/figures/", "explorer/web/")) for name in names)


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        ("topics/band_gaxpy/experiments.py", "from __future__", "# edited\nfrom __future__"),
        ("topics/shared.py", "from __future__", "TOLERANCE_EDIT = 1\nfrom __future__"),
        ("explorer/experiment.py", "from __future__", "CHECK_EDIT = 1\nfrom __future__"),
        ("explorer/runs/result_json.py", "from __future__", "RECORD_EDIT = 1\nfrom __future__"),
        ("nn/functional.py", "from __future__", "ENGINE_EDIT = 1\nfrom __future__"),
        ("bench/__init__.py", '"""', '"""bench edited. '),
    ],
    ids=["topic", "shared", "check", "record", "engine", "bench"],
)
def test_editing_any_file_the_run_depends_on_changes_the_key(package, where, old, new):
    before = fingerprint(package)
    assert fingerprint(package) == before  # the same code gives the same key
    edit(package / where, old, new)
    after = fingerprint(package)
    assert after != before
    edit(package / where, new, old)
    assert fingerprint(package) == before  # and the old code the old key again


def test_a_module_imported_lazily_inside_an_experiment_counts(package):
    (package / "topics" / "helper_for_test.py").write_text("LIMIT = 1\n", encoding="utf-8")
    experiments = package / "topics" / SHARED_USER / "experiments.py"
    text = experiments.read_text(encoding="utf-8")
    experiments.write_text(
        text + "\n\ndef _lazy():\n    from whylab.topics.helper_for_test import LIMIT\n"
        "    return LIMIT\n",
        encoding="utf-8",
    )
    before = fingerprint(package)
    (package / "topics" / "helper_for_test.py").write_text("LIMIT = 2\n", encoding="utf-8")
    assert fingerprint(package) != before


@pytest.mark.parametrize("library", ["python", "numpy", "scipy", "numba"])
def test_another_version_of_python_or_a_numeric_library_changes_the_key(package, library):
    before = fingerprint(package)
    assert fingerprint(package, {**VERSIONS, library: "99.0"}) != before


def test_files_the_run_does_not_import_leave_the_key_alone(package):
    before = fingerprint(package)
    edit(package / "explorer" / "figures" / "charts.py", '"""', '"""drawing edited. ')
    edit(package / "explorer" / "web" / "app.py", '"""', '"""pages edited. ')
    (package / "topics" / SHARED_USER / "en.md").write_text("prose is not code", encoding="utf-8")
    assert fingerprint(package) == before


def test_the_running_versions_are_read():
    import numpy
    import scipy

    versions = result_key.runtime_versions()
    assert versions["numpy"] == numpy.__version__ and versions["scipy"] == scipy.__version__
    assert versions["python"].count(".") == 2


API = "/api/topics/tiny-demo/experiments"


def test_the_embedded_cache_serves_nothing_computed_before_an_upgrade(make_client, monkeypatch):
    url = f"{API}/sine?cycles=3"
    assert make_client().get(url).json()["cached"] is False
    assert make_client().get(url).json()["cached"] is True  # restarted on the same code
    running = result_key.runtime_versions()
    monkeypatch.setattr(result_key, "runtime_versions", lambda: {**running, "numpy": "99.0"})
    upgraded = make_client()  # the same cache file, another NumPy
    answer = upgraded.get(url)
    assert answer.status_code == 200 and answer.json()["cached"] is False
    assert upgraded.app.state.pool.stats.jobs == 1
