"""The BLAS call under ``np.dot`` for two 2-D float64 operands: derived, then replayed.

whylab's CPU ``mm`` kernel hands its operands' NumPy arrays to ``np.dot``, and
NumPy's ``cblas_matrixproduct`` (numpy/_core/src/common/cblasfuncs.c) decides
the BLAS call from their shapes and strides. :func:`derive_call` restates those
rules (written from the C source, not calling it):

* an operand whose strides are negative, not a multiple of the item size, or 0
  on a dimension longer than 1 is copied first ("bad strides");
* a (1, k) row or an (n, 1) column counts as a vector: the product is a
  matrix-vector ``dgemv`` (or a dot product when both are vectors);
* for two matrices, an operand that is neither C- nor Fortran-contiguous is
  copied (C order); a Fortran-contiguous one is passed as it is with the
  transpose flag ``T``, its leading dimension its row count; a C-contiguous one
  gets ``N`` and its column count;
* a matrix times its own transpose (same first byte, swapped shapes and
  strides, one ``N`` and one ``T``) calls ``dsyrk`` and mirrors the triangle.

NumPy logs none of this, so the derivation is checked by *replaying* it:
:func:`replay` calls the same routine in the same OpenBLAS library NumPy loaded
(the entry point NumPy's extension module resolves, matched to
threadpoolctl's record), through ctypes, on the operands' own memory, with
the derived flags and leading dimensions. Only the right flags and leading
dimensions read the operands' bytes as the right matrices.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, replace

import numpy as np

ITEMSIZE = 8  # float64
ROW_MAJOR, COL_MAJOR, NO_TRANS, TRANS, UPPER = 101, 102, 111, 112, 121


@dataclass(frozen=True)
class BlasCall:
    """One CBLAS call in row-major order, as NumPy would make it."""

    routine: str  # "dgemm", "dgemv", "dsyrk" or "ddot"
    trans_a: str  # "N" or "T" (dgemv: the matrix's flag; dsyrk: the one operand's)
    trans_b: str  # "N", "T" or "" where the routine has one matrix
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    copied: tuple[str, ...]  # operands NumPy copies before the call ("a", "b")
    order: str = "RowMajor"  # dgemv passes a Fortran-ordered matrix as ColMajor
    increment: int = 1  # dgemv: the vector's stride in elements

    def signature(self) -> str:
        """The call as a reader would write it: ``cblas_dgemm(RowMajor, N, T, m=…, …)``."""
        if self.routine == "dgemm":
            return (f"cblas_dgemm(RowMajor, {self.trans_a}, {self.trans_b}, m={self.m}, "
                    f"n={self.n}, k={self.k}, lda={self.lda}, ldb={self.ldb}, ldc={self.n})")
        if self.routine == "dsyrk":
            return (f"cblas_dsyrk(RowMajor, Upper, {self.trans_a}, n={self.n}, k={self.k}, "
                    f"lda={self.lda}, ldc={self.n})")
        if self.routine == "dgemv":
            return (f"cblas_dgemv({self.order}, {self.trans_a}, m={self.m}, n={self.n}, "
                    f"lda={self.lda}, incx={self.increment})")
        return f"ddot(n={self.k})"


def bad_strides(array: np.ndarray) -> bool:
    """NumPy's ``_bad_strides``: misaligned, negative or non-itemsize strides, or a 0 stride
    on a dimension longer than 1."""
    if array.__array_interface__["data"][0] % array.itemsize:
        return True
    return any(stride < 0 or stride % array.itemsize or (stride == 0 and size > 1)
               for stride, size in zip(array.strides, array.shape, strict=True))


def is_vector(array: np.ndarray) -> bool:
    """A (1, k) row or an (n, 1) column: ``_select_matrix_shape`` says _row or _column."""
    rows, cols = array.shape
    return rows == 1 or cols == 1


def matrix_flag(array: np.ndarray) -> tuple[str, int, bool]:
    """(flag, leading dimension, copied) for one matrix operand of dgemm."""
    rows, cols = array.shape
    c_order, f_order = array.flags.c_contiguous, array.flags.f_contiguous
    if not c_order and not f_order:
        return "N", max(cols, 1), True  # PyArray_Copy gives a C-ordered copy
    if f_order:
        return "T", max(rows, 1), False
    return "N", max(cols, 1), False


def same_matrix_transposed(a: np.ndarray, b: np.ndarray, flag_a: str, flag_b: str) -> bool:
    """The syrk test: b is a's transpose over the same bytes, one passed N and one T."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape[::-1] and a.strides == b.strides[::-1]
            and flag_a != flag_b)


