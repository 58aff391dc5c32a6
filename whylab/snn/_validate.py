"""Argument checks shared by the spiking-neuron modules: one message style for bad input.

Every error names the function or class, the argument and the bound it broke, e.g.
``LIFParams: tau_mem must be > 0 (got -5.0)``.
"""

from __future__ import annotations

import math

import numpy as np


def positive(where: str, name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless it is finite and > 0."""
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{where}: {name} must be a finite number > 0 (got {value!r})")
    return value


def non_negative(where: str, name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless it is finite and >= 0."""
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: {name} must be a finite number >= 0 (got {value!r})")
    return value


def finite(where: str, name: str, value: float) -> float:
    """``value`` as a float, or ValueError unless it is finite."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{where}: {name} must be a finite number (got {value!r})")
    return value


def time_step(where: str, dt: float, *time_constants: float) -> float:
    """A time step > 0 and at most a fifth of the shortest time constant.

    Forward Euler is unstable for dt > 2τ and already wrong by tens of percent near
    dt = τ; a fifth of τ keeps every integrator here in the regime where its error
    shrinks with dt as its order says.
    """
    dt = positive(where, "dt", dt)
    shortest = min(time_constants)
    if dt > shortest / 5:
        raise ValueError(
            f"{where}: dt must be <= {shortest / 5:g} (a fifth of the shortest time "
            f"constant, {shortest:g}), got {dt:g}"
        )
    return dt


def array_of_shape(where: str, name: str, value, ndim: int) -> np.ndarray:
    """``value`` as a float64 array with ``ndim`` dimensions and finite entries."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != ndim:
        raise ValueError(
            f"{where}: {name} must have {ndim} dimension(s), got shape {tuple(array.shape)}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{where}: {name} must hold finite numbers only")
    return array
