"""The machinery under the OpInfo table: operator records, library-neutral samples,
and turning one sample into whylab and torch arguments.

Modelled on PyTorch's ``torch.testing._internal.opinfo`` (an ``OpInfo`` per operator,
its ``sample_inputs`` generator, flags saying which tests apply), written for a
two-library comparison: a sample holds NumPy values and a *layout*, and
``materialize`` builds the same arguments in whylab and in torch, so every test runs
one call in both and compares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

import whylab

LAYOUTS = ("contiguous", "T", "step", "expand")


@dataclass(frozen=True)
class Arr:
    """One tensor argument: the values of its storage and the view the op receives.

    ``stored`` is what the storage holds; ``layout`` says how the argument is seen:
    ``contiguous`` (the stored tensor itself), ``T`` (stored transposed, so the
    argument is a transposed view with the values the sample asked for), ``step``
    (every other element of the last dimension of a stored tensor twice as wide) or
    ``expand`` (a size-1 first dimension expanded, stride 0).
    """

    stored: np.ndarray
    layout: str = "contiguous"
    expand_to: tuple = ()
    grad: bool = True  # a float argument the gradient tests differentiate

    @property
    def values(self) -> np.ndarray:
        if self.layout == "T":
            return np.swapaxes(self.stored, -1, -2)
        if self.layout == "step":
            return self.stored[..., ::2]
        if self.layout == "expand":
            return np.broadcast_to(self.stored, self.expand_to)
        return self.stored

    @property
    def shape(self) -> tuple:
        return self.values.shape

    @property
    def differentiable(self) -> bool:
        return self.grad and self.stored.dtype.kind == "f"


def make_arr(values: np.ndarray, layout: str = "contiguous", grad: bool = True) -> Arr:
    """An ``Arr`` whose argument holds ``values`` in ``layout``."""
    values = np.asarray(values)
    if layout == "T":
        assert values.ndim >= 2, "the T layout needs two dimensions"
        return Arr(np.ascontiguousarray(np.swapaxes(values, -1, -2)), "T", grad=grad)
    if layout == "step":
        assert values.ndim >= 1, "the step layout needs a dimension"
        return Arr(np.repeat(values, 2, axis=-1), "step", grad=grad)
    if layout == "expand":
        assert values.ndim >= 1, "the expand layout needs a dimension"
        return Arr(np.ascontiguousarray(values[:1]), "expand", tuple(values.shape), grad=grad)
    return Arr(np.array(values, order="C"), "contiguous", grad=grad)  # keeps 0-d arrays 0-d


@dataclass(frozen=True)
class DType:
    """A dtype argument, named once for both libraries (``DType("int64")``)."""

    name: str


@dataclass
class Sample:
    """One call: ``op(input, *args, **kwargs)``; ``Arr``/``DType`` anywhere are converted.

    ``xfail`` maps a test kind (``forward``, ``strides``, ``meta``, ``grad``,
    ``gradgrad``, ``nodes``, ``inplace``, ``method``) to the reason the sample is a
    known, strict failure there.
    """

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""
    xfail: dict = field(default_factory=dict)


@dataclass
class OpInfo:
    """What the table knows about one operator, and which generic tests apply.

    ``name`` is the dispatcher's operator name (``whylab.dispatch.all_ops()``);
    ``variant`` tells apart several entries for one operator. ``op`` is whylab's
    public callable, ``ref`` the torch callable it must agree with. ``samples(rng,
    dtype)`` yields ``Sample``s for each dtype in ``dtypes`` (gradients only run on
    float64). ``covers`` names the other operators a call reaches (composites), and
    ``backward_ops`` those its backward runs; the coverage test checks both with a
    dispatch trace. ``inplace``/``method`` name the Tensor methods that must agree
    with ``op``. ``mutates`` marks in-place-only operators (``fill_``): their gradient
    test feeds them a clone of the leaf. ``random`` marks factories whose values are
    random: their shape, dtype and strides are compared, not their values. ``check_strides`` is off
    where torch's output layout is not part of the contract (the reason is given).
    """

    name: str
    op: Callable
    ref: Callable
    samples: Callable
    variant: str = ""
    dtypes: tuple = ("float64",)
    supports_autograd: bool = True
    supports_gradgrad: bool = True
    supports_meta: bool = True
    inplace: str | None = None
    method: str | None = None
    covers: tuple = ()
    backward_ops: tuple = ()
    mutates: bool = False
    random: bool = False
    check_strides: bool = True
    is_view: bool = False
    rtol: float = 1e-10
    atol: float = 1e-12

    @property
    def id(self) -> str:
        return f"{self.name}.{self.variant}" if self.variant else self.name


def method_caller(name: str) -> Callable:
    """``x.name(*args, **kwargs)`` as a function of ``x`` (for either library)."""

    def call_method(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)

    call_method.__name__ = f"Tensor.{name}"
    return call_method


# ------------------------------------------------------------------------ materializing


WHYLAB_FROM_TORCH = {
    torch.float32: whylab.float32,
    torch.float64: whylab.float64,
    torch.int64: whylab.int64,
    torch.int32: whylab.int32,
    torch.bool: whylab.bool,
}


def _tensor(lib, stored: np.ndarray, device: str | None):
    if device == "meta":
        dtype = getattr(lib, str(stored.dtype) if stored.dtype != np.bool_ else "bool")
        return lib.empty(stored.shape, dtype=dtype, device="meta")
    if lib is torch:
        return torch.from_numpy(stored.copy()).clone(memory_format=torch.contiguous_format)
    return whylab.tensor(stored.copy())


def view_of(arr: Arr, base):
    """The argument ``arr`` describes, as a view of its stored tensor ``base``."""
    if arr.layout == "T":
        return base.transpose(-1, -2)
    if arr.layout == "step":
        return base[..., ::2]
    if arr.layout == "expand":
        return base.expand(*arr.expand_to)
    return base


class Materialized:
    """A sample's arguments in one library, and the leaves the gradient tests use."""

    def __init__(self, lib, sample: Sample, requires_grad=False, device=None, clone=False):
        self.lib = lib
        self.leaves = []
        self.input = self._convert(sample.input, requires_grad, device, clone)
        self.args = self._convert(sample.args, requires_grad, device, clone)
        self.kwargs = self._convert(sample.kwargs, requires_grad, device, clone)

    def _convert(self, value, requires_grad, device, clone):
        if isinstance(value, Arr):
            base = _tensor(self.lib, value.stored, device)
            if requires_grad and value.differentiable:
                base.requires_grad_(True)
                self.leaves.append(base)
                if clone:
                    base = base.clone()
            return view_of(value, base)
        if isinstance(value, DType):
            return getattr(self.lib, value.name)
        if isinstance(value, tuple):
            return tuple(self._convert(v, requires_grad, device, clone) for v in value)
        if isinstance(value, list):
            return [self._convert(v, requires_grad, device, clone) for v in value]
        if isinstance(value, dict):
            return {k: self._convert(v, requires_grad, device, clone) for k, v in value.items()}
        return value

    def call(self, fn):
        return fn(self.input, *self.args, **self.kwargs)


