"""The wheel of the running whylab, which a downloaded notebook installs (web.wheel).

The server answers a wheel that installs on its own: pip puts it in an empty folder
(``--target``, no dependencies, no index) and a Python that sees only that folder
and the dependencies (``-I``: no ``PYTHONPATH``, no checkout on ``sys.path``)
imports whylab from it, with this version and the topics' files. An installed whylab
without its sources zips its own installed files into a wheel that installs the
same way. A changed source gets a new wheel, never the kept one. A notebook names
the wheel's exact URL only under a public URL, never a host from the request; its
setup cell installs it only where whylab is missing or another version.
"""

from __future__ import annotations

import ast
import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import nbformat
import pytest
from fastapi.testclient import TestClient

import whylab
from tests.explorer.conftest import _free_port, serving
from whylab.explorer.content.topics import TopicRegistry, load_registry
from whylab.explorer.experiment import LANGS
from whylab.explorer.web.app import create_app
from whylab.explorer.web.config import ExplorerConfig
from whylab.explorer.web.export import export_site
from whylab.explorer.web.static_files import A_YEAR, REVALIDATE
from whylab.explorer.web.wheel import (
    PACKAGE_DIR,
    ServedWheel,
    checkout_files,
    checkout_root,
    download_path,
    wheel_filename,
)

TOPIC = "wave-superposition"  # a topic whose experiments run in well under a second
PUBLIC = "https://whylab.example.org/site"
INFO = f"whylab-{whylab.__version__}.dist-info"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    """A cache directory holding the wheel of this checkout, built once for the module."""
    folder = tmp_path_factory.mktemp("wheel-cache")
    ServedWheel(folder).get()
    return folder


@pytest.fixture(scope="module")
def registry() -> TopicRegistry:
    every = load_registry()
    return TopicRegistry([every.topics[TOPIC]], every.topics_dir)


def make_client(cache_dir: Path, registry: TopicRegistry, **settings) -> TestClient:
    config = ExplorerConfig(cache_dir=cache_dir, workers=1, memory_limit_mb=1024, **settings)
    return TestClient(create_app(config, registry=registry))


def wheel_problems(data: bytes) -> list[str]:
    """What is wrong with ``data`` as a wheel of this whylab, in words."""
    wheel = zipfile.ZipFile(io.BytesIO(data))
    assert wheel.testzip() is None
    names = set(wheel.namelist())
    problems = []
    meta = wheel.read(f"{INFO}/METADATA").decode()
    fields = dict(line.split(": ", 1) for line in meta.split("\n\n")[0].splitlines())
    if (fields["Name"], fields["Version"]) != ("whylab", whylab.__version__):
        problems.append(f"METADATA names {fields['Name']} {fields['Version']}")
    if "Tag: py3-none-any" not in wheel.read(f"{INFO}/WHEEL").decode():
        problems.append("WHEEL has no py3-none-any tag")
    if "whylab = whylab.cli:main" not in wheel.read(f"{INFO}/entry_points.txt").decode():
        problems.append("no whylab command in entry_points.txt")
    for needed in ("whylab/__init__.py", "whylab/topics/fft/experiments.py"):
        problems += [f"{needed} missing"] if needed not in names else []
    for needed in ("whylab/topics/fft/zh.md", "whylab/topics/fft/meta.toml"):
        problems += [f"{needed} missing"] if needed not in names else []
    stray = [n for n in names if not n.startswith(("whylab/", f"{INFO}/"))]
    stray += [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "/." in n]
    problems += [f"{name} should not be in the wheel" for name in sorted(stray)]
    record = list(csv.reader(io.StringIO(wheel.read(f"{INFO}/RECORD").decode())))
    listed = {row[0] for row in record}
    problems += [f"{name} not in RECORD" for name in sorted(names - listed)]
    for name, digest, size in record:
        if name == f"{INFO}/RECORD":
            continue
        body = wheel.read(name)
        want = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        if digest != f"sha256={want}" or int(size) != len(body):
            problems.append(f"{name}: RECORD says {digest} {size}")
    return problems


