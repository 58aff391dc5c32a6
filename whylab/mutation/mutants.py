"""The mutants of a file: which cosmic-ray operators, where they apply, and one applied.

cosmic-ray offers every binary and comparison operator replaced by every other (213
operators in all). We use one natural swap per operator, the mistakes a programmer
makes -- the set mutmut uses too -- so a site yields one or two mutants, not a dozen:

* arithmetic ``+ ↔ -``, ``* ↔ /``, ``// → /``, ``% → //``, ``** → *``, shifts and bit
  operators swapped with their partner;
* comparisons ``< ↔ <=``, ``> ↔ >=``, ``== ↔ !=``, ``is ↔ is not`` (cosmic-ray 8 has no
  ``in`` swap);
* ``and ↔ or``, ``True ↔ False``, a ``not`` added or removed, unary ``-`` dropped;
* a number changed by one (cosmic-ray's NumberReplacer: ``+1`` and ``-1``);
* ``break ↔ continue``, a ``for`` loop that runs zero times, an ``except`` that catches
  a different exception.

Left out: ``RemoveDecorator`` (removing ``@jit`` changes speed, not results),
``VariableReplacer``/``VariableInserter`` (random choices, not reproducible) and
``NoOp``. A mutant is named ``path:operator:occurrence`` (the occurrence-th place the
operator applies in that file, counted by cosmic-ray) and carries its source line, so an
equivalence recorded against one version of a file is seen to go stale when it changes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cosmic_ray.plugins
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code

_SWAPS = {
    "ReplaceBinaryOperator": [
        ("Add", "Sub"), ("Sub", "Add"), ("Mul", "Div"), ("Div", "Mul"), ("FloorDiv", "Div"),
        ("Mod", "FloorDiv"), ("Pow", "Mul"), ("LShift", "RShift"), ("RShift", "LShift"),
        ("BitAnd", "BitOr"), ("BitOr", "BitAnd"), ("BitXor", "BitAnd"),
    ],
    "ReplaceComparisonOperator": [
        ("Lt", "LtE"), ("LtE", "Lt"), ("Gt", "GtE"), ("GtE", "Gt"), ("Eq", "NotEq"),
        ("NotEq", "Eq"), ("Is", "IsNot"), ("IsNot", "Is"),
    ],
    "ReplaceUnaryOperator": [("USub", "UAdd"), ("Delete", "Not"), ("Delete", "USub")],
}
OPERATORS: tuple[str, ...] = tuple(
    f"core/{kind}_{a}_{b}" for kind, swaps in _SWAPS.items() for a, b in swaps
) + (
    "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd",
    "core/ReplaceTrueWithFalse",
    "core/ReplaceFalseWithTrue",
    "core/AddNot",
    "core/NumberReplacer",
    "core/ReplaceBreakWithContinue",
    "core/ReplaceContinueWithBreak",
    "core/ZeroIterationForLoop",
    "core/ExceptionReplacer",
)


@dataclass(frozen=True)
class Mutant:
    """One mutation of one file: cosmic-ray's operator at its ``occurrence``-th place."""

    path: str  # relative to the repository root, as meta.toml's under_test names it
    operator: str  # cosmic-ray's name, e.g. "core/ReplaceComparisonOperator_Lt_LtE"
    occurrence: int
    line: int  # 1-based line of the mutated code
    source_line: str  # that line before the mutation, stripped

    @property
    def id(self) -> str:
        return f"{self.path}:{self.operator.removeprefix('core/')}:{self.occurrence}"


def _operator(name: str):
    return cosmic_ray.plugins.get_operator(name)()


def mutants_of(root: Path, relative: str) -> list[Mutant]:
    """Every mutant of the file ``root / relative`` under :data:`OPERATORS`, in a fixed order."""
    source = (root / relative).read_text(encoding="utf-8")
    lines = source.splitlines()
    module = get_ast(source)
    found = []
    for name in OPERATORS:
        operator = _operator(name)
        positions = (
            start for node in ast_nodes(module) for start, _ in operator.mutation_positions(node)
        )
        for occurrence, (line, _column) in enumerate(positions):
            found.append(Mutant(relative, name, occurrence, line, lines[line - 1].strip()))
    return found


def mutated_source(root: Path, mutant: Mutant) -> str:
    """The text of ``mutant.path`` with ``mutant`` applied (ValueError if it no longer applies)."""
    source = (root / mutant.path).read_text(encoding="utf-8")
    mutated = mutate_code(source, _operator(mutant.operator), mutant.occurrence)
    if mutated is None or mutated == source:
        raise ValueError(f"mutant {mutant.id} no longer applies to {mutant.path}")
    return mutated


def sample(mutants: Sequence[Mutant], size: int | None, seed: int = 0) -> list[Mutant]:
    """``size`` mutants chosen at random with a fixed ``seed`` (all of them when None),
    kept in file order, so a sample is the same on every run of the same code."""
    if size is None or size >= len(mutants):
        return list(mutants)
    chosen = sorted(random.Random(seed).sample(range(len(mutants)), size))
    return [mutants[i] for i in chosen]


def all_mutants(root: Path, paths: Iterable[str]) -> list[Mutant]:
    """The mutants of every file in ``paths``, file by file."""
    return [mutant for relative in paths for mutant in mutants_of(root, relative)]