def derive_call(a: np.ndarray, b: np.ndarray) -> BlasCall:
    """The call ``np.dot(a, b)`` makes for 2-D float64 ``a`` (m×k) and ``b`` (k×n)."""
    first_copies = tuple(name for name, x in (("a", a), ("b", b)) if bad_strides(x))
    if "a" in first_copies:
        a = np.ascontiguousarray(a)
    if "b" in first_copies:
        b = np.ascontiguousarray(b)
    call = vector_call(a, b) if is_vector(a) or is_vector(b) else matrix_call(a, b)
    copied = tuple(name for name in ("a", "b") if name in first_copies + call.copied)
    return replace(call, copied=copied)


def matrix_call(a: np.ndarray, b: np.ndarray) -> BlasCall:
    """Two matrices: dgemm, or dsyrk for a matrix times its own transpose."""
    m, k = a.shape
    n = b.shape[1]
    flag_a, lda, copy_a = matrix_flag(a)
    flag_b, ldb, copy_b = matrix_flag(b)
    copied = tuple(name for name, copy in (("a", copy_a), ("b", copy_b)) if copy)
    if not copied and same_matrix_transposed(a, b, flag_a, flag_b):
        return BlasCall("dsyrk", flag_a, "", m, n, k, lda if flag_a == "N" else ldb, 0, ())
    return BlasCall("dgemm", flag_a, flag_b, m, n, k, lda, ldb, copied)


