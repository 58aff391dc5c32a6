"""Find an op: ``python -m whylab.dispatch.find NAME`` prints where everything about it lives.

NAME is any public name a reader meets: a function (``tanh``, ``whylab.tanh``), a
Tensor method (``Tensor.add_``), a ``whylab.nn.functional`` function
(``cross_entropy``, ``F.cross_entropy``, ``nn.functional.cross_entropy``), or an
operator's own name (``cross_entropy_loss``, ``add.Scalar``). For the name it
prints the Python function and its file, then for every operator that function
calls: the schema, the kernel of each backend key (or the composite) with the file
and line it lives in, and the derivatives entry (its node name and line in
``whylab/autograd/derivatives.py``), or why there is none.

A hand-written function (``F.cross_entropy``, ``Tensor.view``) is followed to the
operators its source names (``ops.cross_entropy_loss(...)``) and to the generated
bindings it calls (``input.relu()``); a generated binding calls exactly one operator.

This is a reader's tool run from the command line: it loads the whole package as a
user does (``whylab.nn`` included), so its imports sit inside :func:`describe`.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_OPS_CALL = re.compile(r"""\bops\.(\w+)\(|getattr\(ops, ["']([\w.]+)["']\)""")
_METHOD_CALL = re.compile(r"\.(\w+)\(")


def _where(fn) -> str:
    """``path:line`` of a function's source, relative to the repository."""
    fn = inspect.unwrap(fn)
    try:
        path = Path(inspect.getsourcefile(fn)).resolve()
        line = inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return "(no source file)"
    try:
        path = path.relative_to(ROOT)
    except ValueError:
        pass
    return f"{path}:{line}"


def _public_object(name: str):
    """``(label, object)`` for a public name, or None."""
    import whylab
    import whylab.nn.functional as functional

    name = name.removeprefix("whylab.").removeprefix("torch.")
    for prefix in ("F.", "nn.functional."):
        if name.startswith(prefix):
            fn = getattr(functional, name[len(prefix):], None)
            return None if fn is None else (f"whylab.nn.functional.{name[len(prefix):]}", fn)
    if name.startswith("Tensor."):
        fn = whylab.Tensor.__dict__.get(name[len("Tensor."):])
        if isinstance(fn, property):
            fn = fn.fget
        return None if fn is None else (f"whylab.{name}", fn)
    fn = whylab.__dict__.get(name)
    if callable(fn):
        return f"whylab.{name}", fn
    fn = getattr(functional, name, None)
    if callable(fn):
        return f"whylab.nn.functional.{name}", fn
    method = whylab.Tensor.__dict__.get(name)
    if callable(method):
        return f"whylab.Tensor.{name}", method
    return None


def _operators_called(fn) -> list[str]:
    """The operators a public function calls: its own, or those its source names."""
    own = getattr(fn, "__globals__", {}).get("op") if hasattr(fn, "__whylab_source__") else None
    if own is not None:
        return [own.name]
    try:
        source = inspect.getsource(inspect.unwrap(fn))
    except (TypeError, OSError):
        return []
    names = []
    for match in _OPS_CALL.finditer(source):
        name = match.group(1) or match.group(2)
        if name not in names:
            names.append(name)
    import whylab

    for match in _METHOD_CALL.finditer(source):  # input.relu(), whylab.tanh(...)
        bound = whylab.Tensor.__dict__.get(match.group(1)) or whylab.__dict__.get(match.group(1))
        if hasattr(bound, "__whylab_source__"):
            name = bound.__globals__["op"].name
            if name not in names:
                names.append(name)
    return names


@functools.cache
def _text(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def _derivative_line(op_name: str) -> int | None:
    text = _text("whylab/autograd/derivatives.py")
    match = re.search(r'Derivative\(\s*"' + re.escape(op_name) + '"', text)
    return None if match is None else text.count("\n", 0, match.start()) + 1


def _derivative_lines(op_name: str) -> list[str]:
    from whylab.autograd import derivatives

    entries = {entry.op: entry for entry in derivatives.DERIVATIVES}
    base = op_name
    op = _operator(op_name)
    if op is not None and op.schema.is_inplace and op_name not in entries:
        base = op_name.split(".")[0].rstrip("_")  # in-place ops use the out-of-place entry
    entry = entries.get(base)
    if entry is not None:
        node = entry.name if isinstance(entry.name, str) else f"chosen by {entry.name.__name__}"
        note = "" if base == op_name else f" (the entry of {base}, as for every in-place op)"
        inputs = ", ".join(entry.formulas)
        return [
            f"  derivative: {node}{note}; formulas for {inputs}",
            f"    whylab/autograd/derivatives.py:{_derivative_line(base)}",
        ]
    if op_name in derivatives.NOT_DIFFERENTIABLE or base in derivatives.NOT_DIFFERENTIABLE:
        return ["  derivative: none (listed in NOT_DIFFERENTIABLE in derivatives.py)"]
    if op is not None and _composite(op) is not None:
        return ["  derivative: none of its own (a composite: the operators it calls record)"]
    return ["  derivative: none"]


def _operator(name: str):
    from whylab.dispatch.operator import ops

    return getattr(ops, name, None)


def _composite(op):
    return op._composite


def _operator_lines(op_name: str) -> list[str]:
    from whylab._core.keys import DispatchKey

    op = _operator(op_name)
    if op is None:
        return [f"operator {op_name}: not defined"]
    lines = [f"operator {op_name}", f"  schema: {op.schema.text}"]
    lines.append(f"    {_table_line(op_name)}")
    composite = _composite(op)
    if composite is not None:
        lines.append(f"  composite: {op.kernel_name(DispatchKey.CPU)}")
        lines.append(f"    {_where(composite)}")
    for key in (DispatchKey.CPU, DispatchKey.Meta):
        kernel = op._kernels.get(int(key))
        if kernel is not None:
            lines.append(f"  {key.name} kernel: {op.kernel_name(key)}")
            lines.append(f"    {_where(kernel)}")
    return lines + _derivative_lines(op_name)


def _table_line(op_name: str) -> str:
    text = _text("whylab/dispatch/native_functions.py")
    match = re.search(r'^ {8}"' + re.escape(op_name) + r"\(", text, re.M)
    if match is None:
        return "whylab/dispatch/native_functions.py (entry not found)"
    return f"whylab/dispatch/native_functions.py:{text.count(chr(10), 0, match.start()) + 1}"


def describe(name: str) -> str:
    """Everything :mod:`find` prints for ``name`` (raises LookupError for an unknown one)."""
    import whylab  # noqa: F401 - defines every operator and registers autograd's kernels

    found = _public_object(name)
    if found is None:
        if _operator(name) is not None:
            return "\n".join(_operator_lines(name))
        raise LookupError(
            f"{name!r} is neither a public whylab name (whylab.X, Tensor.X, "
            "whylab.nn.functional.X) nor an operator"
        )
    label, fn = found
    generated = hasattr(fn, "__whylab_source__")
    kind = "generated from the op table" if generated else "written by hand"
    lines = [f"{label}: {kind}", f"  {_where(fn)}" if not generated else "  (source in the table)"]
    operators = _operators_called(fn)
    if not operators:
        lines.append("  calls no operator directly (it composes other public functions)")
    for op_name in operators:
        lines.append("")
        lines += _operator_lines(op_name)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m whylab.dispatch.find NAME", file=sys.stderr)
        return 2
    try:
        print(describe(argv[0]))
    except LookupError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
