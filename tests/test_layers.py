"""The layering: no import cycle, and every module imports on its own.

The engine is ``whylab`` (the facade) and the packages below it named in
``ENGINE``. The explorer sits above it in its own layers (``EXPLORER_LAYERS`` in
tools/import_graph.py, top to bottom: web, runs with runs/redis, content, figures, and
the topic SDK ``experiment.py`` on the ground floor), and imports only downward; nothing in
the engine imports the explorer, and the topics import only its ground floor.
Imports inside functions count too: a cycle hidden in a function is still a
cycle (only the engine's module-level graph is checked for import order).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import whylab
from tools import import_graph as import_graph_of
from tools.import_graph import explorer_floor

PACKAGE_DIR = Path(whylab.__file__).parent
ENGINE = (
    "_core",
    "_tensor",
    "dispatch",
    "kernels",
    "autograd",
    "nn",
    "optim",
    "utils",
    "linalg",
    "cuda",
    "backends",
    "capture",
    "serialization",
    "accelerator",
)

def package_modules(keep=lambda parts: True) -> dict[str, Path]:
    """Dotted name -> file of every module of the package that ``keep(parts)`` accepts."""
    return import_graph_of.package_modules(PACKAGE_DIR, keep)


def engine_modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the engine."""
    modules = {"whylab": PACKAGE_DIR / "__init__.py"}
    modules.update(package_modules(lambda parts: len(parts) > 1 and parts[1] in ENGINE))
    return modules


def all_modules() -> dict[str, Path]:
    """Dotted name -> file of every module of whylab (engine, explorer, topics, ...)."""
    return package_modules()


def import_graph(modules=None, inside_functions: bool = False) -> dict[str, set[str]]:
    """The graph of ``modules`` (the engine's by default), read by tools/import_graph.py."""
    modules = engine_modules() if modules is None else modules
    return import_graph_of.import_graph(modules, inside_functions)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, ..., a]``, or None when it has none."""
    state = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for successor in sorted(graph[node]):
            if state.get(successor) == 1:
                return path[path.index(successor) :] + [successor]
            if successor not in state:
                cycle = visit(successor)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_find_cycle_reports_the_path_of_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_module_level_imports_only():
    graph = import_graph()
    assert "whylab._core.keys" in graph["whylab._tensor.device"]
    # autograd/__init__ imports derivatives inside _install(), at call time only
    assert "whylab.autograd.derivatives" not in graph["whylab.autograd"]


def test_the_engine_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_graph_sees_imports_inside_functions_when_asked():
    graph = import_graph(inside_functions=True)
    assert "whylab.autograd.derivatives" in graph["whylab.autograd"]  # inside _install()


def test_no_import_cycle_hides_inside_functions():
    """Anywhere in whylab: a function-level import closing a circle is a cycle too."""
    cycle = find_cycle(import_graph(all_modules(), inside_functions=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# The command-line tools that drive the topics' checks (whylab check, its --mutants runs).
TOOLS = ("whylab.cli", "whylab.mutation")


def is_tool(name: str) -> bool:
    return any(name == tool or name.startswith(tool + ".") for tool in TOOLS)


def test_the_explorer_imports_only_downward():
    graph = import_graph(all_modules(), inside_functions=True)
    upward = []
    for name, imports in graph.items():
        floor = explorer_floor(name)
        for imported in imports:
            target = explorer_floor(imported)
            if target is None:
                continue
            if floor is None:  # outside the explorer: the tools may use it all, else the SDK only
                if not is_tool(name) and target > 0:
                    upward.append(f"{name} -> {imported}")
            elif target > floor:
                upward.append(f"{name} -> {imported}")
    assert not upward, "imports running up the explorer's floors:\n" + "\n".join(upward)


def test_every_explorer_module_sits_on_a_floor():
    modules = package_modules(lambda parts: parts[:2] == ("whylab", "explorer"))
    off = [m for m in modules if m != "whylab.explorer" and explorer_floor(m) is None]
    assert not off, off


def test_the_engine_never_imports_the_explorer():
    graph = import_graph(all_modules(), inside_functions=True)
    engine = set(engine_modules())
    leaks = [
        f"{name} -> {m}"
        for name in engine
        for m in graph[name]
        if m.startswith(("whylab.explorer", "whylab.topics", "whylab.cli"))
    ]
    assert not leaks, leaks


def test_the_bottom_layers_import_nothing_above_them():
    graph = import_graph()
    for name, imports in graph.items():
        if name.startswith("whylab._core"):
            assert all(m.startswith("whylab._core") for m in imports), (name, imports)
        if name.startswith("whylab._tensor"):
            assert all(m.startswith(("whylab._core", "whylab._tensor")) for m in imports), (
                name,
                imports,
            )


#: Run in a fresh interpreter: first load the third-party modules that ``import whylab``
#: loads (NumPy, SciPy ...: they never import whylab, and loading them once keeps the
#: test fast), then, for each engine module named on stdin, fork a child whose
#: sys.modules holds nothing of whylab and import that module alone in it.
#: Importing ``whylab.a.b`` runs its ancestor ``whylab`` first; for a module that
#: ``import whylab`` itself loads, nothing else runs, so one child (``whylab``) stands
#: for all of them, and every other module gets a child of its own.
IMPORT_EACH_ALONE = """
import importlib, os, subprocess, sys
probe = "import sys, whylab; print(' '.join(sys.modules))"
loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout
for name in loaded.split():
    if name.partition(".")[0] != "whylab":
        try:
            importlib.import_module(name)
        except Exception:
            pass
assert not any(name.partition(".")[0] == "whylab" for name in sys.modules)
facade_loads = set(loaded.split())
for module in ["whylab"] + [m for m in sys.stdin.read().split() if m not in facade_loads]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
        except BaseException as error:
            print(f"{module}: {type(error).__name__}: {error}", flush=True)
            os._exit(1)
        os._exit(0)
    os.waitpid(pid, 0)
"""


def test_every_engine_module_imports_alone_in_a_fresh_interpreter():
    modules = engine_modules()
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_ALONE],
        input="\n".join(modules),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "", "modules that fail to import alone:\n" + run.stdout
