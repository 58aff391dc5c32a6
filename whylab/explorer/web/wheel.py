"""The wheel of the whylab this process runs, for a downloaded notebook to install.

whylab is not on PyPI, so a topic's notebook installs whylab from the site that
served it (:mod:`whylab.explorer.content.ipynb`): the server answers
``/downloads/whylab-<version>-py3-none-any.whl`` with a wheel of exactly the
whylab it runs. Where that wheel comes from:

* **A source checkout** (whylab imported from a folder beside the ``pyproject.toml``
  that names it: an editable install, or ``PYTHONPATH``). The files a wheel is built
  from (``pyproject.toml``, ``README.md`` and ``whylab/`` without caches) are copied
  to a temporary folder, so the checkout gets no ``build/`` or ``egg-info`` and
  nothing else of it (tests, ``.venv``) can reach the wheel, and pip builds the
  wheel there, offline, with the project's own backend, setuptools (``pip wheel
  --no-deps --no-build-isolation --no-index``): METADATA, the entry points and
  RECORD are then written by the tools installers are tested against, not by a
  copy of their rules here.
* **An installed whylab without its sources** (a non-editable install): there is
  nothing to build, so its installed files as its own RECORD lists them (its
  METADATA and entry points among them) are zipped anew, with a fresh RECORD.

The source is read once, when the wheel is first asked for, and hashed; the
wheel is kept on disk under the cache directory in a folder named by the version
and that hash, so a changed source (edited under the same version number) gets a
new wheel, never the old one, and other sources' wheels are removed. The hash
also goes in the notebook's download link (``?src=``): a request naming it may
be kept for a year (:func:`cache_control`), as fingerprinted static files are.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import tomllib
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath

import whylab
from whylab.explorer.content.ipynb import WheelLink
from whylab.explorer.web.static_files import A_YEAR, REVALIDATE

DIST = "whylab"
MEDIA_TYPE = "application/zip"  # a wheel is a zip archive (PEP 427); gzip leaves it alone
PACKAGE_DIR = Path(whylab.__file__).resolve().parent
BESIDE_PACKAGE = ("pyproject.toml", "README.md")  # what the build reads besides whylab/
BUILD_TIMEOUT_S = 300
HASH_DIGITS = 16
# What an installer writes about one installation: not part of the wheel it came from.
INSTALLATION_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})
WHEEL_FILE = "Wheel-Version: 1.0\nGenerator: whylab\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def wheel_filename(version: str = whylab.__version__) -> str:
    """The wheel's name (PEP 427): pure Python, any platform."""
    return f"{DIST}-{version}-py3-none-any.whl"


def download_path(version: str = whylab.__version__) -> str:
    """Where the server answers the wheel, from the site's root."""
    return f"/downloads/{wheel_filename(version)}"


def cache_control(query_src: str | None, source_hash: str) -> str:
    """A year for a request naming the current source hash (its URL changes with the
    source); any other must revalidate, since one URL then names every source."""
    return A_YEAR if query_src == source_hash else REVALIDATE


class WheelUnavailable(Exception):
    """The wheel cannot be had here; the message says why."""


# ---------------------------------------------------------------- the source


def checkout_root(package_dir: Path = PACKAGE_DIR) -> Path | None:
    """The checkout whylab runs from: the folder above the package, when its
    ``pyproject.toml`` is whylab's; None for an installed whylab."""
    root = package_dir.parent
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return root if project.get("project", {}).get("name") == DIST else None


def _is_cache(parts: tuple[str, ...]) -> bool:
    return any(p == "__pycache__" or p.startswith(".") or p.endswith(".egg-info") for p in parts)


def checkout_files(root: Path) -> dict[str, Path]:
    """The files of the checkout a wheel is built from, by their path in it."""
    files = {name: root / name for name in BESIDE_PACKAGE if (root / name).is_file()}
    for path in sorted((root / DIST).rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and path.suffix != ".pyc" and not _is_cache(relative.parts):
            files[relative.as_posix()] = path
    return files


def installed_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """An installed whylab's files that a wheel holds, by their path in it: the package
    and its ``.dist-info`` (less what the installer wrote about this installation)."""
    try:
        dist = metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        raise WheelUnavailable("whylab is neither a source checkout nor installed") from None
    if Path(dist.locate_file(DIST)).resolve() != package_dir:
        raise WheelUnavailable("the installed whylab's metadata is of another copy of whylab")
    info = f"{DIST}-{whylab.__version__}.dist-info"
    files = {}
    for entry in dist.files or ():
        parts = PurePosixPath(str(entry)).parts
        if parts[0] == info and parts[-1] in INSTALLATION_FILES:
            continue
        if parts[0] in (DIST, info) and entry.suffix != ".pyc" and not _is_cache(parts):
            files[PurePosixPath(*parts).as_posix()] = Path(dist.locate_file(entry))
    if f"{info}/METADATA" not in files:
        raise WheelUnavailable(f"the installed whylab has no {info}/METADATA")
    return files


def source_hash(files: dict[str, bytes]) -> str:
    """A hash of every file's path and bytes."""
    digest = hashlib.sha256()
    for name in sorted(files):
        data = files[name]
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:HASH_DIGITS]