def tensors_of(value) -> list:
    """The tensors of an op's result, in order (a tensor, or a tuple/list of them)."""
    if isinstance(value, whylab.Tensor | torch.Tensor):
        return [value]
    if isinstance(value, tuple | list):
        return [t for item in value for t in tensors_of(item)]
    return []


def arrs_of(value) -> list:
    if isinstance(value, Arr):
        return [value]
    if isinstance(value, tuple | list):
        return [a for item in value for a in arrs_of(item)]
    if isinstance(value, dict):
        return [a for item in value.values() for a in arrs_of(item)]
    return []


def sample_arrs(sample: Sample) -> list:
    return arrs_of([sample.input, sample.args, sample.kwargs])


# ------------------------------------------------------------------------ comparing


def node_names(grad_fn) -> list[str]:
    """Class names of every node reachable from ``grad_fn`` (None: no node), sorted."""
    names, seen, stack = [], set(), [grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return sorted(names)



def tolerances(dtype, info: OpInfo) -> tuple[float, float]:
    """(rtol, atol) for a result of ``dtype``: ``info``'s for float64, float32's own
    precision for float32 results (integer inputs to float ops), exact otherwise."""
    if dtype == torch.float64:
        return info.rtol, info.atol
    if dtype == torch.float32:
        return 1e-6, 1e-6
    return 0.0, 0.0


def gradient_tolerances(dtype, info: OpInfo) -> tuple[float, float]:
    """(rtol, atol) for a gradient: ``info``'s in float64; in float32 looser than forward
    values, since a gradient chains several rounded float32 steps (``dtype`` is torch's, or
    a whylab tensor when torch gave no gradient)."""
    if dtype == torch.float32 or getattr(dtype, "dtype", None) is whylab.float32:
        return 1e-4, 1e-5
    return info.rtol, info.atol


def assert_tensor_equal(w, t, info: OpInfo, what: str, strides=True, values=True):
    assert isinstance(w, whylab.Tensor), f"{what}: whylab gave {type(w).__name__}"
    assert tuple(w.shape) == tuple(t.shape), f"{what}: shape {tuple(w.shape)} != {tuple(t.shape)}"
    assert WHYLAB_FROM_TORCH[t.dtype] is w.dtype, f"{what}: dtype {w.dtype} != {t.dtype}"
    if strides and w.numel() > 0:
        assert tuple(w.stride()) == tuple(t.stride()), (
            f"{what}: strides {tuple(w.stride())} != torch's {tuple(t.stride())}"
        )
    if w.device.type == "meta" or not values:
        return
    rtol, atol = tolerances(t.dtype, info)
    np.testing.assert_allclose(
        w.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=what
    )


def assert_results_equal(w_result, t_result, info: OpInfo, what: str, strides=True, values=True):
    w_tensors, t_tensors = tensors_of(w_result), tensors_of(t_result)
    assert len(w_tensors) == len(t_tensors), (
        f"{what}: {len(w_tensors)} tensors, torch gives {len(t_tensors)}"
    )
    for index, (w, t) in enumerate(zip(w_tensors, t_tensors, strict=True)):
        assert_tensor_equal(w, t, info, f"{what} output {index}", strides, values)


def call_both(w_call, t_call, same_kind=True):
    """Run ``t_call`` then ``w_call``; (whylab result, torch result).

    When torch raises, whylab must raise an exception of the same builtin kind (of any
    kind in ``ERROR_KINDS`` with ``same_kind=False``); the function then returns
    (None, None).
    """
    try:
        t_result = t_call()
    except ERROR_KINDS as error:
        kind = next(k for k in ERROR_KINDS if isinstance(error, k)) if same_kind else ERROR_KINDS
        try:
            w_call()
        except kind:
            return None, None
        message = f"torch raises {type(error).__name__} ({error}); whylab does not"
        raise AssertionError(message) from None
    return w_call(), t_result


def run_both(info: OpInfo, sample: Sample, same_kind=True, **materialize):
    """Call the op in torch and in whylab on equal arguments (see ``call_both``).

    Returns (whylab result, torch result, whylab Materialized, torch Materialized).
    """
    t_args = Materialized(torch, sample, **materialize)
    w_args = Materialized(whylab, sample, **materialize)
    w, t = call_both(lambda: w_args.call(info.op), lambda: t_args.call(info.ref), same_kind)
    return w, t, w_args, t_args


# torch's own error classes (torch.OutOfMemoryError, _LinAlgError...) subclass these;
# whylab must raise the same builtin kind, subclasses first.
ERROR_KINDS = (IndexError, ValueError, TypeError, NotImplementedError, RuntimeError)
