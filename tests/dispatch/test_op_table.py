"""The op table (whylab/dispatch/native_functions.py) and the bindings generated from it."""

import functools
import inspect
import re
import traceback

import pytest
import torch

import whylab
from whylab.dispatch import DispatchKey, get_op, parse_schema
from whylab.dispatch.native import codegen
from whylab.dispatch.native._registry import DIM_REQUIRED
from whylab.dispatch.native_functions import FUNCTIONS, METHODS, NATIVE_FUNCTIONS, PYTHON_ONLY
from whylab.dispatch.operator import python_default

ENTRIES = {entry.schema.split("(")[0]: entry for entry in NATIVE_FUNCTIONS}


def _generated(fn) -> bool:
    return hasattr(fn, "__whylab_source__")


def test_every_entry_is_a_registered_operator_with_its_kernels():
    for name, entry in ENTRIES.items():
        op = get_op(name)
        assert op.schema.text == entry.schema
        assert getattr(whylab.ops, name) is op
        if entry.composite is not None:
            assert entry.cpu is None and entry.meta is None, name
            for key in (DispatchKey.CPU, DispatchKey.Meta):
                assert op._table[int(key)] is entry.composite, (name, key)
        else:
            assert op._table[int(DispatchKey.CPU)] is entry.cpu, name
            assert op._table[int(DispatchKey.Meta)] is entry.meta, name


def test_schemas_are_written_out_in_full():
    """A grep for '"tanh(' must find the entry: no schema is built by formatting."""
    source = inspect.getsource(whylab.dispatch.native_functions)
    for name, entry in ENTRIES.items():
        first_line = entry.schema.split(" -> ")[0]
        assert f'"{first_line[:40]}' in source, name
    table_source = source.split("NATIVE_FUNCTIONS = [")[1].split("PYTHON_ONLY")[0]
    assert re.search(r'(?<!\w)f"', table_source) is None


def test_no_name_is_given_by_two_entries():
    functions, methods = [], []
    for entry in NATIVE_FUNCTIONS:
        functions += entry.function
        methods += entry.method
        for name in entry.python:
            (methods if name.startswith("Tensor.") else functions).append(name.split(".")[-1])
    for name in PYTHON_ONLY:
        (methods if name.startswith("Tensor.") else functions).append(name.split(".")[-1])
    assert len(functions) == len(set(functions))
    assert len(methods) == len(set(methods))
    assert set(functions) == set(FUNCTIONS) and set(methods) == set(METHODS)


def test_a_name_given_twice_is_refused():
    schema = "test_op_table_twice(Tensor self) -> Tensor"  # test_op_: other suites skip it

    def kernel(self):
        return self

    table = [
        codegen.NativeFunction(schema, cpu=kernel, meta=kernel, function=("op_table_twice",)),
        codegen.NativeFunction(schema, cpu=kernel, meta=kernel, python={"op_table_twice": abs}),
    ]
    with pytest.raises(ValueError, match="two entries"):
        codegen.build(table, {})


def test_every_public_function_and_method_of_the_table_is_exported():
    for name, fn in FUNCTIONS.items():
        assert getattr(whylab, name) is fn or getattr(whylab, name).__wrapped__ is fn, name
        assert name in whylab.__all__, name
    for name, fn in METHODS.items():
        assert whylab.Tensor.__dict__[name] is fn, name


def _expected_parameters(entry, *, method):
    """(name, default, kind) of each parameter, from the schema alone."""
    schema = parse_schema(entry.schema)
    rename = {} if method else {"self": "input", **entry.rename}
    expected = []
    if method:
        expected.append(("self", inspect.Parameter.empty, "POSITIONAL_OR_KEYWORD"))
    for arg in schema.arguments:
        if method and arg.name == "self":
            continue
        default = inspect.Parameter.empty
        if arg.default is not None:
            text = arg.default
            default = eval(python_default(text))  # noqa: S307  (schema literals)
        elif entry.numpy and arg.name == "dim":
            default = DIM_REQUIRED  # a required dim that axis= may name instead
        kind = "KEYWORD_ONLY" if arg.keyword_only else "POSITIONAL_OR_KEYWORD"
        expected.append((rename.get(arg.name, arg.name), default, kind))
    if entry.out and not method:
        expected.append(("out", None, "KEYWORD_ONLY"))
    if entry.numpy:
        expected.append(("numpy_keywords", inspect.Parameter.empty, "VAR_KEYWORD"))
    return expected


@pytest.mark.parametrize("name", sorted(n for n, e in ENTRIES.items() if e.function or e.method))
def test_generated_bindings_have_the_signature_the_schema_says(name):
    entry = ENTRIES[name]
    bindings = [(FUNCTIONS[n], False) for n in entry.function]
    bindings += [(METHODS[n], True) for n in entry.method]
    for fn, method in bindings:
        assert _generated(fn)
        got = [
            (p.name, p.default, p.kind.name) for p in inspect.signature(fn).parameters.values()
        ]
        assert got == _expected_parameters(entry, method=method), (name, method)
        assert fn.__doc__.startswith(entry.schema)