def vector_call(a: np.ndarray, b: np.ndarray) -> BlasCall:
    """Where one operand is a row or a column: dgemv with the matrix, or a dot product.

    A matrix times a column passes the matrix with ``N``; a row times a matrix passes
    the matrix with ``T``. A matrix that is not one segment is copied (C order); a
    C-ordered one goes as RowMajor with lda = its columns, a Fortran-ordered one as
    ColMajor with lda = its rows. m and n are the matrix's own rows and columns.
    """
    if is_vector(a) and is_vector(b):
        return BlasCall("ddot", "", "", a.shape[0], b.shape[1], a.shape[1], 0, 0, ())
    if not is_vector(a):
        matrix, name, flag = a, "a", "N"
        step = b.strides[0]
    else:
        matrix, name, flag = b, "b", "T"
        step = a.strides[1]
    copied = (name,) if not (matrix.flags.c_contiguous or matrix.flags.f_contiguous) else ()
    rows, cols = matrix.shape
    c_order = bool(copied) or matrix.flags.c_contiguous
    order, lda = ("RowMajor", max(cols, 1)) if c_order else ("ColMajor", max(rows, 1))
    return BlasCall("dgemv", flag, "", rows, cols, a.shape[1], lda, 0, copied, order,
                    step // ITEMSIZE)


# ---------------------------------------------------------------- the library NumPy loaded


@dataclass(frozen=True)
class BlasLibrary:
    """threadpoolctl's record of the BLAS NumPy loaded, and its CBLAS entry points."""

    info: dict
    handle: ctypes.CDLL
    symbol_prefix: str
    symbol_suffix: str

    @property
    def int_type(self):
        """ILP64 builds (symbols ending ``64_``) take 64-bit integers."""
        return ctypes.c_int64 if self.symbol_suffix == "64_" else ctypes.c_int32

    def function(self, routine: str):
        return getattr(self.handle, f"{self.symbol_prefix}cblas_{routine}{self.symbol_suffix}")


def numpy_blas() -> BlasLibrary | None:
    """The BLAS library NumPy's own extension calls, or None if none is found.

    A process can hold several BLAS builds at once (SciPy, SCS and NumPy each
    bundle their own OpenBLAS), and threadpoolctl lists them in load order, so
    the first one listed need not be NumPy's. ``dlsym`` on the handle of NumPy's
    extension module searches that module's own dependencies, so the CBLAS entry
    point it finds is the one ``np.dot`` calls; the threadpoolctl record is the
    library that exports that same address.
    """
    import numpy._core._multiarray_umath as multiarray
    from threadpoolctl import threadpool_info

    numpy_handle = ctypes.CDLL(multiarray.__file__)
    found = _cblas_naming(numpy_handle)
    if found is None:
        return None
    prefix, suffix = found
    entry = _address(numpy_handle, f"{prefix}cblas_dgemm{suffix}")
    for info in threadpool_info():
        if info.get("user_api") != "blas":
            continue
        handle = ctypes.CDLL(info["filepath"])
        name = f"{prefix}cblas_dgemm{suffix}"
        if hasattr(handle, name) and _address(handle, name) == entry:
            return BlasLibrary(info, handle, prefix, suffix)
    return None


def _cblas_naming(handle: ctypes.CDLL) -> tuple[str, str] | None:
    """The (prefix, suffix) around ``cblas_dgemm`` that ``handle`` resolves."""
    for prefix in ("scipy_", ""):
        for suffix in ("64_", ""):
            if hasattr(handle, f"{prefix}cblas_dgemm{suffix}"):
                return prefix, suffix
    return None


def _address(handle: ctypes.CDLL, name: str) -> int:
    return ctypes.cast(getattr(handle, name), ctypes.c_void_p).value


def pointer(array: np.ndarray):
    return ctypes.c_void_p(array.__array_interface__["data"][0])


def replay(call: BlasCall, a: np.ndarray, b: np.ndarray, library: BlasLibrary) -> np.ndarray:
    """Run ``call`` through ``library`` on a's and b's memory (NumPy's copies where it
    copies) into a fresh C-ordered output."""
    integer, double = library.int_type, ctypes.c_double
    a = np.ascontiguousarray(a) if "a" in call.copied else a
    b = np.ascontiguousarray(b) if "b" in call.copied else b
    flags = {"N": NO_TRANS, "T": TRANS}
    out = np.zeros((call.m, call.n))
    if call.routine == "dgemm":
        library.function("dgemm")(
            integer(ROW_MAJOR), integer(flags[call.trans_a]), integer(flags[call.trans_b]),
            integer(call.m), integer(call.n), integer(call.k), double(1.0),
            pointer(a), integer(call.lda), pointer(b), integer(call.ldb), double(0.0),
            pointer(out), integer(max(call.n, 1)))
    elif call.routine == "dsyrk":
        operand = a if call.trans_a == "N" else b
        library.function("dsyrk")(
            integer(ROW_MAJOR), integer(UPPER), integer(flags[call.trans_a]),
            integer(call.n), integer(call.k), double(1.0), pointer(operand),
            integer(call.lda), double(0.0), pointer(out), integer(max(call.n, 1)))
        upper = np.triu(out)
        out = upper + np.triu(out, 1).T
    elif call.routine == "dgemv":
        matrix, vector = (a, b) if call.trans_a == "N" else (b, a)
        out = np.zeros(a.shape[0] * b.shape[1])
        library.function("dgemv")(
            integer(ROW_MAJOR if call.order == "RowMajor" else COL_MAJOR),
            integer(flags[call.trans_a]), integer(call.m), integer(call.n), double(1.0),
            pointer(matrix), integer(call.lda), pointer(vector), integer(call.increment),
            double(0.0), pointer(out), integer(1))
        out = out.reshape(a.shape[0], b.shape[1])
    else:
        out = np.dot(a, b)  # a dot product: NumPy's own dot loop, no BLAS call to replay
    return out
