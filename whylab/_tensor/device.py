"""Devices (``cpu``, ``meta``, ``cuda:0``) and the backend dispatch key each one means."""

from __future__ import annotations

from whylab._core.keys import AUTOGRAD_KEYS_MASK, DispatchKey, key_bit

_BACKEND_KEY = {"cpu": DispatchKey.CPU, "cuda": DispatchKey.CUDA, "meta": DispatchKey.Meta}


class device:
    """Where a tensor lives: ``device("cpu")``, ``device("meta")``, ``device("cuda", 0)``."""

    __slots__ = ("type", "index", "key_bits")

    def __init__(self, type_or_spec, index: int | None = None):
        if isinstance(type_or_spec, device):
            type_or_spec, index = type_or_spec.type, type_or_spec.index
        kind, _, index_text = str(type_or_spec).partition(":")
        if kind not in _BACKEND_KEY:
            raise RuntimeError(
                "Expected one of cpu, cuda, meta device type at start of device string: "
                f"{type_or_spec}"
            )
        if index_text:
            index = int(index_text)
        self.type = kind
        self.index = index
        #: the key set of a tensor on this device: its backend key plus the autograd keys
        self.key_bits = key_bit(_BACKEND_KEY[kind]) | AUTOGRAD_KEYS_MASK

    def __eq__(self, other) -> bool:
        if isinstance(other, device):
            return self.type == other.type and self.index == other.index
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


CPU = device("cpu")
META = device("meta")


def to_device(value) -> device:
    """Accept a device, a string like ``"meta"``, or None (meaning cpu)."""
    if value is None:
        return CPU
    if isinstance(value, device):
        return value
    if value == "cpu":
        return CPU
    if value == "meta":
        return META
    return device(value)


def device_key_bits(value) -> int:
    """The dispatch key bits for a factory call on ``value`` (a device, string or None)."""
    if value is None:
        return CPU.key_bits
    return to_device(value).key_bits


#: What torch says when asked for CUDA on a build (here: an engine) without it.
CUDA_NOT_COMPILED = "Torch not compiled with CUDA enabled (whylab has no CUDA backend)"


def set_default_device(device_spec) -> None:
    """Choose the device factories use when none is given: only "cpu" exists as a default here.

    ``None`` and "cpu" are accepted (a no-op); "cuda" raises torch's error for a machine
    without CUDA; "meta" is refused (deviation: torch would make every factory build meta
    tensors).
    """
    if device_spec is None:
        return
    chosen = device(device_spec)
    if chosen.type == "cuda":
        raise AssertionError(CUDA_NOT_COMPILED)
    if chosen.type != "cpu":
        raise NotImplementedError(f"set_default_device: only 'cpu' is supported, got {chosen}")


def get_default_device() -> device:
    """The device factories use when none is given (always the CPU here)."""
    return CPU
