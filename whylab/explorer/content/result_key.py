"""What an experiment's result depends on, hashed: the code-and-versions part of its cache key.

A result is stored in the result cache (SQLite or Redis) under a key that
holds :func:`code_fingerprint`, and a remote worker refuses a job whose
fingerprint its own copy would not produce. So a result is only ever served to
code that would compute it again the same way. The fingerprint covers:

* every ``.py`` file of the topic's folder (its experiments and helpers);
* every whylab module the topic's code imports, followed import by import
  (``whylab.topics.shared``, the explorer's ``Check``/``Result`` code, another
  topic's helpers, ...), found by reading the ``import`` statements of each
  file (those inside functions too), so a lazy import counts as well;
* the code that turns a result into the stored record (``result_json``);
* the whole engine (everything in the package but ``explorer`` and
  ``topics``), which may import its own parts by name at run time;
* the versions of Python, NumPy, SciPy and Numba the numbers come from.

Explorer modules the run never imports (pages, the server, drawings) are not
part of it: editing them recomputes nothing.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import platform
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

PACKAGE = "whylab"
#: The installed package's folder, found without importing the engine.
PACKAGE_ROOT = Path(importlib.util.find_spec(PACKAGE).submodule_search_locations[0]).resolve()
#: Modules a stored record depends on whatever the topic imports: they write it.
# Named, not imported: the record code lives in the runs layer, above this one.
RECORD_MODULES = ("whylab.explorer.runs.result_json",)
NUMERIC_LIBRARIES = ("numpy", "scipy", "numba")
_IMPORTS_BY_CONTENT: dict[str, frozenset[str]] = {}  # a file's content hash -> its imports


def runtime_versions() -> dict[str, str]:
    """Python's version and those of the numeric libraries ("absent" where not installed)."""
    versions = {"python": platform.python_version()}
    for library in NUMERIC_LIBRARIES:
        try:
            versions[library] = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            versions[library] = "absent"
    return versions


def _digest(path: Path) -> tuple[str, frozenset[str]]:
    """A file's hash and the whylab modules its imports name (parsed once per content)."""
    data = path.read_bytes()
    content = hashlib.sha256(data).hexdigest()
    names = _IMPORTS_BY_CONTENT.get(content)
    if names is None:
        names = _IMPORTS_BY_CONTENT[content] = frozenset(_imported_names(data, path))
    return content, names


def _imported_names(source: bytes, path: Path) -> set[str]:
    """Every whylab module an ``import`` in ``source`` may load (candidates; some are names)."""
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError:
        return set()  # it cannot run either; its bytes are hashed all the same
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name == PACKAGE or name.startswith(PACKAGE + ".")}


@cache
def module_files(name: str, root: Path) -> tuple[Path, ...]:
    """The files importing ``name`` runs under ``root``: each package's ``__init__`` and itself."""
    parts = name.split(".")[1:]
    files = [root / "__init__.py"]
    here = root
    for part in parts:
        here = here / part
        if (here / "__init__.py").is_file():
            files.append(here / "__init__.py")
        elif here.with_suffix(".py").is_file():
            files.append(here.with_suffix(".py"))
            break  # a module: what follows is a name inside it
        elif not here.is_dir():  # a folder without __init__ is a namespace package
            break
    return tuple(path for path in files if path.is_file())


def import_closure(start: Iterable[Path], root: Path) -> set[Path]:
    """``start`` and every file under ``root`` reached from it through whylab imports."""
    seen: set[Path] = set()
    todo = list(start)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _digest(path)[1]:
            todo.extend(module_files(name, root))
    return seen


@cache
def engine_fingerprint(root: Path) -> str:
    """Every ``.py`` file of the engine: the package but its explorer and topics.

    Hashed once per process (and root): the engine a process runs is the one it
    imported at start.
    """
    return _hash_files(root, root.rglob("*.py"), skip=(root / "explorer", root / "topics"))


def _hash_files(base: Path, paths: Iterable[Path], skip: tuple[Path, ...] = ()) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        if any(path.is_relative_to(folder) for folder in skip):
            continue
        label = path.relative_to(base) if path.is_relative_to(base) else path
        digest.update(label.as_posix().encode() + b"\0")
        digest.update(_digest(path)[0].encode())
    return digest.hexdigest()


def code_fingerprint(
    folder: Path, root: Path = PACKAGE_ROOT, versions: Mapping[str, str] | None = None
) -> str:
    """The hash of everything a result of the topic in ``folder`` depends on (see above).

    ``root`` is the whylab package folder whose modules the imports resolve to;
    ``versions`` replaces :func:`runtime_versions` (tests).
    """
    folder = Path(folder).resolve()
    topic_files = sorted(folder.rglob("*.py"))
    record_files = [path for name in RECORD_MODULES for path in module_files(name, root)]
    imported = import_closure([*topic_files, *record_files], root) - set(topic_files)
    digest = hashlib.sha256()
    for part in (
        repr(sorted((versions or runtime_versions()).items())),
        engine_fingerprint(root),
        _hash_files(root, imported),
        _hash_files(folder, topic_files),
    ):
        digest.update(part.encode() + b"\n")
    return digest.hexdigest()[:16]
