"""``torch.nn.utils``: gradient clipping (``clip_grad_norm_``, ``clip_grad_value_``)."""

from __future__ import annotations

import math

import whylab
from whylab._core import unsupported as _unsupported


def _grads(parameters):
    if isinstance(parameters, whylab.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients so that their joint ``norm_type``-norm is at most ``max_norm``.

    As torch: the norm is that of the vector of every gradient element, the scale is
    ``max_norm / (norm + 1e-6)`` clamped at 1, and the norm before clipping is returned.
    """
    grads = _grads(parameters)
    if not grads:
        return whylab.tensor(0.0)
    norm_type = float(norm_type)
    with whylab.no_grad():
        if math.isinf(norm_type):
            norms = [g.detach().abs().max() for g in grads]
            total = norms[0] if len(norms) == 1 else whylab.stack(norms).max()
        else:
            norms = [whylab.linalg.vector_norm(g.detach(), norm_type) for g in grads]
            total = whylab.linalg.vector_norm(whylab.stack(norms), norm_type)
        if error_if_nonfinite and not bool(whylab.isfinite(total).item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
        scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``."""
    with whylab.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


__getattr__ = _unsupported.module_getattr("torch.nn.utils", "whylab.nn.utils")
