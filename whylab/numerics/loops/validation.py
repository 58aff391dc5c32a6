"""Argument checks shared by the loops, the packing routines and the cache simulator.

Each check raises ``ValueError`` naming the function, the argument and the
bound it broke, so a reader who passes ``order="ijj"`` learns what was wrong.
"""

from __future__ import annotations

import numbers

import numpy as np

LOOP_ORDERS: tuple[str, ...] = ("ijk", "ikj", "jik", "jki", "kij", "kji")
"""The six loop orders of ``C[i, j] += A[i, k] * B[k, j]``, outermost loop first."""


def check_order(function: str, order: object) -> str:
    if order not in LOOP_ORDERS:
        raise ValueError(
            f"{function}: order must be one of {', '.join(LOOP_ORDERS)}, got {order!r}"
        )
    return str(order)


def check_positive_int(function: str, name: str, value: object, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{function}: {name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{function}: {name} must be >= 1, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{function}: {name} must be <= {maximum}, got {value}")
    return int(value)


def as_matrix(function: str, name: str, value: object) -> np.ndarray:
    """``value`` as a C-contiguous float64 matrix (a copy only when it is not one already)."""
    array = np.asarray(value)
    if array.ndim != 2:
        raise ValueError(f"{function}: {name} must be a 2-D matrix, got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.number) or np.iscomplexobj(array):
        raise ValueError(f"{function}: {name} must hold real numbers, got dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.float64)


def product_operands(
    function: str, A: object, B: object, C: object | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (m x p), B (p x n) and C (m x n, zeros when None) checked for C += A B.

    C is updated in place, so it must already be a C-contiguous float64 array.
    """
    A = as_matrix(function, "A", A)
    B = as_matrix(function, "B", B)
    if A.shape[1] != B.shape[0]:
        raise ValueError(
            f"{function}: A is {A.shape[0]}x{A.shape[1]} and B is {B.shape[0]}x{B.shape[1]}; "
            f"A's columns must equal B's rows"
        )
    shape = (A.shape[0], B.shape[1])
    if C is None:
        return A, B, np.zeros(shape)
    if not isinstance(C, np.ndarray) or C.dtype != np.float64 or not C.flags.c_contiguous:
        raise ValueError(f"{function}: C must be a C-contiguous float64 ndarray (it is updated "
                         f"in place)")
    if C.shape != shape:
        raise ValueError(f"{function}: C must have shape {shape}, got {C.shape}")
    return A, B, C
