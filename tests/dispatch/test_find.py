"""``python -m whylab.dispatch.find NAME``: every public name leads to its operators' entries."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import whylab
import whylab.nn.functional as F
from whylab.dispatch import find
from whylab.dispatch.native_functions import FUNCTIONS, METHODS

ROOT = Path(__file__).resolve().parents[2]
LOCATION = re.compile(r"^\s+(whylab/\S+\.py):(\d+)$", re.M)
OPERATOR = re.compile(r"^operator (\S+)$", re.M)

PUBLIC = sorted(FUNCTIONS) + sorted(f"Tensor.{name}" for name in METHODS) + sorted(
    f"F.{name}" for name in dir(F) if not name.startswith("_") and callable(getattr(F, name))
    and getattr(getattr(F, name), "__module__", "").startswith("whylab")
)


def _check_locations(text: str) -> None:
    """Every ``path:line`` printed is a real line of a real file of the repository."""
    for path, line in LOCATION.findall(text):
        lines = (ROOT / path).read_text(encoding="utf-8").split("\n")
        assert 1 <= int(line) <= len(lines), (path, line)


def test_every_public_name_is_found_with_real_locations():
    assert len(PUBLIC) > 400
    for name in PUBLIC:
        text = find.describe(name)
        assert text.split(":")[0].endswith(name.removeprefix("F.")), text
        _check_locations(text)
        for op_name in OPERATOR.findall(text):
            assert getattr(whylab.ops, op_name) is not None


def test_cross_entropy_leads_to_its_operator_and_the_table_lines_hold_the_schemas():
    text = find.describe("cross_entropy")
    assert "operator cross_entropy_loss" in text
    assert "whylab/nn/functional.py" in text
    table = (ROOT / "whylab/dispatch/native_functions.py").read_text().split("\n")
    for op_name in OPERATOR.findall(text):
        line = int(re.search(r"native_functions\.py:(\d+)", text).group(1))
        assert f'"{op_name}(' in table[line - 1]


def test_an_in_place_op_shows_its_own_kernel_and_the_out_of_place_derivative():
    text = find.describe("Tensor.tanh_")
    assert "tanh_(Tensor(a!) self) -> Tensor(a!)" in text
    assert "whylab/kernels/cpu/inplace.py" in text
    assert "TanhBackward0 (the entry of tanh" in text
    line = int(re.search(r"derivatives\.py:(\d+)", text).group(1))
    source = (ROOT / "whylab/autograd/derivatives.py").read_text().split("\n")
    assert '"tanh"' in "\n".join(source[line - 1 : line + 1])


def test_an_unknown_name_is_refused_and_the_command_fails(capsys):
    with pytest.raises(LookupError, match="neither a public whylab name"):
        find.describe("no_such_op")
    assert find.main(["no_such_op"]) == 1 and "no_such_op" in capsys.readouterr().err
    assert find.main(["cross_entropy"]) == 0
    assert "operator cross_entropy_loss" in capsys.readouterr().out
    done = subprocess.run(  # the command itself, as the README gives it
        [sys.executable, "-m", "whylab.dispatch.find", "F.cross_entropy"],
        capture_output=True, text=True, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0 and "operator cross_entropy_loss" in done.stdout
