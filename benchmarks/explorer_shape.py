"""The explorer's shape in figures: modules per folder, longest module and function,
import floors and arrows. Run: ``python benchmarks/explorer_shape.py [PACKAGE_DIR]``.

An arrow is one explorer module importing another (``import`` statements anywhere in
the module, inside functions too, the way tests/test_layers.py reads them); a floor
is a level of the import graph: a module that imports no explorer module is on floor
1, any other one floor above the highest module it imports. A cycle has no floors
(reported instead).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path


def explorer_modules(explorer_dir: Path) -> dict[str, Path]:
    modules = {}
    for path in sorted(explorer_dir.rglob("*.py")):
        parts = ("whylab", "explorer") + path.relative_to(explorer_dir).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
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
    return {m for m in found if m in modules and m != name}


# The explorer's layers, bottom first (as tests/test_layers.py has them).
LAYERS = ("experiment", "figures", "content", "runs", "web", "(package)")
# The topic SDK's floor: experiment.py and the two modules whose names it re-exports.
SDK_MODULES = ("experiment", "negative_controls", "bilingual")


def layer(name: str) -> str:
    parts = name.split(".")
    if len(parts) < 3:
        return "(package)"
    if parts[2] in SDK_MODULES:
        return "experiment"
    return parts[2] if parts[2] in LAYERS else "(package)"


def floors(graph: dict[str, set[str]]) -> dict[str, int] | None:
    level: dict[str, int] = {}
    visiting: set[str] = set()

    def visit(node: str) -> int:
        if node in level:
            return level[node]
        if node in visiting:
            raise RecursionError(node)
        visiting.add(node)
        level[node] = 1 + max((visit(m) for m in graph[node]), default=0)
        visiting.discard(node)
        return level[node]

    try:
        for node in graph:
            visit(node)
    except RecursionError:
        return None
    return level


def longest_function(paths) -> tuple[int, str]:
    best = (0, "")
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                best = max(best, (length, f"{path.name}:{node.name}"))
    return best


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "whylab"
    explorer_dir = root / "explorer"
    modules = explorer_modules(explorer_dir)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    per_folder = Counter(
        str(path.parent.relative_to(root.parent))
        for path in modules.values()
        if path.name != "__init__.py"
    )
    print("modules per folder:")
    for folder, count in sorted(per_folder.items()):
        print(f"  {folder}: {count}")
    lines = {name: len(path.read_text().splitlines()) for name, path in modules.items()}
    longest = max(lines, key=lines.get)
    print(f"longest module: {longest} ({lines[longest]} lines)")
    print(f"modules over 600 lines: {sum(n > 600 for n in lines.values())}")
    length, where = longest_function(modules.values())
    print(f"longest function: {where} ({length} lines)")
    print(f"import arrows: {sum(len(v) for v in graph.values())}")
    level = floors(graph)
    print(f"import floors: {max(level.values()) if level else 'none (a cycle)'}")
    layer_of = {name: layer(name) for name in graph}
    if any(v is not None for v in layer_of.values()):
        between = Counter(
            (layer_of[a], layer_of[b]) for a, targets in graph.items() for b in targets
        )
        print("arrows between layers (from -> to: count):")
        for (a, b), count in sorted(
            between.items(), key=lambda item: (LAYERS.index(item[0][0]), LAYERS.index(item[0][1]))
        ):
            print(f"  {a} -> {b}: {count}")
        up = sum(c for (a, b), c in between.items() if LAYERS.index(b) > LAYERS.index(a))
        print(f"arrows running up the layers: {up}")


if __name__ == "__main__":
    main()
