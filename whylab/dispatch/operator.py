"""Operators: a schema plus a per-key table of kernels, and the call path through it.

An :class:`Operator` is created once per schema by :func:`define`. Kernels are
registered per dispatch key. A call computes the key set of its tensor
arguments, combines it with the thread-local include/exclude sets, keeps only
the keys that have a real kernel for this operator (fallthrough keys are
skipped), and runs the kernel of the highest remaining key.

Calling convention (see README.md in this folder):

* backend kernels (CPU, CUDA, Meta) receive the operator's arguments;
* wrapper kernels (ADInplaceOrView, Autograd, Tracer) receive first the key set
  *below* their own key, as a raw int, so that ``op.redispatch(ks, *args)``
  continues the chain with the next key down;
* global fallbacks are *boxed*: they receive ``(op, ks, *args, **kwargs)``;
* a composite kernel (CompositeImplicitAutograd) receives the arguments only,
  in every slot it fills, wrapper slots included.

The hot path never parses the schema: at definition time :func:`define` gives
each operator a class whose ``__call__`` is generated for its schema (named
parameters, the tensor arguments' key bits ORed in one expression; see
:func:`dispatch_lines`), compiled under a file name that tracebacks and
``inspect.getsource`` show. :meth:`Operator.__call__` below is the same steps for
any argument list, used by schemas the generator cannot express.

A shortcut, with the same result: an Autograd kernel may carry a predicate
``skip_if(args, kwargs)``, true when the kernel would only hand the call on to
the next key (grad mode off, or no input requires grad), and the switch it reads,
``skip_if.mode`` (an object whose ``enabled`` is the grad mode). The predicate must
hold exactly when no tensor input requires grad or the switch is off: the generated
call code reads the inputs' ``_requires_grad`` and the switch itself, without a
call; :meth:`Operator.__call__` asks the predicate. When Autograd is the first key
of a call and the predicate holds, the call goes straight to the next key, which
saves two Python calls per operator. PyTorch always enters its Autograd kernel; the
kernels run below it are the same either way, and a call that reaches Autograd by
``redispatch`` (under a trace, say) still enters it.

Wrapper kernels continue a call with :meth:`Operator.redispatch`, or, on the hot
path, with :meth:`Operator.hop`: the same step looked up once per key set and
cached (PyTorch likewise computes a kernel's dispatch from the key set, not per
call), so continuing costs a dictionary read instead of a Python call.
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass
from functools import partial

from whylab._core.keys import (
    BELOW,
    FIRST_WRAPPER_KEY,
    NUM_KEYS,
    DispatchKey,
    DispatchKeySet,
    key_bit,
)
from whylab._tensor.device import device_key_bits
from whylab._tensor.tensor import Tensor
from whylab.dispatch.tls import local_keys

#: Alias key: one kernel, written in terms of other operators, that serves
#: Autograd and every backend (PyTorch's CompositeImplicitAutograd).
CompositeImplicitAutograd = "CompositeImplicitAutograd"


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class Argument:
    """One parameter of a schema: ``Tensor self``, ``int dim=-1``, ``Tensor(a!) self``."""

    name: str
    type: str
    default: str | None
    keyword_only: bool
    alias: str | None  # "a" for Tensor(a), "a!" for Tensor(a!)

    @property
    def is_tensor(self) -> bool:
        return self.type in ("Tensor", "Tensor?")

    @property
    def is_tensor_list(self) -> bool:
        return self.type in ("Tensor[]", "Tensor?[]")


@dataclass(frozen=True)
class Schema:
    """A parsed operator schema such as ``mm(Tensor self, Tensor mat2) -> Tensor``."""

    name: str
    arguments: tuple[Argument, ...]
    returns: str
    text: str

    @property
    def is_inplace(self) -> bool:
        """True when the schema writes into an argument: ``Tensor(a!) self``."""
        return any(arg.alias and arg.alias.endswith("!") for arg in self.arguments)

    @property
    def is_view(self) -> bool:
        """True when the output aliases an input without writing: ``-> Tensor(a)``."""
        return not self.is_inplace and "(a)" in self.returns


_ARG_PATTERN = re.compile(
    r"^(?P<type>[A-Za-z]+)(?:\((?P<alias>[a-z]!?)\))?(?P<suffix>[\[\]?0-9]*)$"
)


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets (defaults like ``[0, 1]``)."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    tail = "".join(current).strip()
    if tail:
        parts.append(tail)
    return parts


def parse_schema(text: str) -> Schema:
    """Parse a schema string once, at definition time."""
    match = re.fullmatch(r"\s*([\w.]+)\((.*)\)\s*->\s*(.+?)\s*", text)
    if match is None:
        raise ValueError(f"cannot parse operator schema {text!r}")
    name, arg_text, returns = match.groups()
    arguments, keyword_only = [], False
    for part in _split_top_level(arg_text):
        if part == "*":
            keyword_only = True
            continue
        declaration, _, default = part.partition("=")
        type_text, arg_name = declaration.rsplit(maxsplit=1)
        type_match = _ARG_PATTERN.match(type_text.strip())
        if type_match is None:
            raise ValueError(f"cannot parse argument {part!r} of schema {text!r}")
        arg_type = type_match["type"] + type_match["suffix"]
        arguments.append(
            Argument(arg_name, arg_type, default.strip() or None, keyword_only, type_match["alias"])
        )
    return Schema(name, tuple(arguments), returns, text)


# ------------------------------------------------------------------ key extraction


def _key_extractor(schema: Schema):
    """Build the function that ORs the dispatch keys of a call's tensor arguments.

    Specialised for the common shapes of argument lists so that the hot path is
    a couple of attribute reads. Non-first ``Tensor`` parameters may also receive
    Python numbers (PyTorch's "wrapped numbers"), hence the isinstance checks.
    """
    positional = [arg for arg in schema.arguments if not arg.keyword_only]
    tensor_positions = tuple(i for i, arg in enumerate(positional) if arg.is_tensor)
    list_positions = tuple(i for i, arg in enumerate(positional) if arg.is_tensor_list)
    has_device = any(arg.name == "device" for arg in schema.arguments)

    if list_positions == () and tensor_positions == (0,):

        def keys_of(args, kwargs):
            return args[0]._keys

    elif list_positions == () and tensor_positions == (0, 1):

        def keys_of(args, kwargs):
            other = args[1] if len(args) > 1 else kwargs.get(positional[1].name)
            if isinstance(other, Tensor):
                return args[0]._keys | other._keys
            return args[0]._keys

    elif tensor_positions or list_positions:
        names = {i: positional[i].name for i in tensor_positions + list_positions}

        def keys_of(args, kwargs):
            keys = 0
            for i in tensor_positions:
                value = args[i] if i < len(args) else kwargs.get(names[i])
                if isinstance(value, Tensor):
                    keys |= value._keys
            for i in list_positions:
                value = args[i] if i < len(args) else kwargs.get(names[i], ())
                for item in value:
                    if isinstance(item, Tensor):
                        keys |= item._keys
            return keys

    elif has_device:
        # Bindings pass keyword-only arguments positionally, so count them all.
        device_index = next(i for i, arg in enumerate(schema.arguments) if arg.name == "device")

        def keys_of(args, kwargs):
            if device_index < len(args):
                return device_key_bits(args[device_index])
            return device_key_bits(kwargs.get("device"))

    else:

        def keys_of(args, kwargs):
            return key_bit(DispatchKey.CPU)

    return keys_of


# ------------------------------------------------------ the generated dispatch code


def python_default(text: str | None) -> str | None:
    """A schema default as Python source: ``[]`` is ``()``, ``[0, 1]`` is ``(0, 1)``."""
    if text is None:
        return None
    if text.startswith("["):
        inner = text[1:-1].strip()
        return f"({inner},)" if inner and "," not in inner else f"({inner})"
    return text


def _list_keys(tensors) -> int:
    keys = 0
    for item in tensors:
        if isinstance(item, Tensor):
            keys |= item._keys
    return keys


def _list_requires_grad(tensors) -> bool:
    for item in tensors:
        if isinstance(item, Tensor) and item._requires_grad:
            return True
    return False


def dispatch_lines(schema: Schema, python_name=lambda arg: arg.name) -> list[str]:
    """The body of a call, as source lines ending in ``result = kernel(...)``.

    They do what :meth:`Operator.__call__` does, written out for this schema: the
    key extraction names the tensor arguments (the first ``Tensor self`` is always a
    tensor; other Tensor parameters may hold Python numbers, PyTorch's wrapped
    numbers), and the Autograd shortcut first reads the inputs' ``_requires_grad``
    (a ``skip_if`` predicate holds whenever no input requires grad: see the module
    docstring) before asking the kernel's predicate itself. ``op`` names the
    operator; ``python_name`` maps a schema argument to the Python variable holding it.
    """
    keys, requires_grad = [], []
    for position, arg in enumerate(schema.arguments):
        name = python_name(arg)
        if arg.is_tensor:
            if position == 0 and arg.type == "Tensor":
                keys.append(f"{name}._keys")
                requires_grad.append(f"{name}._requires_grad")
            else:
                keys.append(f"({name}._keys if isinstance({name}, Tensor) else 0)")
                requires_grad.append(f"(isinstance({name}, Tensor) and {name}._requires_grad)")
        elif arg.is_tensor_list:
            keys.append(f"list_keys({name})")
            requires_grad.append(f"list_requires_grad({name})")
        elif arg.name == "device":
            keys.append(f"device_keys({name})")
    call_args = ", ".join(python_name(arg) for arg in schema.arguments)
    args_tuple = f"({call_args},)" if len(schema.arguments) == 1 else f"({call_args})"
    any_requires_grad = " or ".join(requires_grad) or "False"
    return [
        "    # Dispatch, as Operator.__call__ does: the keys of the tensor arguments,",
        "    # this thread's included and excluded keys, then the highest key with a kernel.",
        f"    try:\n        keyset = {' | '.join(keys) or 'CPU_KEYS'}",
        f"    except AttributeError:\n        raise op._argument_error({args_tuple}) from None",
        "    keyset = (keyset | local_keys.included) & local_keys.keep",
        "    slot = (keyset & op._dispatch_mask).bit_length() - 1",
        "    if slot == AUTOGRAD and op._autograd_skippable and (",
        f"        not ({any_requires_grad})",
        "        or not op._autograd_mode.enabled",
        "    ):",
        "        keyset &= BELOW[AUTOGRAD]  # Autograd would only hand the call on",
        "        slot = (keyset & op._dispatch_mask).bit_length() - 1",
        "    kernel = op._table[slot]",
        "    if op._passes_keyset[slot]:",
        f"        result = kernel(keyset & BELOW[slot], {call_args})",
        "    else:",
        f"        result = kernel({call_args})",
    ]


#: The globals the generated dispatch code reads.
DISPATCH_GLOBALS = {
    "Tensor": Tensor,
    "local_keys": local_keys,
    "AUTOGRAD": int(DispatchKey.Autograd),
    "BELOW": BELOW,
    "CPU_KEYS": key_bit(DispatchKey.CPU),
    "list_keys": _list_keys,
    "list_requires_grad": _list_requires_grad,
    "device_keys": device_key_bits,
}

#: Names the generated code uses for itself, so no schema argument may take them.
RESERVED_NAMES = frozenset({"keyset", "slot", "kernel", "result", "op", *DISPATCH_GLOBALS})


def compile_source(source: str, filename: str, namespace: dict):
    """Compile generated ``source`` under ``filename``, registered with :mod:`linecache`
    so that tracebacks, ``inspect.getsource`` and debuggers show it."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102  (our own generated source)
    return namespace


def _specialised_class(schema: Schema):
    """A subclass of :class:`Operator` whose ``__call__`` is generated for ``schema``:
    parameters by name and default (keyword-only ones may come positionally, as the
    bindings pass them), no ``*args`` packing, the dispatch written out.

    Returns :class:`Operator` itself for a schema the generator cannot express.
    """
    names = {arg.name for arg in schema.arguments}
    if names & RESERVED_NAMES or len(names) != len(schema.arguments):
        return Operator
    parameters, defaulted = [], False
    for arg in schema.arguments:
        default = python_default(arg.default)
        if default is None and defaulted:
            return Operator  # a required argument after a defaulted one
        defaulted = defaulted or default is not None
        parameters.append(arg.name if default is None else f"{arg.name}={default}")
    lines = [f"def __call__({', '.join(['op', *parameters])}):"]
    lines.append(f'    """Call {schema.text}"""')
    lines += dispatch_lines(schema)
    lines.append("    return result")
    source = "\n".join(lines) + "\n"
    namespace = compile_source(source, f"<whylab operator: {schema.name}>", dict(DISPATCH_GLOBALS))
    call = namespace["__call__"]
    call.__qualname__ = f"Operator[{schema.name}].__call__"
    return type(f"Operator[{schema.name}]", (Operator,), {"__slots__": (), "__call__": call})


# ----------------------------------------------------------------- global tables

_OPERATORS: dict[str, Operator] = {}
_GLOBAL_FALLBACKS: dict[int, object] = {}


class Operator:
    """One operator: its schema and its dispatch table.

    ``_table[k]`` is the kernel run for key ``k`` (or None); ``_dispatch_mask``
    has a bit for each key with a kernel; ``_passes_keyset[k]`` says whether that
    kernel takes the key set below ``k`` as its first argument (wrapper kernels
    do; backend and composite kernels do not). The extra last slot of ``_table``
    holds the "no kernel" error, reached when no key survives the mask (index -1).
    """

    __slots__ = (
        "name",
        "schema",
        "_keys_of",
        "_table",
        "_passes_keyset",
        "_skips_autograd",
        "_autograd_skippable",
        "_autograd_mode",
        "_hops",
        "_dispatch_mask",
        "_kernels",
        "_fallthroughs",
        "_composite",
        "__weakref__",
    )

    def __init__(self, schema: Schema):
        self.name = schema.name
        self.schema = schema
        self._keys_of = _key_extractor(schema)
        self._kernels: dict[int, object] = {}
        self._fallthroughs: set[int] = set()
        self._composite = None
        self._table: list = []
        self._passes_keyset: list = []
        self._skips_autograd = _never
        self._autograd_skippable = False
        self._autograd_mode = None
        self._dispatch_mask = 0
        self._hops: dict = {}
        self._rebuild()

    # -- registration -------------------------------------------------------

    def register(self, key, kernel):
        """Register ``kernel`` for ``key`` (a DispatchKey or CompositeImplicitAutograd)."""
        if key == CompositeImplicitAutograd:
            self._composite = kernel
        else:
            key = int(DispatchKey(key))
            self._kernels[key] = kernel
            self._fallthroughs.discard(key)
        self._rebuild()
        return kernel

    def register_fallthrough(self, key: DispatchKey) -> None:
        """Make calls skip ``key`` for this operator."""
        key = int(DispatchKey(key))
        self._kernels.pop(key, None)
        self._fallthroughs.add(key)
        self._rebuild()

    def has_kernel(self, key: DispatchKey) -> bool:
        """Whether a call reaching ``key`` runs a kernel (rather than falling through)."""
        return bool(self._dispatch_mask & key_bit(key))

    def kernel_name(self, key: DispatchKey) -> str:
        """Qualified name of what runs for ``key``: a kernel, a fallback, or ``fallthrough``."""
        key = int(key)
        source = self._source_for(key)
        if source is None:
            return "fallthrough"
        kind, fn = source
        return _qualified_name(fn) if kind != "fallback" else f"fallback {_qualified_name(fn)}"

    def _source_for(self, key: int):
        """Where the kernel for ``key`` comes from, in PyTorch's order of precedence."""
        if key in self._kernels:
            return ("kernel", self._kernels[key])
        if key in self._fallthroughs:
            return None
        is_composite_slot = key in (
            int(DispatchKey.Autograd),
            int(DispatchKey.CPU),
            int(DispatchKey.CUDA),
            int(DispatchKey.Meta),
        )
        if self._composite is not None and is_composite_slot:
            return ("composite", self._composite)
        if key in _GLOBAL_FALLBACKS:
            return ("fallback", _GLOBAL_FALLBACKS[key])
        return None

    def _rebuild(self) -> None:
        table = [None] * (NUM_KEYS + 1)
        passes_keyset = [False] * (NUM_KEYS + 1)
        mask = 0
        for key in range(NUM_KEYS):
            source = self._source_for(key)
            if source is None:
                continue
            kind, fn = source
            is_wrapper = key >= FIRST_WRAPPER_KEY
            if kind == "fallback":
                fn = _bind_fallback(fn, self, is_wrapper)
            # A composite needs no key set: it calls other operators from the top.
            passes_keyset[key] = is_wrapper and kind != "composite"
            table[key] = fn
            mask |= 1 << key
        table[NUM_KEYS] = self._no_kernel
        self._table = table
        self._passes_keyset = passes_keyset
        self._skips_autograd = getattr(table[_AUTOGRAD], "skip_if", _never)
        self._autograd_mode = getattr(self._skips_autograd, "mode", None)
        # The generated code reads the switch; a predicate without one is never shortcut.
        self._autograd_skippable = self._autograd_mode is not None
        self._dispatch_mask = mask
        self._hops.clear()  # kernels changed: every cached hop is recomputed on next use

    # -- calling --------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        local = local_keys
        try:
            keys = self._keys_of(args, kwargs)
        except (AttributeError, IndexError, TypeError):
            raise self._argument_error(args) from None
        keys = (keys | local.included) & local.keep
        index = (keys & self._dispatch_mask).bit_length() - 1
        if index == _AUTOGRAD and self._skips_autograd(args, kwargs):
            keys &= _BELOW_AUTOGRAD  # see the module docstring
            index = (keys & self._dispatch_mask).bit_length() - 1
        if self._passes_keyset[index]:
            return self._table[index](keys & BELOW[index], *args, **kwargs)
        return self._table[index](*args, **kwargs)

    def redispatch(self, keyset, *args, **kwargs):
        """Continue a call with the kernel of the highest key in ``keyset``.

        ``keyset`` is what a wrapper kernel received (an int), or a DispatchKeySet.
        The thread-local include/exclude sets are not applied again.
        """
        if type(keyset) is not int:
            keyset = int(keyset)
        index = (keyset & self._dispatch_mask).bit_length() - 1
        recorder = local_keys.recorder
        if recorder is not None and index >= 0:
            recorder.hop(self, index, args)
        if self._passes_keyset[index]:
            return self._table[index](keyset & BELOW[index], *args, **kwargs)
        return self._table[index](*args, **kwargs)

    def hop(self, keyset: int):
        """What ``redispatch(keyset, ...)`` would run, as one callable: the kernel of the
        highest key in ``keyset``, with the key set below it bound first for a wrapper.

        Wrapper kernels call ``(op._hops.get(keyset) or op.hop(keyset))(*args)``: the
        answer depends on the key set alone, so it is computed once per key set and
        kept in ``_hops`` (emptied when a kernel is registered). Inside a
        ``trace()`` the answer is ``redispatch`` itself, so every hop is recorded,
        and it is not kept.
        """
        if local_keys.recorder is not None:
            return partial(self.redispatch, keyset)
        index = (keyset & self._dispatch_mask).bit_length() - 1
        kernel = self._table[index]
        if self._passes_keyset[index]:
            kernel = partial(kernel, keyset & BELOW[index])
        self._hops[keyset] = kernel
        return kernel

    def _no_kernel(self, *args, **kwargs):
        keys = 0
        try:
            keys = self._keys_of(args, kwargs)
        except (AttributeError, IndexError, TypeError):
            pass
        present = DispatchKeySet.from_bits(keys)
        raise NotImplementedError(
            f"{self.name}: no kernel registered for any of the keys {present} "
            f"(this operator has kernels for {DispatchKeySet.from_bits(self._dispatch_mask)})"
        )

    def _argument_error(self, args) -> TypeError:
        got = ", ".join(type(a).__name__ for a in args)
        return TypeError(
            f"{self.name}(): expected arguments matching {self.schema.text}, got ({got})"
        )

    def __repr__(self) -> str:
        return f"<Operator {self.schema.text}>"


_AUTOGRAD = int(DispatchKey.Autograd)
_BELOW_AUTOGRAD = BELOW[_AUTOGRAD]


def _never(args, kwargs) -> bool:
    """The skip predicate of an operator whose Autograd slot must always run."""
    return False


def _qualified_name(fn) -> str:
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{module}.{name}" if module else name


def _bind_fallback(fallback, op: Operator, is_wrapper: bool):
    """Adapt a boxed global fallback ``fallback(op, ks, *args)`` to the table's convention."""
    if is_wrapper:

        def wrapper_entry(keyset, *args, **kwargs):
            return fallback(op, keyset, *args, **kwargs)

        return wrapper_entry

    def backend_entry(*args, **kwargs):
        return fallback(op, 0, *args, **kwargs)

    return backend_entry


# --------------------------------------------------------------- public functions


def define(schema_text: str) -> Operator:
    """Create the operator for ``schema_text`` (or return it if already defined)."""
    schema = parse_schema(schema_text)
    existing = _OPERATORS.get(schema.name)
    if existing is not None:
        if existing.schema.text != schema.text:
            raise ValueError(f"operator {schema.name} already defined as {existing.schema.text!r}")
        return existing
    op = _specialised_class(schema)(schema)
    _OPERATORS[schema.name] = op
    setattr(ops, schema.name, op)  # an instance attribute: composites read ops.mm cheaply
    from whylab.dispatch import inplace_or_view

    inplace_or_view.register_for(op)
    return op


def get_op(name: str) -> Operator:
    """Look an operator up by name, e.g. ``get_op("mm")``."""
    try:
        return _OPERATORS[name]
    except KeyError:
        raise KeyError(f"no operator named {name!r}") from None


def all_ops() -> list[Operator]:
    """Every defined operator, in definition order."""
    return list(_OPERATORS.values())


def impl(name: str, key):
    """Decorator form of ``get_op(name).register(key, fn)``."""

    def decorate(kernel):
        get_op(name).register(key, kernel)
        return kernel

    return decorate


def register_fallback(key: DispatchKey, fallback) -> None:
    """Run the boxed ``fallback(op, ks, *args, **kwargs)`` for ``key`` on every operator
    that has no kernel of its own for that key."""
    key = int(DispatchKey(key))
    _GLOBAL_FALLBACKS[key] = fallback
    for op in _OPERATORS.values():
        op._rebuild()


def register_fallthrough_for_all(key: DispatchKey) -> None:
    """Make every operator without its own kernel for ``key`` skip it.

    This is the default for every wrapper key; calling it removes a global
    fallback registered earlier with :func:`register_fallback`.
    """
    _GLOBAL_FALLBACKS.pop(int(DispatchKey(key)), None)
    for op in _OPERATORS.values():
        op._rebuild()


class OpNamespace:
    """``whylab.ops.mm`` is the ``mm`` operator (like ``torch.ops.aten.mm``).

    :func:`define` sets each operator as an attribute of :data:`ops`, so composite
    kernels call ``ops.mm(a, b)`` at the cost of one attribute read. Overloads keep
    their dotted names: ``getattr(ops, "pow.Scalar")``.
    """

    def __getattr__(self, name: str) -> Operator:
        raise AttributeError(f"no operator named {name!r}")

    def __dir__(self):
        return sorted(_OPERATORS)


#: The namespace of every defined operator (``whylab.ops``).
ops = OpNamespace()
