"""Comparisons the autograd experiments share: errors, agreement checks, finite differences.

They are small and separate so that tests can hand them wrong inputs and see the
checks fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from whylab.explorer.experiment import Check, Text
from whylab.topics.shared import relative_error

Arrays = Mapping[str, np.ndarray]

EXACT_TOLERANCE = 1e-12  # engine vs a formula in float64: only rounding differs
FD_STEP = 1e-6  # central differences in float64: error near 1e-10, far below FD_TOLERANCE
FD_TOLERANCE = 1e-7




def gradients_error(values: Arrays, reference: Arrays) -> float:
    """The relative error of a set of named gradients, taken over all of them at once."""
    if set(values) != set(reference):
        return math.inf
    names = sorted(reference)
    flat = [np.ravel(np.asarray(values[n], dtype=np.float64)) for n in names]
    shapes_match = all(np.shape(values[n]) == np.shape(reference[n]) for n in names)
    if not shapes_match:
        return math.inf
    return relative_error(np.concatenate(flat), np.concatenate([np.ravel(reference[n])
                                                                for n in names]))


def equality_check(name: Text, measured, expected, *, id: str) -> Check:
    """Pass when two exactly comparable values (counts, names, lists) are equal."""
    return Check(name=name, passed=bool(measured == expected), measured=str(measured),
                 expected=str(expected), id=id)


def check_if_reached(reached: bool, name: Text, *, passed: bool, measured: str | Text,
                     expected: str | Text, why: Text, id: str) -> Check:
    """The check when the parameters reach its premise, else "not applicable" with ``why``."""
    if reached:
        return Check(name, passed=passed, measured=measured, expected=expected, id=id)
    return Check.not_applicable(id=id, name=name, expected=expected, why=why)


def central_difference(loss: Callable[[dict[str, np.ndarray]], float], values: Arrays,
                       step: float) -> dict[str, np.ndarray]:
    """(f(x + h e_i) - f(x - h e_i)) / 2h for every entry of every named array."""
    return _difference_quotient(loss, values, step, -step)


def forward_difference(loss: Callable[[dict[str, np.ndarray]], float], values: Arrays,
                       step: float) -> dict[str, np.ndarray]:
    """(f(x + h e_i) - f(x)) / h for every entry: error O(h), not O(h^2)."""
    return _difference_quotient(loss, values, step, 0.0)


def _difference_quotient(loss, values: Arrays, above: float,
                         below: float) -> dict[str, np.ndarray]:
    """(f(x + above e_i) - f(x + below e_i)) / (above - below) for every entry."""
    gradients = {}
    for name, value in values.items():
        gradient = np.zeros_like(value, dtype=np.float64)
        for index in np.ndindex(value.shape):
            shifted = {k: np.array(v, dtype=np.float64) for k, v in values.items()}
            shifted[name][index] = value[index] + above
            upper = loss(shifted)
            shifted[name][index] = value[index] + below
            lower = loss(shifted)
            gradient[index] = (upper - lower) / (above - below)
        gradients[name] = gradient
    return gradients
