"""The explorer's shape in figures: modules per folder, longest module and function,
import floors and arrows. Run: ``python benchmarks/explorer_shape.py [PACKAGE_DIR]``.

An arrow is one explorer module importing another (``import`` statements anywhere in
the module, inside functions too, read by tools/import_graph.py as tests/test_layers.py
reads them); a floor
is a level of the import graph: a module that imports no explorer module is on floor
1, any other one floor above the highest module it imports. A cycle has no floors
(reported instead).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.import_graph import (  # noqa: E402
    EXPLORER_LAYER_NAMES,
    explorer_floor,
    import_graph,
    package_modules,
)

LAYERS = (*EXPLORER_LAYER_NAMES, "(package)")


def layer(name: str) -> str:
    floor = explorer_floor(name)
    return "(package)" if floor is None else EXPLORER_LAYER_NAMES[floor]


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
    modules = package_modules(root, lambda parts: parts[:2] == ("whylab", "explorer"))
    graph = import_graph(modules, inside_functions=True)
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