def install_and_import(wheel: Path | str, folder: Path, code: str) -> str:
    """Install ``wheel`` (a file or a URL) alone into ``folder/site``, then run ``code`` in a
    Python that finds whylab only there (its dependencies from this environment); its output."""
    site = folder / "site"
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet"]
    subprocess.run([*pip, "--target", str(site), str(wheel)], check=True, timeout=300)
    prelude = f"import sys; sys.path.insert(0, {str(site)!r}); "
    done = subprocess.run(
        [sys.executable, "-I", "-c", prelude + code],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout.strip()


IMPORT_CHECK = (
    "import importlib.metadata, whylab; "
    "from whylab.explorer.content.topics import discover_topic_folders; "
    "print(whylab.__version__, importlib.metadata.version('whylab'), "
    "len(discover_topic_folders()), whylab.__file__)"
)


def assert_imports_from(output: str, site: Path) -> None:
    version, meta_version, topics, where = output.split(" ", 3)
    assert version == meta_version == whylab.__version__
    shipped = [p for p in (PACKAGE_DIR / "topics").iterdir() if (p / "meta.toml").is_file()]
    assert int(topics) == len(shipped)
    assert Path(where).resolve().is_relative_to(site.resolve()), where


# ---------------------------------------------------------------- served


def test_the_server_answers_a_wheel_of_the_whylab_it_runs(cache_dir, registry, tmp_path):
    with make_client(cache_dir, registry) as client:
        answer = client.get(download_path())
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/zip"
        disposition = f'attachment; filename="{wheel_filename()}"'
        assert answer.headers["content-disposition"] == disposition
        assert wheel_problems(answer.content) == []
        etag = answer.headers["etag"].strip('"')
        # One URL names every source: without the current hash, revalidate.
        assert answer.headers["cache-control"] == REVALIDATE
        named = client.get(f"{download_path()}?src={etag}")
        assert named.headers["cache-control"] == A_YEAR and named.content == answer.content
        stale = client.get(f"{download_path()}?src=0000000000000000")
        assert stale.headers["cache-control"] == REVALIDATE
        other = client.get("/downloads/whylab-0.0.1-py3-none-any.whl")
        assert other.status_code == 404 and wheel_filename() in other.text
    wheel_file = tmp_path / wheel_filename()
    wheel_file.write_bytes(answer.content)
    assert_imports_from(install_and_import(wheel_file, tmp_path, IMPORT_CHECK), tmp_path / "site")


def test_pip_installs_the_wheel_from_the_url_a_notebook_names(cache_dir, tmp_path):
    port = _free_port()
    public = f"http://127.0.0.1:{port}"
    with serving(cache_dir, port=port, topics_dir=None, public_url=public):
        answer = httpx.get(f"{public}/en/topics/{TOPIC}/notebook.ipynb", timeout=60)
        source = nbformat.reads(answer.text, as_version=4).cells[1].source
        url = next(line for line in source.splitlines() if line.startswith("WHEEL = "))
        url = json.loads(url.removeprefix("WHEEL = "))
        assert url.startswith(f"{public}{download_path()}?src=")
        output = install_and_import(url, tmp_path, IMPORT_CHECK)  # pip downloads it itself
    assert_imports_from(output, tmp_path / "site")


def test_a_wheel_that_cannot_be_built_is_a_503(registry, tmp_path):
    client = make_client(tmp_path / "cache", registry)
    with client:
        client.app.state.wheel.package_dir = tmp_path / "nowhere" / "whylab"  # no source
        answer = client.get(download_path())
    assert answer.status_code == 503
    assert "cannot be built" in answer.text and "another copy" in answer.text


# ---------------------------------------------------------------- the source


def copy_checkout(target: Path) -> Path:
    """A copy of the files this checkout's wheel is built from; its package folder."""
    for name, path in checkout_files(checkout_root()).items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / name)
    return target / "whylab"


def test_a_changed_source_gets_a_new_wheel(cache_dir, tmp_path):
    package = copy_checkout(tmp_path / "source")
    cache_dir = shutil.copytree(cache_dir, tmp_path / "cache")  # this test's own
    original = ServedWheel(cache_dir)
    copy = ServedWheel(cache_dir, package)
    assert copy.source_hash() == original.source_hash()  # the same files
    kept = cache_dir / "wheels" / f"{whylab.__version__}-{original.source_hash()}"
    stamp = (kept / wheel_filename()).stat().st_mtime_ns
    assert copy.get().data == original.get().data  # read back, not built again
    assert (kept / wheel_filename()).stat().st_mtime_ns == stamp
    init = package / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "EDITED = True\n", encoding="utf-8")
    edited = ServedWheel(cache_dir, package)
    assert edited.source_hash() != original.source_hash()
    built = zipfile.ZipFile(io.BytesIO(edited.get().data))
    assert b"EDITED = True" in built.read("whylab/__init__.py")
    assert [p.name for p in (cache_dir / "wheels").iterdir()] == [
        f"{whylab.__version__}-{edited.source_hash()}"
    ]  # the other source's wheel is gone


