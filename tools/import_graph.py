"""whylab's import graph, read from the source: the one parser of ``import`` statements
that tests/test_layers.py (which enforces the layers) and benchmarks/explorer_shape.py
(which reports the explorer's shape in figures) both use, and the explorer's floors.

A module's imports are its ``import`` and ``from ... import`` statements (at module
level, or anywhere in it with ``inside_functions``), resolved to the modules of the
graph: ``from pkg import sub`` is the module ``pkg.sub`` when there is one, else ``pkg``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

# The explorer's floors, bottom first: a module imports only from its own floor or below.
EXPLORER_LAYERS = (
    # the topic SDK: experiment.py, and the modules whose names it re-exports
    (
        "whylab.explorer.experiment",
        "whylab.explorer.negative_controls",
        "whylab.explorer.bilingual",
        "whylab.explorer.number_text",
    ),
    ("whylab.explorer.figures",),
    ("whylab.explorer.content",),
    ("whylab.explorer.runs",),  # runs/redis/ included: the deployment's back-ends
    ("whylab.explorer.web",),
)
#: The floors' names, as the shape report prints them.
EXPLORER_LAYER_NAMES = ("experiment", "figures", "content", "runs", "web")


def package_modules(
    package_dir: Path, keep: Callable[[tuple[str, ...]], bool] = lambda parts: True
) -> dict[str, Path]:
    """Dotted name -> file of every module under ``package_dir`` that ``keep(parts)`` accepts."""
    root = package_dir.name
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = (root,) + path.relative_to(package_dir).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if keep(parts):
            modules[".".join(parts)] = path
    return modules


def _module_level_statements(body):
    """The statements that run at import time (imports under if/try included)."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            yield from _module_level_statements(node.body)
            yield from _module_level_statements(node.orelse)
            for handler in getattr(node, "handlers", ()):
                yield from _module_level_statements(handler.body)
            yield from _module_level_statements(getattr(node, "finalbody", ()))


def imported_modules(
    name: str, path: Path, modules, inside_functions: bool = False
) -> set[str]:
    """The modules of ``modules`` that ``name`` imports when it is itself imported
    (with ``inside_functions``: anywhere in it, function bodies included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text())
    statements = ast.walk(tree) if inside_functions else _module_level_statements(tree.body)
    for node in statements:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in modules else source)
    return {module for module in found if module in modules and module != name}


def import_graph(modules: dict[str, Path], inside_functions: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports."""
    return {
        name: imported_modules(name, path, modules, inside_functions)
        for name, path in modules.items()
    }


def explorer_floor(name: str) -> int | None:
    """The explorer floor ``name`` sits on (0 is the SDK), or None outside the explorer."""
    for floor, packages in enumerate(EXPLORER_LAYERS):
        if any(name == p or name.startswith(p + ".") for p in packages):
            return floor
    return None
