"""The tape: one recorded call of a step, as the backend kernel calls it made.

A :class:`Recorder` listens to the backend kernel calls of one eager call
(``whylab.dispatch.intercept.backend_calls``) and writes one :class:`Entry` per call.
Every argument becomes a *spec*, a small tuple saying where its value comes from:

* ``(INPUT, k)`` -- the step's k-th input tensor;
* ``(RESULT, j)`` -- the j-th tensor a kernel on the tape produced (an intermediate);
* ``(HELD, tensor)`` -- a tensor that existed before the call and is used again by
  every call: a parameter, a gradient the step adds into, an optimizer buffer;
* ``(CONSTANT, value)`` -- anything that is not a tensor (numbers, dtypes, sizes);
* ``(LIST, type, specs)`` -- a list or tuple holding tensors.

Tensors produced by kernels are known by identity, through weak references, so that
recording changes no reference count (AccumulateGrad decides whether to steal a
gradient by counting references). A tensor made outside the kernels with exactly the
elements of a known one (the same storage, sizes, strides and offset: a saved output
that autograd unpacks as a new tensor object) is known as that one. Any other tensor
made outside the kernels during the call (``whylab.tensor(...)`` in the step, a formula
that builds one from NumPy) looks HELD on one tape but is a new object on the next:
:func:`first_difference` of two tapes finds it, which is how the capture tells a
static step from one that is not.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from whylab._core import thread_state
from whylab._core.keys import DispatchKey, key_bit
from whylab._tensor.tensor import Tensor

INPUT, RESULT, HELD, CONSTANT, LIST = "input", "result", "held", "constant", "list"

_INPLACE_BIT = key_bit(DispatchKey.ADInplaceOrView)
_local_keys = thread_state.dispatch


@dataclass(frozen=True)
class Entry:
    """One backend kernel call: the kernel, where its arguments come from, the specs of
    the new tensors it returned (None for a result that is not new, such as the
    ``self`` an in-place kernel returns), and the tensors whose version counter the
    ADInplaceOrView kernel bumped around it."""

    op_name: str
    kernel: object
    args: tuple
    kwargs: tuple | None
    results: object  # None, one RESULT spec, or a list of them (None for old tensors)
    bumps: tuple


def _elements(tensor) -> tuple:
    """Which elements a tensor shows: its storage's identity and its layout."""
    return (id(tensor._storage), tensor._sizes, tensor._strides, tensor._offset, tensor.dtype)


def _keys_of(values) -> int:
    """The dispatch keys the tensors among ``values`` (and in lists among them) carry."""
    keys = 0
    for value in values:
        if isinstance(value, Tensor):
            keys |= value._keys
        elif type(value) in (list, tuple):
            keys |= _keys_of(value)
    return keys