def test_an_installed_whylab_without_sources_serves_its_own_files(cache_dir, tmp_path):
    wheel_file = tmp_path / wheel_filename()
    wheel_file.write_bytes(ServedWheel(cache_dir).get().data)
    code = (
        "from pathlib import Path; "
        "from whylab.explorer.web.wheel import ServedWheel, checkout_root; "
        "assert checkout_root() is None, checkout_root(); "
        f"Path({str(tmp_path / 'again.whl')!r}).write_bytes("
        f"ServedWheel(Path({str(tmp_path / 'cache')!r})).get().data)"
    )
    install_and_import(wheel_file, tmp_path, code)
    again = (tmp_path / "again.whl").read_bytes()
    assert wheel_problems(again) == []
    names = zipfile.ZipFile(wheel_file).namelist()
    assert sorted(zipfile.ZipFile(io.BytesIO(again)).namelist()) == sorted(names)
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / wheel_filename()).write_bytes(again)
    second = tmp_path / "second"
    output = install_and_import(second / wheel_filename(), second, IMPORT_CHECK)
    assert_imports_from(output, second / "site")


# ---------------------------------------------------------------- the notebook's setup cell


def setup_cell(client: TestClient, lang: str, **headers) -> str:
    answer = client.get(f"/{lang}/topics/{TOPIC}/notebook.ipynb", headers=headers)
    notebook = nbformat.reads(answer.text, as_version=4)
    return next(cell.source for cell in notebook.cells if cell.get("id") == "setup")


def test_the_setup_cell_names_the_wheel_under_the_public_url_only(cache_dir, registry):
    with make_client(cache_dir, registry, public_url=PUBLIC) as client:
        digest = client.app.state.wheel.source_hash()
        # the same code in both languages, comments aside
        en, zh = (setup_cell(client, lang).replace(f'"{lang}"', '"xx"') for lang in LANGS)
        assert ast.dump(ast.parse(en)) == ast.dump(ast.parse(zh)) and en != zh
        for lang in LANGS:
            source = setup_cell(client, lang, host="attacker.example")
            url = f"{PUBLIC}{download_path()}?src={digest}"
            assert f'WHEEL = "{url}"' in source
            assert "attacker.example" not in source
            assert client.get(url.removeprefix(PUBLIC)).headers["cache-control"] == A_YEAR
    with make_client(cache_dir, registry) as client:
        for lang in LANGS:
            source = setup_cell(client, lang, host="attacker.example")
            assert "WHEEL = None" in source and download_path() in source
            assert "://" not in source and "attacker.example" not in source
            assert "pip install -e" in source


def run_setup(source: str, before: str = "") -> dict:
    """Run a setup cell in a fresh Python with pip replaced by a recorder (nothing is
    installed): which commands it ran, the version it loaded, and the error it raised."""
    code = f"""
import json, subprocess, sys, traceback
calls = []
def pip(command):
    calls.append(command[1:])
    if sys.modules.get("whylab", 0) is None:
        del sys.modules["whylab"]  # "installed": importable from now on
    return 0
subprocess.check_call = pip
{before}
try:
    exec(compile({source!r}, "setup", "exec"), {{}})
    error = None
except BaseException as raised:
    error = type(raised).__name__
version = getattr(sys.modules.get("whylab"), "__version__", None)
print(json.dumps({{"calls": calls, "version": version, "error": error}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={**os.environ, "PYTHONPATH": str(PACKAGE_DIR.parent)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_setup_cell_installs_the_wheel_only_where_whylab_is_missing(cache_dir, registry):
    with make_client(cache_dir, registry, public_url=PUBLIC) as client:
        source = setup_cell(client, "en")
        url = f"{PUBLIC}{download_path()}?src={client.app.state.wheel.source_hash()}"
    pip = ["-m", "pip", "install", url]
    version = whylab.__version__
    assert run_setup(source) == {"calls": [], "version": version, "error": None}
    missing = run_setup(source, 'sys.modules["whylab"] = None  # not installed')
    assert missing == {"calls": [pip], "version": version, "error": None}
    # Another version loaded before: installed, then the cell stops (restart the kernel).
    older = run_setup(source, 'import whylab; whylab.__version__ = "0.0.1"')
    assert older == {"calls": [pip], "version": "0.0.1", "error": "AssertionError"}
    with make_client(cache_dir, registry) as client:
        no_url = setup_cell(client, "zh")
    unset = run_setup(no_url, 'sys.modules["whylab"] = None')
    assert unset == {"calls": [], "version": None, "error": "AssertionError"}


# ---------------------------------------------------------------- exported


@pytest.mark.parametrize("public_url", [None, PUBLIC])
def test_the_export_writes_the_wheel_its_notebooks_install(
    cache_dir, registry, tmp_path, public_url
):
    served = ServedWheel(cache_dir)
    export_site(registry, tmp_path, public_url=public_url, wheel=served)
    written = tmp_path / download_path().lstrip("/")
    assert written.read_bytes() == served.get().data
    for lang in LANGS:
        notebook = nbformat.read(tmp_path / lang / "topics" / TOPIC / "notebook.ipynb", 4)
        source = notebook.cells[1].source
        if public_url is None:
            assert "WHEEL = None" in source and download_path() in source
        else:
            assert f'WHEEL = "{public_url}{download_path()}?src={served.source_hash()}"' in source
