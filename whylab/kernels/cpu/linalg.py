"""Matrix products in NumPy: mm, bmm, mv, dot, addmm.

``matmul`` is not here: it is a composite operator that picks one of these by
the ranks of its operands (``matmul_composite`` in ``whylab/dispatch/native/linalg.py``).
"""

from __future__ import annotations

import numpy as np

from whylab.kernels.cpu.common import wrap, wrap_contiguous


def check_same_dtype(op: str, first: str, a, second: str, b) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"{op}: expected {first} and {second} to have the same dtype, but got: "
            f"{a.dtype.name} != {b.dtype.name}"
        )


def check_mm(self, mat2, op: str = "mm") -> None:
    """Shape and dtype checks of ``mm`` and ``addmm`` (shared with the meta kernels)."""
    first = "self" if op == "mm" else "mat1"
    if len(self._sizes) != 2:
        raise RuntimeError(f"{op}: {first} must be a matrix, got a {self.ndim}-D tensor")
    if len(mat2._sizes) != 2:
        raise RuntimeError(f"{op}: mat2 must be a matrix, got a {mat2.ndim}-D tensor")
    if self._sizes[1] != mat2._sizes[0]:
        raise RuntimeError(
            f"{op}: mat1 and mat2 shapes cannot be multiplied "
            f"({self._sizes[0]}x{self._sizes[1]} and {mat2._sizes[0]}x{mat2._sizes[1]})"
        )
    if self.dtype is not mat2.dtype:
        check_same_dtype(op, "mat1", self, "mat2", mat2)


def check_addmm(self, mat1, mat2) -> tuple[int, int]:
    """Checks of ``addmm``; returns the result's shape (self must broadcast to it)."""
    check_mm(mat1, mat2, "addmm")
    shape = (mat1._sizes[0], mat2._sizes[1])
    sizes = tuple(self._sizes)
    fits = len(sizes) <= 2
    for have, want in zip(reversed(sizes), reversed(shape), strict=False):
        fits = fits and have in (1, want)
    if not fits:
        raise RuntimeError(
            f"addmm: self of shape {sizes} cannot be broadcast to the product's shape {shape}"
        )
    if self.dtype is not mat1.dtype:
        check_same_dtype("addmm", "self", self, "mat1", mat1)
    return shape


def check_bmm(self, mat2) -> None:
    if self.ndim != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor, got {self.ndim}-D")
    if mat2.ndim != 3:
        raise RuntimeError(f"bmm: batch2 must be a 3D tensor, got {mat2.ndim}-D")
    b, n, m = self._sizes
    if mat2._sizes[0] != b or mat2._sizes[1] != m:
        raise RuntimeError(
            f"bmm: Expected size for first two dimensions of batch2 tensor to be: [{b}, {m}] "
            f"but got: [{mat2._sizes[0]}, {mat2._sizes[1]}]."
        )
    check_same_dtype("bmm", "batch1", self, "batch2", mat2)


def check_mv(self, vec) -> None:
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"mv: vector + matrix @ vector expected, got {self.ndim}, {vec.ndim}, {vec.ndim}"
        )
    if self._sizes[1] != vec._sizes[0]:
        raise RuntimeError(
            f"mv: size mismatch, got input ({self._sizes[0]}), mat ({self._sizes[0]}x"
            f"{self._sizes[1]}), vec ({vec._sizes[0]})"
        )
    check_same_dtype("mv", "mat", self, "vec", vec)


def check_dot(self, other) -> None:
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"dot: 1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors"
        )
    if self._sizes[0] != other._sizes[0]:
        raise RuntimeError(
            f"dot: inconsistent tensor size, expected tensor [{self._sizes[0]}] and src "
            f"[{other._sizes[0]}] to have the same number of elements, but got "
            f"{self._sizes[0]} and {other._sizes[0]} elements respectively"
        )
    check_same_dtype("dot", "self", self, "other", other)


def mm(self, mat2):
    check_mm(self, mat2)
    # np.dot has less per-call overhead than np.matmul for 2-D operands; both use BLAS.
    # _rows_times returns a fresh row-major array, so it is wrapped as it is.
    return wrap(_rows_times(self._array, mat2._array), self.dtype)


def _rows_times(rows: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """``rows @ mat2``, taken the other way round where OpenBLAS is faster so.

    ``F.linear`` multiplies by ``weight.t()``: ``mat2`` is then the transposed
    view of a row-major (out_features, in_features) matrix. Measured with one
    thread (NumPy 2.4, OpenBLAS): in float32, with a few rows and many output
    features, ``rows @ weight.T`` is up to 2x slower than ``(weight @ rows.T).T``
    (batch 16 through a 784->256 layer: 160 us against 85 us, which is what
    torch's linear takes). Elsewhere (float64, one row, or as many rows as
    output features) the two cost the same or the direct one wins. The product
    taken the other way round comes out column-major and is copied to row-major
    (a few microseconds) so the result is contiguous, as torch's is.
    """
    row_count, columns = rows.shape[0], mat2.shape[1]
    transposed_weight = mat2.strides[0] == mat2.itemsize and mat2.shape[0] > 1
    if rows.dtype == np.float32 and transposed_weight and 8 <= row_count < columns // 2:
        return np.ascontiguousarray(mat2.T.dot(rows.T).T)
    # ndarray.dot is np.dot without its Python-level dispatcher; for two matrices it
    # returns a new row-major array.
    return rows.dot(mat2)


def addmm(self, mat1, mat2, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``; with ``beta == 0`` self is ignored (even NaN)."""
    check_addmm(self, mat1, mat2)
    out = _rows_times(mat1._array, mat2._array)
    if alpha != 1:
        out *= alpha
    if beta != 0:
        out += self._array if beta == 1 else beta * self._array
    return wrap(out, mat1.dtype)


def bmm(self, mat2):
    check_bmm(self, mat2)
    return wrap_contiguous(np.matmul(self._array, mat2._array), self.dtype)


def mv(self, vec):
    check_mv(self, vec)
    return wrap_contiguous(np.matmul(self._array, vec._array), self.dtype)


def dot(self, other):
    check_dot(self, other)
    return wrap_contiguous(np.asarray(np.dot(self._array, other._array)), self.dtype)