class Recorder:
    """Listens to one call's backend kernel calls and keeps them as a tape."""

    def __init__(self, inputs) -> None:
        self.entries: list[Entry] = []
        self.results = 0
        self._known: dict[int, tuple] = {}  # id -> (kind, index or tensor, tensor or weakref)
        self._by_elements: dict[tuple, tuple] = {}  # storage and layout -> (kind, index, ref)
        self._old_storages: dict[int, object] = {}  # storages of inputs and held tensors
        for index, tensor in enumerate(inputs):
            self._known[id(tensor)] = (INPUT, index, tensor)
            self._old_storages[id(tensor._storage)] = tensor._storage

    def spec(self, value):
        """Where ``value``, an argument or result, comes from (see the module docstring)."""
        if isinstance(value, Tensor):
            known = self._known.get(id(value))
            if known is not None:
                kind, index, held = known
                if (held() if kind == RESULT else held) is value:
                    return (kind, index)
            same = self._by_elements.get(_elements(value))
            if same is not None and same[2]() is value._storage:
                return same[:2]
            self._known[id(value)] = (HELD, value, value)
            self._old_storages[id(value._storage)] = value._storage
            return (HELD, value)
        if type(value) in (list, tuple) and any(isinstance(item, Tensor) for item in value):
            return (LIST, type(value), tuple(self.spec(item) for item in value))
        return (CONSTANT, value)

    def _new_result(self, value):
        if value is None:
            return None
        known = self._known.get(id(value))
        if known is not None and (known[2]() if known[0] == RESULT else known[2]) is value:
            return None  # an argument handed back (in-place kernels return self)
        index = self.results
        self.results += 1
        self._known[id(value)] = (RESULT, index, weakref.ref(value))
        if self._old_storages.get(id(value._storage)) is not value._storage:
            # Fresh elements: a tensor made later to show exactly them is this result.
            self._by_elements[_elements(value)] = (RESULT, index, weakref.ref(value._storage))
        return (RESULT, index)

    def __call__(self, op, kernel, args, kwargs, result) -> None:
        arg_specs = tuple(self.spec(value) for value in args)
        kwarg_specs = tuple((k, self.spec(v)) for k, v in kwargs.items()) if kwargs else None
        bumps = self._bumps(op, args, kwargs)
        if type(result) in (tuple, list):
            results = [self._new_result(item) for item in result]
        else:
            results = self._new_result(result)
        self.entries.append(Entry(op.name, kernel, arg_specs, kwarg_specs, results, bumps))

    def _bumps(self, op, args, kwargs) -> tuple:
        """The spec of the tensor whose version the ADInplaceOrView kernel bumped: an
        in-place operator's first argument, when the call's key set held that key."""
        if not op.schema.is_inplace:
            return ()
        keys = (_keys_of(args) | _keys_of(kwargs.values()) | _local_keys.included) & (
            _local_keys.keep
        )
        if not keys & _INPLACE_BIT:
            return ()
        first = args[0] if args else kwargs[op.schema.arguments[0].name]
        return (self.spec(first),)


def _same_constant(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b) or (a != a and b != b)  # NaN equals NaN here
    except (TypeError, ValueError):
        return False


def same_spec(a, b) -> bool:
    """Whether two specs name the same source: same input or result, the very same held
    tensor, equal constants (of the same type)."""
    if a is None or b is None:
        return a is b
    if a[0] != b[0]:
        return False
    kind = a[0]
    if kind == HELD:
        return a[1] is b[1]
    if kind == CONSTANT:
        return _same_constant(a[1], b[1])
    if kind == LIST:
        return a[1] is b[1] and len(a[2]) == len(b[2]) and all(map(same_spec, a[2], b[2]))
    return a[1] == b[1]


def describe(spec) -> str:
    """A spec in words, for the reasons the capture gives."""
    kind = spec[0]
    if kind == HELD:
        return f"a tensor of shape {list(spec[1]._sizes)} from outside the step"
    if kind == CONSTANT:
        return f"the constant {spec[1]!r}"
    if kind == LIST:
        return f"a {spec[1].__name__} of {len(spec[2])}"
    return f"{kind} {spec[1]}"


def first_difference(first: list[Entry], second: list[Entry]) -> str | None:
    """Why two tapes of the same step differ, or None when they are the same program."""
    for index, (a, b) in enumerate(zip(first, second, strict=False)):
        where = f"kernel call {index} ({a.op_name})"
        if a.kernel is not b.kernel:
            return f"{where} was {b.op_name} the next time"
        if len(a.args) != len(b.args):
            return f"{where} had {len(b.args)} arguments the next time"
        for position, (x, y) in enumerate(zip(a.args, b.args, strict=True)):
            if not same_spec(x, y):
                return f"{where}: argument {position} was {describe(x)}, then {describe(y)}"
        kwargs_same = (a.kwargs is None) == (b.kwargs is None) and (
            a.kwargs is None
            or [k for k, _ in a.kwargs] == [k for k, _ in b.kwargs]
            and all(same_spec(x, y) for (_, x), (_, y) in zip(a.kwargs, b.kwargs, strict=True))
        )
        if not kwargs_same:
            return f"{where}: its keyword arguments changed"
        same_bumps = len(a.bumps) == len(b.bumps) and all(map(same_spec, a.bumps, b.bumps))
        if a.results != b.results or not same_bumps:
            return f"{where}: its results or in-place writes changed"
    if len(first) != len(second):
        return f"the step made {len(first)} kernel calls, then {len(second)}"
    return None
