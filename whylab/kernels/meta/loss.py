"""Meta kernels of the losses: the CPU kernels' checks, then the result's shape and dtype."""

from __future__ import annotations

from whylab.kernels.cpu.loss import REDUCTION_NONE, check_nll_loss
from whylab.kernels.meta.common import meta_empty


def _forward(op, self, target, weight, reduction, image):
    check_nll_loss(op, self, target, weight, reduction, image)
    shape = tuple(target._sizes) if reduction == REDUCTION_NONE else ()
    return meta_empty(shape, self.dtype), meta_empty((), self.dtype)


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    return _forward("nll_loss", self, target, weight, reduction, image=False)


def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    return _forward("nll_loss2d", self, target, weight, reduction, image=True)


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    check_nll_loss("nll_loss", self, target, weight, reduction, image=False)
    return meta_empty(self._sizes, self.dtype)


def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    check_nll_loss("nll_loss2d", self, target, weight, reduction, image=True)
    return meta_empty(self._sizes, self.dtype)
