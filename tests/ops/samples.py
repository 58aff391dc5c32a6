"""Sample-input generators shared by many OpInfo entries.

Each generator takes a ``Maker`` (a seeded random source fixed to one dtype) and
returns a short list of ``Sample``s: small shapes, broadcasting, a 0-d tensor, an
empty tensor, Python numbers, and non-contiguous arguments (transposed, sliced with a
step, expanded).
"""

from __future__ import annotations

import numpy as np

from .core import Arr, Sample, make_arr

# Python numbers paired with tensors of each dtype (a float with an int tensor would
# change the result dtype, which binary samples test separately).
SCALARS = {"float64": 2.5, "float32": 2.5, "int64": 2, "int32": 2, "bool": True}


class Maker:
    """Random arguments of one dtype: ``m((3, 4), "T", domain="positive")``.

    Domains keep values where an op is defined and smooth: ``real`` (normal floats,
    integers in [-4, 4], random bools), ``positive`` (floats >= 0.5, integers 1..4),
    ``nonzero`` (|x| >= 0.5), ``unit`` (inside (-0.9, 0.9)), ``distinct`` (no two
    values closer than 0.37, so max/sort have no ties under perturbation).
    """

    def __init__(self, rng: np.random.Generator, dtype: str):
        self.rng = rng
        self.dtype = dtype

    @property
    def scalar(self):
        return SCALARS[self.dtype]

    @property
    def is_float(self) -> bool:
        return self.dtype in ("float64", "float32")

    @property
    def is_int(self) -> bool:
        return self.dtype in ("int64", "int32")

    def values(self, shape, domain="real") -> np.ndarray:
        shape = tuple(shape)
        rng = self.rng
        if self.dtype == "bool":
            return rng.random(shape) > 0.5
        if domain == "distinct":
            flat = rng.permutation(int(np.prod(shape, dtype=np.int64))).astype(np.float64)
            data = (flat.reshape(shape) - flat.size / 2) * (0.37 if self.is_float else 1)
        elif self.is_int:
            low = 1 if domain in ("positive",) else -4
            data = rng.integers(low, 5, size=shape)
            if domain == "nonzero":
                data = np.where(data == 0, 1, data)
        else:
            data = rng.standard_normal(shape)
            if domain == "positive":
                data = np.abs(data) + 0.5
            elif domain == "nonzero":
                data = np.sign(data) * (np.abs(data) + 0.5)
            elif domain == "unit":
                data = np.tanh(data) * 0.9
        return np.asarray(data, dtype=np.dtype(self.dtype))

    def __call__(self, shape, layout="contiguous", domain="real", grad=True) -> Arr:
        return make_arr(self.values(shape, domain), layout, grad)

    def index(self, shape, high, unique_along=None) -> Arr:
        """An int64 index tensor with entries in [0, high); with ``unique_along`` the
        entries along that dimension are distinct (scatter needs one writer per slot)."""
        if unique_along is None:
            return make_arr(self.rng.integers(0, high, size=shape).astype(np.int64))
        shape = tuple(shape)
        moved = np.moveaxis(np.empty(shape, dtype=np.int64), unique_along, -1)
        for position in np.ndindex(moved.shape[:-1]):
            moved[position] = self.rng.permutation(high)[: moved.shape[-1]]
        return make_arr(np.ascontiguousarray(np.moveaxis(moved, -1, unique_along)))


def unary(domain="real"):
    """Samples for an elementwise op of one tensor."""

    def samples(m: Maker):
        return [
            Sample(m((3, 4), domain=domain)),
            Sample(m((2, 3, 4), "T", domain)),
            Sample(m((3, 5), "step", domain)),
            Sample(m((3, 4), "expand", domain)),
            Sample(m((), domain=domain)),
            Sample(m((0, 3), domain=domain)),
        ]

    return samples


def binary(domain_a="real", domain_b="real", scalar=True, extra_kwargs=()):
    """Samples for an elementwise op of two tensors: equal shapes, broadcasting one or
    both ways, non-contiguous operands, a 0-d tensor, a Python number, empty; then each
    of ``extra_kwargs`` (dicts, or callables of the Maker) on one broadcast pair."""

    def samples(m: Maker):
        out = [
            Sample(m((3, 4), domain=domain_a), (m((3, 4), domain=domain_b),)),
            Sample(m((3, 4), "T", domain_a), (m((4,), "step", domain_b),)),
            Sample(m((2, 1, 4), domain=domain_a), (m((3, 1), domain=domain_b),)),
            Sample(m((3, 4), "expand", domain_a), (m((), domain=domain_b),)),
            Sample(m((0, 4), domain=domain_a), (m((4,), domain=domain_b),)),
        ]
        if scalar:
            value = m.scalar if domain_b != "nonzero" or m.dtype != "bool" else True
            out.append(Sample(m((3, 4), "step", domain_a), (value,), name="number"))
        for kwargs in extra_kwargs:
            kwargs = kwargs(m) if callable(kwargs) else kwargs
            if kwargs is None:
                continue
            out.append(Sample(m((3, 4), domain=domain_a), (m((4,), domain=domain_b),), kwargs))
        return out

    return samples


def reduction(dims=(1, (0, 2)), keepdim=True, full=True, empty=True, domain="real"):
    """Samples for a reduction: the whole tensor, single and tuple dims, keepdim,
    a transposed input, a 0-d input and an empty one."""

    def samples(m: Maker):
        out = []
        if full:
            out.append(Sample(m((3, 4), "T", domain)))
            out.append(Sample(m((), domain=domain)))
        for i, dim in enumerate(dims):
            layout = ("contiguous", "step", "T")[i % 3]
            out.append(Sample(m((2, 3, 4), layout, domain), (dim,)))
            if keepdim:
                out.append(Sample(m((2, 3, 4), "expand", domain), (dim,), {"keepdim": True}))
        if empty:
            out.append(Sample(m((0, 3), domain=domain), (1,)))
        return out

    return samples


def call(*args, **kwargs) -> tuple[tuple, dict]:
    """The arguments after the input of one sample call (for ``shaped``)."""
    return args, kwargs


def shaped(*calls, shape=(2, 3, 4), layouts=("contiguous", "T", "step"), domain="real"):
    """One sample of ``shape`` per ``call(...)`` in ``calls``, cycling the input layouts."""

    def samples(m: Maker):
        return [
            Sample(m(shape, layouts[i % len(layouts)], domain), args, kwargs)
            for i, (args, kwargs) in enumerate(calls)
        ]

    return samples
