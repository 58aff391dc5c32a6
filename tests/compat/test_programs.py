"""Real PyTorch programs run unchanged on whylab and print the same numbers as torch.

Each file in ``programs/`` is a small program of the kind readers bring from the
tutorials (tensors, autograd, nn, optim, data loading, a CNN, recurrent nets,
makemore, d2l), written here. It runs twice, under real PyTorch and with whylab
standing in for ``torch`` by module aliasing only (``run_program.py``), and the
numbers each prints must agree up to float32 rounding. Where a program needs
random numbers it draws them from NumPy and hands the same values to both.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted((HERE / "programs").glob("p*.py"))
ROOT = HERE.parents[1]
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf|True|False")


def run(framework: str, program: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    completed = subprocess.run(
        [sys.executable, str(HERE / "run_program.py"), framework, str(program)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    if completed.returncode != 0:
        raise AssertionError(
            f"{program.name} failed under {framework}:\n{completed.stderr[-3000:]}"
        )
    return completed.stdout


def numbers(text: str) -> list[float]:
    """Every number the program printed, with True/False as 1/0 (so booleans are compared)."""
    values = {"True": 1.0, "False": 0.0}
    return [values[token] if token in values else float(token) for token in NUMBER.findall(text)]


def same_numbers(ours: list[float], theirs: list[float]) -> bool:
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs, strict=True):
        if math.isnan(a) and math.isnan(b):
            continue
        if not math.isclose(a, b, rel_tol=2e-4, abs_tol=2e-5):
            return False
    return True


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_prints_the_same_numbers_under_whylab_and_torch(program):
    expected = run("torch", program)
    actual = run("whylab", program)
    assert same_numbers(numbers(actual), numbers(expected)), (
        f"{program.name}: numbers differ\n--- torch ---\n{expected}\n--- whylab ---\n{actual}"
    )


def test_the_comparison_catches_a_changed_number():
    # A negative control for the comparison itself: one digit off must fail it.
    assert same_numbers(numbers("loss 0.123456 [1, 2]"), numbers("loss 0.123456 [1, 2]"))
    assert not same_numbers(numbers("loss 0.123456"), numbers("loss 0.124456"))
    assert not same_numbers(numbers("1 2"), numbers("1 2 3"))
    assert not same_numbers(numbers("grad warned: True"), numbers("grad warned: False"))
