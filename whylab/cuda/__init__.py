"""``torch.cuda``'s face: what a device-agnostic program asks before it picks a device.

whylab has no CUDA backend yet (the CUDA dispatch key exists, with no kernels),
so ``is_available()`` is False and ``device_count()`` is 0, as on a machine
without a GPU; calls that need a device raise PyTorch's error for that case.
"""

from __future__ import annotations

from whylab._tensor.device import CUDA_NOT_COMPILED as NOT_COMPILED


def is_available() -> bool:
    """Whether a CUDA device can be used: never, in whylab."""
    return False


def device_count() -> int:
    """The number of CUDA devices: 0."""
    return 0


def is_initialized() -> bool:
    return False


def _no_cuda(*args, **kwargs):
    raise AssertionError(NOT_COMPILED)


current_device = _no_cuda
set_device = _no_cuda
synchronize = _no_cuda
get_device_name = _no_cuda
get_device_properties = _no_cuda


def manual_seed(seed: int) -> None:
    """Seed the CUDA generators: there are none, so this does nothing (as torch without GPUs)."""


manual_seed_all = manual_seed