#: torch aliases whose parameter names differ from the operator they share a binding with
#: here (torch.swapaxes(input, axis0, axis1), torch.true_divide(dividend, divisor)).
SHARED_BINDING_NAMES = {"swapaxes", "true_divide"}


def _torch_parameter_names(name):
    """Parameter names of torch's public function, from the signature its docstring opens with."""
    doc = (getattr(torch, name).__doc__ or "").strip()
    match = re.match(rf"{name}\((.*)\)", doc.splitlines()[0] if doc else "")
    if match is None:
        return None
    names = []
    for part in re.sub(r"\[[^\]]*\]+", "", match.group(1)).split(","):
        part = part.split("=")[0].split(":")[0].strip()
        if part and part not in ("*", "out"):
            names.append(part)
    return names


@pytest.mark.parametrize("name", sorted(n for n, f in FUNCTIONS.items() if _generated(f)))
def test_generated_functions_accept_torch_parameter_names(name):
    if not hasattr(torch, name):
        pytest.skip(f"torch has no {name} at the top level")
    if name in SHARED_BINDING_NAMES:
        pytest.skip(f"torch.{name} names its parameters unlike the binding it shares here")
    torch_names = _torch_parameter_names(name)
    if torch_names is None:
        pytest.skip(f"torch.{name}'s docstring opens with no signature")
    ours = list(inspect.signature(FUNCTIONS[name]).parameters)
    if "numpy_keywords" in ours:
        ours += ["axis", "keepdims"]
    assert [n for n in torch_names if n not in ours] == [], (torch_names, ours)


def test_generated_source_is_what_inspect_help_and_tracebacks_show():
    source = inspect.getsource(whylab.add)
    assert source.startswith("def add(input, other, *, alpha=1, out=None):")
    assert "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in whylab.add.__doc__
    assert inspect.getsource(whylab.Tensor.sum).startswith(
        "def sum(self, dim=None, keepdim=False, *, dtype=None, **numpy_keywords):"
    )
    with pytest.raises(RuntimeError) as caught:
        whylab.add(whylab.ones(2), whylab.ones(3))
    frames = traceback.extract_tb(caught.value.__traceback__)
    generated = [frame for frame in frames if frame.filename == "<whylab generated function: add>"]
    assert generated and generated[0].line.startswith("result = kernel(")


def test_a_non_tensor_input_names_the_schema():
    with pytest.raises(TypeError, match=re.escape("mm(Tensor self, Tensor mat2) -> Tensor")):
        whylab.mm([[1.0]], whylab.ones(1, 1))


def test_numpy_keywords_reach_the_generated_reductions():
    t = whylab.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.sum(axis=0, keepdims=True).tolist() == [[4.0, 6.0]]
    assert whylab.amax(t, axis=1).tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="both dim= and axis="):
        whylab.sum(t, 0, axis=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        whylab.sum(t, axes=1)


@pytest.mark.parametrize("name", ["max", "min", "var", "std", "all", "any"])
@pytest.mark.parametrize("form", ["function", "method"])
def test_numpy_keywords_reach_the_hand_written_reductions(name, form):
    """``axis=``/``keepdims=`` in the hand-written bindings: torch's results, torch's errors."""
    values = [[1.0, 0.0, 4.0], [3.0, 2.0, 5.0]]
    results = {}
    for lib in (whylab, torch):
        t = lib.tensor(values, dtype=lib.float64)
        fn = getattr(t, name) if form == "method" else functools.partial(getattr(lib, name), t)
        out = fn(axis=1, keepdims=True)
        results[lib.__name__] = [o.tolist() for o in (out if isinstance(out, tuple) else (out,))]
        with pytest.raises(TypeError):
            fn(dim=1, axis=0)
        with pytest.raises(TypeError):
            fn(axes=1)
    assert results["whylab"] == results["torch"]
    t = whylab.tensor(values)
    with pytest.raises(TypeError, match="both dim= and axis="):
        getattr(whylab, name)(t, dim=1, axis=0)
    with pytest.raises(TypeError, match="both keepdim= and keepdims="):
        getattr(whylab, name)(t, 1, keepdim=True, keepdims=True)


def test_list_arguments_are_converted_for_the_kernels():
    t = whylab.ones(2, 3)
    assert whylab.permute(t, [1, 0]).shape == (3, 2)
    assert whylab.cat((t, t)).shape == (4, 3)
    assert whylab.cat(x for x in (t, t)).shape == (4, 3)
    assert whylab.split(t, 2, dim=1)[0].shape == (2, 2)
    assert whylab.sum(t, dtype="float64").dtype is whylab.float64
