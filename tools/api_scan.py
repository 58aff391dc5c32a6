"""Count the torch API that real tutorial code uses: names, keyword arguments, files.

Reads Python sources out of git snapshots (bare git directories, read with
``git ls-tree`` and ``git show``, never checked out) and walks each file's AST:

* **module names** -- an attribute chain rooted at a name bound by an import of
  torch (``import torch``, ``import torch.nn as nn``, ``import torch.nn.functional
  as F``, ``from torch import optim``, ``from torch.nn import Linear``) is resolved
  to its full dotted name (``F.relu`` is ``torch.nn.functional.relu``);
* **keyword arguments** -- each keyword of a call to such a name is counted as
  ``name(keyword=)``;
* **Tensor methods (heuristic)** -- a call ``value.m(...)`` whose receiver is not a
  torch module, and whose method name is an attribute of ``torch.Tensor`` but not
  one of the common methods of Python's own types listed in
  :data:`NOT_TENSOR_METHODS` (``append``, ``split``, ``format`` ...), counts as
  ``Tensor.m``. Receivers are not type-checked, so ``model.to(device)`` or
  ``array.sum()`` count too; Tensor properties read without a call (``x.shape``,
  ``x.grad``) are counted as ``Tensor.shape`` when the name is one of
  :data:`TENSOR_PROPERTIES`.

d2l's chapters are Markdown: their code cells marked ``%%tab pytorch`` (or
``%%tab all``) are the PyTorch code; each chapter counts as one file.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass, field

#: Methods of Python's own types (and NumPy's) whose names torch.Tensor shares; a call
#: of one of these on an unknown receiver is not counted as a Tensor method.
NOT_TENSOR_METHODS = frozenset(
    "append extend insert pop remove index count sort copy split join format items keys "
    "values get update add clear strip replace startswith endswith lower upper encode "
    "decode read write close".split()
)

#: Tensor attributes read without a call that are counted (when the receiver is unknown).
TENSOR_PROPERTIES = frozenset(
    "shape grad requires_grad dtype device T ndim grad_fn is_leaf mT is_cuda".split()
)

CODE_CELL = re.compile(r"^```\{\.python \.input[^}]*\}\n(.*?)^```", re.S | re.M)


@dataclass
class Usage:
    """What the scan found: per name, how many times it occurs and in which files."""

    count: Counter = field(default_factory=Counter)
    files: dict = field(default_factory=lambda: defaultdict(set))
    unparsable: list = field(default_factory=list)
    scanned: list = field(default_factory=list)

    def add(self, name: str, path: str) -> None:
        self.count[name] += 1
        self.files[name].add(path)


def git_files(git_dir: str, suffix: str) -> list[str]:
    listing = subprocess.run(
        ["git", "-C", git_dir, "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    return [path for path in listing if path.endswith(suffix)]


def git_text(git_dir: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", git_dir, "show", f"HEAD:{path}"],
        capture_output=True, text=True, check=True, errors="replace",
    ).stdout


def d2l_pytorch_cells(markdown: str) -> list[str]:
    """The PyTorch code cells of one d2l chapter (magics and shell lines dropped)."""
    cells = []
    for cell in CODE_CELL.findall(markdown):
        lines = cell.split("\n")
        first = lines[0].strip()
        if not first.startswith("%%tab"):
            continue
        tabs = {tab.strip() for tab in first[len("%%tab"):].split(",")}
        if "pytorch" not in tabs and "all" not in tabs:
            continue
        kept = [line for line in lines[1:] if not line.lstrip().startswith(("%", "!"))]
        cells.append("\n".join(kept))
    return cells


class _Visitor(ast.NodeVisitor):
    def __init__(self, usage: Usage, path: str, tensor_names: frozenset):
        self.usage, self.path, self.tensor_names = usage, path, tensor_names
        self.aliases: dict[str, str] = {}

    # -- imports bind names to torch modules or objects
    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == "torch" or alias.name.startswith("torch."):
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    self.aliases["torch"] = "torch"

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if module == "torch" or module.startswith("torch."):
            for alias in node.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    def resolve(self, node) -> str | None:
        """The dotted torch name an expression spells, or None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def visit_Attribute(self, node):
        name = self.resolve(node)
        if name is not None:
            self.usage.add(name, self.path)
            return  # the chain is counted once, at its longest
        if node.attr in TENSOR_PROPERTIES and not isinstance(node.ctx, ast.Store):
            self.usage.add(f"Tensor.{node.attr}", self.path)
        self.generic_visit(node)

    def visit_Name(self, node):
        target = self.aliases.get(node.id)
        if target is not None and target.count(".") >= 1 and not self._is_module(target):
            self.usage.add(target, self.path)  # ``from torch.nn import Linear``; ``Linear(...)``

    @staticmethod
    def _is_module(name: str) -> bool:
        return name in ("torch.nn", "torch.optim", "torch.nn.functional", "torch.utils.data",
                        "torch.autograd", "torch.nn.init", "torch.utils", "torch.distributions",
                        "torch.linalg", "torch.fft", "torch.cuda", "torch.backends")

    def visit_Call(self, node):
        name = self.resolve(node.func)
        if name is None and isinstance(node.func, ast.Name):
            target = self.aliases.get(node.func.id)
            if target is not None and not self._is_module(target):
                name = target
        if name is None and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            receiver = node.func.value
            if (
                method in self.tensor_names
                and method not in NOT_TENSOR_METHODS
                and not isinstance(receiver, ast.Constant)
                and not (isinstance(receiver, ast.Name) and receiver.id in ("np", "numpy", "math"))
            ):
                name = f"Tensor.{method}"
                self.usage.add(name, self.path)
        if name is not None:
            for keyword in node.keywords:
                if keyword.arg is not None:
                    self.usage.add(f"{name}({keyword.arg}=)", self.path)
        self.generic_visit(node)


def scan_source(usage: Usage, path: str, source: str, tensor_names: frozenset) -> None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        usage.unparsable.append(path)
        return
    visitor = _Visitor(usage, path, tensor_names)
    # imports first, so a name used above its import (in a function) still resolves
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            visitor.visit_Import(node)
        elif isinstance(node, ast.ImportFrom):
            visitor.visit_ImportFrom(node)
    if visitor.aliases:
        visitor.visit(tree)


def scan_corpus(corpora: dict, tensor_names: frozenset) -> Usage:
    """Scan every source of every corpus: ``{label: (git_dir, kind)}``, kind py or d2l."""
    usage = Usage()
    for label, (git_dir, kind) in corpora.items():
        if kind == "py":
            for path in git_files(git_dir, ".py"):
                usage.scanned.append(f"{label}:{path}")
                scan_source(usage, f"{label}:{path}", git_text(git_dir, path), tensor_names)
        else:
            for path in git_files(git_dir, ".md"):
                if not path.startswith("chapter_"):
                    continue
                cells = d2l_pytorch_cells(git_text(git_dir, path))
                if not cells:
                    continue
                usage.scanned.append(f"{label}:{path}")
                # the cells of a chapter run in one notebook: their imports carry over
                scan_source(usage, f"{label}:{path}", "\n".join(_parsable(cells)), tensor_names)
            usage.scanned.append(f"{label}:d2l/torch.py")
            scan_source(usage, f"{label}:d2l/torch.py", git_text(git_dir, "d2l/torch.py"),
                        tensor_names)
    return usage


def _parsable(cells: list[str]) -> list[str]:
    """Cells that parse on their own (a cell with notebook-only syntax is dropped)."""
    kept = []
    for cell in cells:
        try:
            ast.parse(cell)
        except SyntaxError:
            continue
        kept.append(cell)
    return kept
