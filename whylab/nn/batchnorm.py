"""Batch normalisation: ``F.batch_norm`` and the modules BatchNorm1d, BatchNorm2d, BatchNorm3d.

In training mode the input is normalised with the batch's mean and biased variance
over every dimension but the channels (dim 1), and the running statistics move
toward the batch's mean and *unbiased* variance by ``momentum`` (a cumulative
average when ``momentum`` is None). In eval mode the running statistics are used.
"""

from __future__ import annotations

import whylab

from .module import Module
from .parameter import Parameter


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
):
    """Normalise over the batch (and spatial) dimensions, per channel."""
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2-D input, got {input.ndim}-D")
    channels = input.shape[1]
    dims = (0,) + tuple(range(2, input.ndim))
    shape = [1] * input.ndim
    shape[1] = channels
    if training:
        count = input.numel() // channels
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{tuple(input.shape)}"
            )
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        variance = (centered * centered).mean(dims, keepdim=True)
        if running_mean is not None:
            with whylab.no_grad():
                batch_mean = mean.reshape(channels)
                unbiased = variance.reshape(channels) * (count / (count - 1))
                running_mean.mul_(1 - momentum).add_(batch_mean * momentum)
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: eval mode needs running_mean and running_var")
        mean = running_mean.reshape(shape)
        centered = input - mean
        variance = running_var.reshape(shape)
    output = centered * (variance + eps).rsqrt()
    if weight is not None:
        output = output * weight.reshape(shape)
    if bias is not None:
        output = output + bias.reshape(shape)
    return output


class _BatchNorm(Module):
    expected_dims: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(whylab.ones(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(whylab.zeros(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            factory_kwargs = {"device": device, "dtype": dtype}
            self.register_buffer("running_mean", whylab.zeros(num_features, **factory_kwargs))
            self.register_buffer("running_var", whylab.ones(num_features, **factory_kwargs))
            self.register_buffer("num_batches_tracked", whylab.tensor(0, dtype=whylab.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input):
        if input.ndim not in self.expected_dims:
            raise ValueError(
                f"expected {' or '.join(f'{d}D' for d in self.expected_dims)} input "
                f"(got {input.ndim}D input)"
            )
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        # Without running statistics the batch's own are used in eval mode too.
        use_batch = self.training or not self.track_running_stats
        return batch_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            use_batch,
            momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input."""

    expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input."""

    expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input."""

    expected_dims = (5,)
