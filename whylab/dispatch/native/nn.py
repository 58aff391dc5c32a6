"""The composite of the neural-network family: ``layer_norm`` over ``native_layer_norm``.

Schemas and kernels: ``whylab/dispatch/native_functions.py`` (gelu, mse_loss and
native_layer_norm are operators with kernels in ``whylab/kernels/cpu/nn.py``).
"""

from __future__ import annotations

from whylab.dispatch.operator import ops


def layer_norm_composite(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """The normalized output of ``native_layer_norm`` (torch's ``layer_norm`` keeps only
    it; the mean and 1/std are for the backward)."""
    return ops.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]
