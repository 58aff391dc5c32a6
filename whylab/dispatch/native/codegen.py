"""From the op table to operators, public functions and Tensor methods.

``whylab/dispatch/native_functions.py`` lists one :class:`NativeFunction` per
operator. :func:`build` defines each operator, registers its kernels, and
writes the Python bindings as real source code: a ``def`` per public function
and per Tensor method, with the schema's parameter names, defaults and
keyword-only marker, that calls the kernel table in schema order. The source is
compiled under a file name registered with :mod:`linecache`
(``<whylab generated: add>``), so tracebacks, ``inspect.getsource`` and a
debugger show it; ``help(whylab.add)`` shows the schema.

Each generated binding dispatches inline, doing the steps of
``Operator.__call__`` (see ``whylab/dispatch/operator.py``) with the key
extraction written out for this schema's tensor arguments: no ``*args``
packing and no extra frame between the public call and the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from whylab._core.keys import DispatchKey
from whylab._tensor.device import to_device
from whylab._tensor.dtypes import to_dtype
from whylab._tensor.tensor import Tensor
from whylab.dispatch.native._registry import (
    DIM_REQUIRED,
    check_dim_given,
    numpy_names,
    write_out,
)
from whylab.dispatch.operator import (
    DISPATCH_GLOBALS,
    RESERVED_NAMES,
    CompositeImplicitAutograd,
    compile_source,
    define,
    dispatch_lines,
    python_default,
)


@dataclass(frozen=True)
class NativeFunction:
    """One operator of the table: its schema, its kernels, and its Python names.

    * ``schema`` — the operator's schema, written out in full;
    * ``cpu`` / ``meta`` — backend kernels (``kernels/cpu``, ``kernels/meta``);
      ``composite`` — one kernel written in terms of other operators instead;
    * ``function`` — public names (``whylab.add``; aliases after the first);
    * ``method`` — Tensor method names (``Tensor.add``, ``__add__`` ...);
    * ``out`` — the public function takes torch's ``out=`` tensor;
    * ``numpy`` — the public function and method accept NumPy's ``axis=`` and
      ``keepdims=`` for ``dim`` and ``keepdim``, as torch's argument parser does;
    * ``python`` — hand-written bindings for names whose Python signature is not
      a plain schema-order call (``Tensor.view(*shape)``, ``max(t, dim)``):
      ``{"name": fn}`` for a public function, ``{"Tensor.name": fn}`` for a method;
    * ``rename`` — parameter names of the public function that differ from the
      schema's (``self`` is ``input`` unless renamed, as in torch); methods keep
      the schema's names.
    """

    schema: str
    cpu: object = None
    meta: object = None
    composite: object = None
    function: tuple[str, ...] = ()
    method: tuple[str, ...] = ()
    out: bool = False
    numpy: bool = False
    python: dict = field(default_factory=dict)
    rename: dict = field(default_factory=dict)


@dataclass
class Generated:
    """What :func:`build` made: operators by name, public functions by name, methods by name."""

    operators: dict
    functions: dict
    methods: dict


#: Names the generated bindings use for themselves, besides the dispatch code's.
_RESERVED = RESERVED_NAMES | {"out", "numpy_keywords", "to_dtype", "to_device", "int_list"}
_RESERVED |= {"numpy_names", "write_out", "DIM_REQUIRED", "check_dim_given"}


def build(table, python_only: dict) -> Generated:
    """Define every operator in ``table``, generate its bindings and attach the methods.

    ``python_only`` holds the public names that have no operator of their own
    (``{"isnan": fn, "Tensor.isnan": fn}``), attached and exported the same way.
    """
    generated = Generated({}, {}, {})
    for entry in table:
        op = define(entry.schema)
        if entry.cpu is not None:
            op.register(DispatchKey.CPU, entry.cpu)
        if entry.meta is not None:
            op.register(DispatchKey.Meta, entry.meta)
        if entry.composite is not None:
            op.register(CompositeImplicitAutograd, entry.composite)
        generated.operators[op.name] = op
        if entry.function:
            fn = _compile_binding(op, entry, method=False)
            for name in entry.function:
                _claim(generated.functions, name, fn)
        if entry.method:
            fn = _compile_binding(op, entry, method=True)
            for name in entry.method:
                _claim(generated.methods, name, fn)
        _claim_python(generated, entry.python)
    _claim_python(generated, python_only)
    for name, fn in generated.methods.items():
        setattr(Tensor, name, fn)
    return generated


def _claim_python(generated: Generated, python: dict) -> None:
    for name, fn in python.items():
        if name.startswith("Tensor."):
            _claim(generated.methods, name[len("Tensor.") :], fn)
        else:
            _claim(generated.functions, name, fn)


def _claim(names: dict, name: str, fn) -> None:
    if name in names:
        raise ValueError(f"the op table gives the name {name!r} to two entries")
    names[name] = fn


# ------------------------------------------------------------------ the generated source


def _conversion(arg, name: str) -> str | None:
    """The line that brings a Python argument into the form the kernels take, if any."""
    if arg.type == "ScalarType?":
        return f"    if {name} is not None:\n        {name} = to_dtype({name})"
    if arg.type == "Device?":
        return f"    if {name} is not None:\n        {name} = to_device({name})"
    if arg.type in ("Tensor[]", "Tensor?[]"):
        return f"    {name} = list({name})"
    if arg.type == "int[]":
        return f"    {name} = int_list({name})"
    return None


def binding_source(op, entry: NativeFunction, *, method: bool) -> tuple[str, str]:
    """The Python source of one binding, and its function name."""
    schema = op.schema
    rename = {} if method else {"self": "input", **entry.rename}

    def python_name(arg):
        return rename.get(arg.name, arg.name)

    arguments = list(schema.arguments)
    receiver = next((arg for arg in arguments if arg.name == "self"), None) if method else None
    parameters, seen_star = [], False
    if receiver is not None:
        parameters.append("self")
    for arg in arguments:
        if arg is receiver:
            continue
        if arg.keyword_only and not seen_star:
            parameters.append("*")
            seen_star = True
        default = python_default(arg.default)
        if default is None and entry.numpy and arg.name == "dim":
            default = "DIM_REQUIRED"  # so that axis= can stand in for it
        parameters.append(python_name(arg) if default is None else f"{python_name(arg)}={default}")
    takes_out = entry.out and not method
    if takes_out:
        if not seen_star:
            parameters.append("*")
        parameters.append("out=None")
    if entry.numpy:
        parameters.append("**numpy_keywords")

    clash = _RESERVED.intersection(python_name(arg) for arg in arguments)
    if clash:
        raise ValueError(f"{schema.text}: parameter names {sorted(clash)} clash with the binding's")
    name = schema.name.replace(".", "_")
    lines = [f"def {name}({', '.join(parameters)}):"]
    lines.append(f'    """{schema.text}\n\n    {_summary(entry, method)}\n    """')
    if entry.numpy:
        dim = next(arg for arg in arguments if arg.name == "dim")
        default = python_default(dim.default) or "DIM_REQUIRED"
        if any(arg.name == "keepdim" for arg in arguments):
            call = f"numpy_names({schema.name!r}, numpy_keywords, dim, {default}, keepdim)"
            lines.append(f"    if numpy_keywords:\n        dim, keepdim = {call}")
        else:
            call = f"numpy_names({schema.name!r}, numpy_keywords, dim, {default})"
            lines.append(f"    if numpy_keywords:\n        dim = {call}")
        if default == "DIM_REQUIRED":
            lines.append(f"    check_dim_given({schema.name!r}, dim)")
    for arg in arguments:
        conversion = _conversion(arg, python_name(arg))
        if conversion is not None:
            lines.append(conversion)
    lines += dispatch_lines(schema, python_name)
    if takes_out:
        lines.append("    if out is not None:")
        lines.append(f"        return write_out({schema.name!r}, result, out)")
    lines.append("    return result")
    return "\n".join(lines) + "\n", name


def _summary(entry: NativeFunction, method: bool) -> str:
    kernels = (
        f"composite {_qualified(entry.composite)}"
        if entry.composite is not None
        else f"CPU {_qualified(entry.cpu)}, Meta {_qualified(entry.meta)}"
    )
    where = "Tensor method" if method else "Function"
    return f"{where} generated from whylab/dispatch/native_functions.py.\n    Kernels: {kernels}."


def _qualified(fn) -> str:
    if fn is None:
        return "none"
    module = getattr(fn, "__module__", "") or ""
    return f"{module}.{getattr(fn, '__qualname__', repr(fn))}"


def _compile_binding(op, entry: NativeFunction, *, method: bool):
    source, name = binding_source(op, entry, method=method)
    kind = "method" if method else "function"
    namespace = dict(DISPATCH_GLOBALS)
    namespace.update(
        op=op,
        to_dtype=to_dtype,
        to_device=to_device,
        int_list=_int_list,
        numpy_names=numpy_names,
        write_out=write_out,
        DIM_REQUIRED=DIM_REQUIRED,
        check_dim_given=check_dim_given,
    )
    compile_source(source, f"<whylab generated {kind}: {op.name}>", namespace)
    fn = namespace[name]
    public = entry.method[0] if method else entry.function[0]
    fn.__name__ = public
    fn.__qualname__ = f"Tensor.{public}" if method else public
    fn.__module__ = "whylab"
    fn.__whylab_source__ = source
    return fn


def _int_list(value):
    """An ``int[]`` argument given as a list (or a range...) becomes a tuple.

    A tuple or a single int is left as it is: the schemas whose ``int[]`` also takes
    one int (``amax(t, 1)``, ``split(t, 2)``) leave that to their kernels.
    """
    if type(value) is tuple or isinstance(value, int):
        return value
    return tuple(value)
