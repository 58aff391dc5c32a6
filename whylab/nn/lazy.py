"""Lazy modules (``LazyConv2d``, ``LazyBatchNorm2d`` ...): the input size is read at the first call.

Each is built with the arguments of the module it becomes (``cls_to_become``),
less the first (``in_channels`` or ``num_features``). Its first forward takes that
number from the input's dimension 1, builds the parameters and buffers exactly as
the full module's constructor does (same initialisation), moves them in, and
turns itself into the full module (``type(m) is nn.Conv2d`` afterwards, as in
torch). Hooks, the training flag and the place in the parent module stay as they
were. Deviations: until then there are no parameters (torch shows
``UninitializedParameter`` placeholders), so create the optimizer after one call;
without a ``dtype`` the parameters take the input's dtype (torch's take the default
dtype, or the one ``.double()`` set on the lazy module), as whylab's LazyLinear does.
"""

from __future__ import annotations

from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d
from .module import Module


class _LazyModule(Module):
    cls_to_become: type = Module

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()
        self._lazy_arguments = (args, kwargs)

    def forward(self, input):
        args, kwargs = self._lazy_arguments
        if args[-1] is None and input.dtype.is_floating_point:  # dtype, the last argument
            args = (*args[:-1], input.dtype)
        full = self.cls_to_become(input.shape[1], *args, **kwargs)
        del self._lazy_arguments
        for name, value in vars(full).items():
            if name in ("_parameters", "_buffers"):
                getattr(self, name).update(value)
            elif not name.startswith("_") and name != "training":
                object.__setattr__(self, name, value)
        self.__class__ = self.cls_to_become
        return self.forward(input)

    def extra_repr(self) -> str:
        args, kwargs = self._lazy_arguments
        return ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])


class LazyConv1d(_LazyModule):
    """A :class:`Conv1d` whose ``in_channels`` is read from its first input."""

    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class LazyConv2d(_LazyModule):
    """A :class:`Conv2d` whose ``in_channels`` is read from its first input."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class _LazyBatchNorm(_LazyModule):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype, bias=bias)


class LazyBatchNorm1d(_LazyBatchNorm):
    """A :class:`BatchNorm1d` whose ``num_features`` is read from its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm):
    """A :class:`BatchNorm2d` whose ``num_features`` is read from its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm):
    """A :class:`BatchNorm3d` whose ``num_features`` is read from its first input."""

    cls_to_become = BatchNorm3d
