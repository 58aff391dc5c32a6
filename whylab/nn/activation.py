"""Activation modules: each holds its settings and calls one function of
:mod:`whylab.nn.functional` (``ReLU``, ``Tanh`` and ``Sigmoid`` are in :mod:`.layers`)."""

from __future__ import annotations

import whylab

from . import functional as F
from .module import Module
from .parameter import Parameter


class _Elementwise(Module):
    """A parameter-free activation whose settings are keyword arguments of its function."""

    function = staticmethod(lambda input: input)
    settings: tuple[str, ...] = ()

    def __init__(self, **settings) -> None:
        super().__init__()
        for name, value in settings.items():
            setattr(self, name, value)

    def forward(self, input):
        return type(self).function(input, **{name: getattr(self, name) for name in self.settings})

    def extra_repr(self) -> str:
        return ", ".join(f"{name}={getattr(self, name)}" for name in self.settings)


class GELU(_Elementwise):
    function = staticmethod(F.gelu)
    settings = ("approximate",)

    def __init__(self, approximate: str = "none") -> None:
        super().__init__(approximate=approximate)


class SiLU(_Elementwise):
    function = staticmethod(F.silu)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()


class Mish(SiLU):
    function = staticmethod(F.mish)


class Softplus(_Elementwise):
    function = staticmethod(F.softplus)
    settings = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__(beta=beta, threshold=threshold)


class LeakyReLU(_Elementwise):
    function = staticmethod(F.leaky_relu)
    settings = ("negative_slope",)

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(negative_slope=negative_slope)


class ELU(_Elementwise):
    function = staticmethod(F.elu)
    settings = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(alpha=alpha)


class CELU(ELU):
    function = staticmethod(F.celu)


class SELU(SiLU):
    function = staticmethod(F.selu)


class Hardtanh(_Elementwise):
    function = staticmethod(F.hardtanh)
    settings = ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__(min_val=min_val, max_val=max_val)


class ReLU6(SiLU):
    function = staticmethod(F.relu6)


class Hardsigmoid(SiLU):
    function = staticmethod(F.hardsigmoid)


class Hardswish(SiLU):
    function = staticmethod(F.hardswish)


class Softsign(_Elementwise):
    function = staticmethod(F.softsign)


class LogSigmoid(_Elementwise):
    function = staticmethod(F.logsigmoid)


class Tanhshrink(_Elementwise):
    function = staticmethod(F.tanhshrink)


class Softmax(_Elementwise):
    function = staticmethod(F.softmax)
    settings = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__(dim=dim)  # dim=None: torch's implicit choice, with its warning


class LogSoftmax(Softmax):
    function = staticmethod(F.log_softmax)


class Softmin(Softmax):
    function = staticmethod(F.softmin)


class PReLU(Module):
    """``x`` where ``x > 0``, else ``weight x``; one learned slope, or one per channel."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(whylab.full((num_parameters,), init, device=device, dtype=dtype))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
