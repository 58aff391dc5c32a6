"""Anomaly detection: find the forward operation behind a bad gradient.

Inside ``with detect_anomaly():`` (or after ``set_detect_anomaly(True)``):

* every node recorded keeps a short traceback of the forward call that made
  it (this costs time, which is why it is off by default);
* after each node runs in backward, its gradients are checked for NaN; the
  first NaN raises ``RuntimeError("Function 'LogBackward0' returned nan values
  in its 0th output.")`` followed by the forward traceback;
* if a node raises, a warning shows the forward traceback of that node.

Names and messages follow ``torch.autograd.detect_anomaly``.
"""

from __future__ import annotations

import traceback

import numpy as np

from whylab._core import thread_state

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]


#: Per-thread flags (``enabled``, ``check_nan``), documented in whylab/_core/thread_state.py.
_state = thread_state.anomaly


def is_anomaly_enabled() -> bool:
    """True when nodes record their forward traceback and backward checks results."""
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True when anomaly mode also checks every backward result for NaN."""
    return _state.check_nan


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on inside it."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._previous = (_state.enabled, _state.check_nan)
        _state.enabled = True
        _state.check_nan = self.check_nan
        return self

    def __exit__(self, *exc_info):
        _state.enabled, _state.check_nan = self._previous
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)

        return wrapped


class set_detect_anomaly:
    """Turn anomaly detection on or off; as a block, the old setting returns on exit."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._previous = (_state.enabled, _state.check_nan)
        _state.enabled = bool(mode)
        _state.check_nan = check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        _state.enabled, _state.check_nan = self._previous
        return False


def has_nan(tensor) -> bool:
    """Whether a gradient tensor holds a NaN (integer tensors never do)."""
    if not tensor.dtype.is_floating_point:
        return False
    return bool(np.isnan(tensor.detach().numpy()).any())


def forward_stack() -> str:
    """A short traceback of the current forward call, without whylab's own frames."""
    frames = [
        frame
        for frame in traceback.extract_stack()[:-1]
        if "/whylab/autograd/" not in frame.filename.replace("\\", "/")
        and "/whylab/dispatch/" not in frame.filename.replace("\\", "/")
    ]
    return "".join(traceback.format_list(frames[-6:]))
