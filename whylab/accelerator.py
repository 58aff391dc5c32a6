"""``torch.accelerator``'s face: the device-agnostic questions newer programs ask.

whylab computes on the CPU only, so it answers as torch does on a machine with
no accelerator: ``is_available()`` is False, ``current_accelerator()`` is None,
``device_count()`` is 0, and the calls that need a device raise torch's
RuntimeError for that case. The usual line
``device = torch.accelerator.current_accelerator().type if
torch.accelerator.is_available() else "cpu"`` therefore picks ``"cpu"``.
"""

from __future__ import annotations

from whylab._core import unsupported as _unsupported

NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """Whether an accelerator can be used: never, in whylab."""
    return False


def current_accelerator(check_available: bool = False):
    """The accelerator's device type, or None when there is none (always, here)."""
    return None


def device_count() -> int:
    """The number of accelerator devices: 0."""
    return 0


def _none_available(*args):
    raise RuntimeError(NONE_AVAILABLE)


def current_device_index() -> int:
    """Needs an accelerator: raises torch's RuntimeError."""
    _none_available()


def set_device_index(device, /) -> None:
    """Needs an accelerator: raises torch's RuntimeError."""
    _none_available()


def device_index(device, /):
    """Needs an accelerator: raises torch's RuntimeError (torch raises on entering it)."""
    _none_available()


def synchronize(device=None, /) -> None:
    """Needs an accelerator: raises torch's RuntimeError."""
    _none_available()


current_device_idx = current_device_index
set_device_idx = set_device_index

__getattr__ = _unsupported.module_getattr("torch.accelerator", "whylab.accelerator")