def read_all(files: dict[str, Path]) -> dict[str, bytes]:
    try:
        return {name: path.read_bytes() for name, path in files.items()}
    except OSError as error:
        raise WheelUnavailable(f"cannot read whylab's files: {error}") from None


# ---------------------------------------------------------------- building


def build_checkout(files: dict[str, bytes], out_dir: Path) -> Path:
    """Build the wheel of a checkout's ``files`` with pip and setuptools, in a copy."""
    with tempfile.TemporaryDirectory(prefix="whylab-wheel-") as temp:
        tree = Path(temp) / "source"
        for name, data in files.items():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_bytes(data)
        dist = Path(temp) / "dist"
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        command += ["--no-index", "--quiet", "--wheel-dir", str(dist), str(tree)]
        env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, env=env
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise WheelUnavailable(f"pip wheel did not finish: {error}") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise WheelUnavailable(f"pip wheel failed ({done.returncode}): {last}")
        built = dist / wheel_filename()
        if not built.is_file():
            made = sorted(p.name for p in dist.glob("*"))
            raise WheelUnavailable(f"pip wheel made {made}, not {built.name}")
        target = out_dir / built.name
        shutil.move(built, target)
        return target


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def zip_installed(files: dict[str, bytes], out_dir: Path) -> Path:
    """A wheel of an installed whylab's ``files``, with a new RECORD (and WHEEL if missing)."""
    info = f"{DIST}-{whylab.__version__}.dist-info"
    files = {f"{info}/WHEEL": WHEEL_FILE.encode()} | files
    target = out_dir / wheel_filename()
    rows = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name in sorted(files, key=lambda n: (n.startswith(info), n)):  # dist-info last
            wheel.writestr(name, files[name])
            rows.append((name, _record_hash(files[name]), str(len(files[name]))))
        record = io.StringIO()
        csv.writer(record, lineterminator="\n").writerows([*rows, (f"{info}/RECORD", "", "")])
        wheel.writestr(f"{info}/RECORD", record.getvalue())
    return target


# ---------------------------------------------------------------- served


@dataclass(frozen=True)
class BuiltWheel:
    data: bytes
    source_hash: str


class ServedWheel:
    """The running whylab's wheel (of the package in ``package_dir``): built at most once
    per source (one build at a time), kept under ``cache_dir/wheels`` and in memory."""

    def __init__(self, cache_dir: Path, package_dir: Path = PACKAGE_DIR):
        self.folder = Path(cache_dir) / "wheels"
        self.package_dir = package_dir
        self._reading = threading.Lock()
        self._building = threading.Lock()
        self._source: tuple[dict[str, bytes], bool, str] | None = None
        self._built: BuiltWheel | WheelUnavailable | None = None

    def _read_source(self) -> tuple[dict[str, bytes], bool, str]:
        with self._reading:
            if self._source is None:
                root = checkout_root(self.package_dir)
                if root is not None:
                    paths = checkout_files(root)
                else:
                    paths = installed_files(self.package_dir)
                files = read_all(paths)
                self._source = (files, root is not None, source_hash(files))
            return self._source

    def source_hash(self) -> str:
        """The hash of the source the wheel is (or will be) built from; reads it once."""
        return self._read_source()[2]

    def get(self) -> BuiltWheel:
        """The wheel (blocks while it builds); WheelUnavailable when it cannot be built,
        then and on every later call: a failed build is not tried again per request."""
        with self._building:
            if self._built is None:
                try:
                    self._built = self._build()
                except WheelUnavailable as error:
                    self._built = error
                if self._source is not None:  # the bytes are in the wheel now
                    self._source = ({}, *self._source[1:])
            if isinstance(self._built, WheelUnavailable):
                raise self._built
            return self._built

    def _build(self) -> BuiltWheel:
        files, checkout, digest = self._read_source()
        kept = self.folder / f"{whylab.__version__}-{digest}" / wheel_filename()
        try:
            data = kept.read_bytes()
            if zipfile.ZipFile(io.BytesIO(data)).testzip() is None:
                return BuiltWheel(data, digest)
        except (OSError, zipfile.BadZipFile):
            pass  # none kept, or a damaged one: built again
        with tempfile.TemporaryDirectory(prefix="whylab-wheel-out-") as temp:
            made = (build_checkout if checkout else zip_installed)(files, Path(temp))
            data = made.read_bytes()
            self._keep(made, kept)
        return BuiltWheel(data, digest)

    def _keep(self, made: Path, kept: Path) -> None:
        """Put the new wheel in place (atomically) and remove other sources' wheels; a
        cache that cannot be written leaves the wheel in memory only."""
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            partial = kept.with_name(f".{kept.name}.{os.getpid()}")
            shutil.copyfile(made, partial)
            os.replace(partial, kept)
        except OSError:
            return
        for other in self.folder.iterdir():
            if other != kept.parent and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)


def wheel_link(served: ServedWheel, public_url: str | None) -> WheelLink:
    """What a notebook from this server says of the wheel: its path, and with a public URL
    its absolute address, naming the source hash (a source that cannot be read: none)."""
    path = download_path()
    if public_url is None:
        return WheelLink(path)
    try:
        return WheelLink(path, f"{public_url}{path}?src={served.source_hash()}")
    except WheelUnavailable:  # the download will say why
        return WheelLink(path, f"{public_url}{path}")
