"""The band-gaxpy experiment "what band storage refuses": the inputs it cannot hold.

Band storage keeps p + q + 1 diagonals and nothing else, so three inputs would be
silently wrong if accepted: a nonzero outside the band (storing would drop it), a
bandwidth past the matrix's last diagonal (a row of ``ab`` that no entry fills), and
an ``ab`` with the wrong number of rows (every slot read from the wrong diagonal).
The experiment feeds each to :mod:`whylab.numerics.banded` and checks that it is
refused with an error naming the entry or the bound, and that the legal extremes
(p = q = 0, a diagonal matrix; p = q = n − 1, a full one) are stored. Its control
stores and multiplies with code that trusts its input, as a quick band routine might.
"""

from __future__ import annotations

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.numerics.banded import band_gaxpy, from_band, to_band

UNCHECKED = "unchecked-storage"


def _band_matrix(n: int, p: int, q: int) -> np.ndarray:
    """Entries numbered by position inside the band, zero outside (NumPy's tril/triu)."""
    numbered = np.arange(n * n, dtype=float).reshape(n, n) + 1
    return np.triu(np.tril(numbered, q), -p)


def _trusting_store(A: np.ndarray, p: int, q: int) -> np.ndarray:
    """Band storage with no questions asked: copies diagonals q, ..., −p, whatever A holds."""
    ab = np.zeros((p + q + 1, A.shape[1]))
    for d in range(p + q + 1):
        diagonal = np.diagonal(A, offset=q - d)
        start = max(0, q - d)  # the column of the diagonal's first entry
        ab[d, start:start + diagonal.size] = diagonal
    return ab


def _trusting_product(ab: np.ndarray, q: int, x: np.ndarray) -> np.ndarray:
    """A x for square A read from whatever rows ``ab`` has, row d as diagonal j − i = q − d."""
    n = x.size
    y = np.zeros(n)
    for d in range(ab.shape[0]):
        offset = q - d
        row, column, length = max(0, -offset), max(0, offset), n - abs(offset)
        y[row:row + length] += ab[d, column:column + length] * x[column:column + length]
    return y


def _refusal(call) -> str:
    """The message of the ValueError ``call()`` raises, or "" when it accepts."""
    try:
        call()
    except ValueError as error:
        return str(error)
    return ""


def _stored(call) -> bool:
    try:
        call()
    except ValueError:
        return False
    return True


@experiment(
    name="band-refusals",
    title=T("What band storage refuses", "带状存储拒收什么"),
    description=T(
        "Feeds to_band and band_gaxpy three inputs band storage cannot hold -- a nonzero just "
        "outside the band, a bandwidth of n, and an ab with one row missing -- and checks that "
        "each is refused with an error naming the entry or the bound, while the extremes "
        "p = q = 0 and p = q = n − 1 are stored.",
        "把带状存储无法容纳的三种输入交给 to_band 和 band_gaxpy：带外紧挨着带的一个非零元素、"
        "等于 n 的带宽、少了一行的 ab，检查每一种都被拒收，且报错指明了那个元素或界限；"
        "而 p = q = 0 与 p = q = n − 1 这两个极端情形都能正常存储。",
    ),
    params=[
        Param("n", "int", 8, T("order n", "阶数 n"), minimum=6, maximum=12, step=1),
        Param("p", "int", 2, T("lower bandwidth p", "下带宽 p"), minimum=0, maximum=4, step=1),
        Param("q", "int", 1, T("upper bandwidth q", "上带宽 q"), minimum=0, maximum=4, step=1),
    ],
    controls=[
        Control(UNCHECKED, T("storage and product trust their input: diagonals are copied and "
                             "read without looking at what lies outside them",
                             "存储和乘积都不检查输入：只管复制、读取各条对角线，"
                             "不看对角线之外有什么"),
                breaks=("outside-entry-refused", "bandwidth-limits", "band-rows-checked")),
    ],
)
def band_refusals(n: int, p: int, q: int) -> Result:
    trusting = control_active(UNCHECKED)
    store = _trusting_store if trusting else to_band
    restore = (lambda ab, p, q, m: np.zeros((int(m), ab.shape[1]))) if trusting else from_band
    A = _band_matrix(n, p, q)
    # Two nonzeros outside the band, above and below it (q + 1 <= 5 <= n - 1, and p + 1 too):
    # the error names the first met row by row, A[0, n - 1].
    outside = A.copy()
    outside[p + 1, 0], outside[0, n - 1] = 7.0, 9.0
    dropped = _refusal(lambda: store(outside, p, q))
    not_finite = A.copy()
    not_finite[1, 1], not_finite[2, 2] = np.inf, np.nan
    infinite = _refusal(lambda: store(not_finite, p, q))
    empty = _refusal(lambda: store(np.zeros((0, n)), p, q))
    named = (f"A[0, {n - 1}] = 9" in dropped and "A[1, 1] = inf" in infinite
             and f"got shape (0, {n})" in empty)

    diagonal_ok = _stored(lambda: store(_band_matrix(n, 0, 0), 0, 0))
    full_ok = _stored(lambda: store(_band_matrix(n, n - 1, n - 1), n - 1, n - 1))
    too_low = _refusal(lambda: store(A, n, q))
    too_high = _refusal(lambda: store(A, p, n))
    negative = _refusal(lambda: store(A, -1, q))
    limits = (diagonal_ok and full_ok and f"m - 1 = {n - 1} for {n} rows, got {n}" in too_low
              and f"n - 1 = {n - 1} for {n} columns, got {n}" in too_high
              and "p: bandwidth must be >= 0, got -1" in negative)

    ab = to_band(A, p, q)
    x = np.ones(n)
    multiply = ((lambda ab, y=None, m=None: _trusting_product(ab, q, x)) if trusting else
                (lambda ab, y=None, m=None: band_gaxpy(ab, p, q, x, y, order="diagonal", m=m)))
    short = _refusal(lambda: multiply(ab[1:]))  # the top row (q-th superdiagonal) missing
    no_columns = _refusal(lambda: multiply(np.zeros((p + q + 1, 0))))
    long_y = _refusal(lambda: multiply(ab, np.ones(n + 1), n))
    no_rows = _refusal(lambda: restore(ab, p, q, 0))
    fractional = _refusal(lambda: restore(ab, p, q, 2.5))
    row = np.arange(1.0, n + 1)[None, :]  # a 1-by-n matrix: p = 0, q = n - 1 holds it all
    one_row = np.array_equal(restore(store(row, 0, n - 1), 0, n - 1, 1), row)
    rows_named = (f"p + q + 1 = {p + q + 1} rows for p = {p}, q = {q}, got {p + q}" in short
                  and f"got shape ({p + q + 1}, 0)" in no_columns
                  and f"length {n}, got shape ({n + 1},)" in long_y
                  and "got 0" in no_rows and "got 2.5" in fractional and one_row)

    def quoted(message: str, otherwise: str) -> str:
        return f"“{message}”" if message else otherwise

    def shown(message: str) -> T:
        """The refusal quoted as the code raised it (its words are the program's, in English)."""
        return T(f"“{message}”", f"“{message}”") if message else T("accepted", "被接受")

    checks = [
        Check(T(f"Entries band storage cannot hold are refused by name: of two nonzeros outside "
                f"the band the first met row by row, A[0, {n - 1}]; an infinite entry; an empty "
                "matrix",
                "带状存储容纳不了的输入被拒收并被点名：带外的两个非零元素中按行最先遇到的 "
                f"A[0, {n - 1}]、一个无穷大元素、一个空矩阵"),
              named, shown(" / ".join(m for m in (dropped, infinite, empty) if m)),
              T(f"errors naming A[0, {n - 1}] = 9, A[1, 1] = inf and shape (0, {n})",
                f"点名 A[0, {n - 1}] = 9、A[1, 1] = inf 与形状 (0, {n}) 的报错"),
              id="outside-entry-refused"),
        Check(T(f"Bandwidths 0 and n − 1 = {n - 1} are stored; n = {n} is refused, naming the "
                "bound n − 1, and −1 naming 0", f"带宽 0 与 n − 1 = {n - 1} 都能存储；带宽 "
                f"n = {n} 被拒收，报错指明上限 n − 1；−1 被拒收，报错指明下限 0"),
              limits,
              T(f"p = q = 0: {'stored' if diagonal_ok else 'refused'}; p = q = {n - 1}: "
                f"{'stored' if full_ok else 'refused'}; p = {n}: {quoted(too_low, 'accepted')}; "
                f"p = −1: {quoted(negative, 'accepted')}",
                f"p = q = 0：{'已存储' if diagonal_ok else '被拒收'}；p = q = {n - 1}："
                f"{'已存储' if full_ok else '被拒收'}；p = {n}：{quoted(too_low, '被接受')}；"
                f"p = −1：{quoted(negative, '被接受')}"),
              T(f"stored, stored, errors naming m − 1 = {n - 1} and >= 0",
                f"已存储、已存储、指明 m − 1 = {n - 1} 与 >= 0 的报错"),
              id="bandwidth-limits"),
        Check(T(f"band_gaxpy refuses an ab with p + q = {p + q} rows or no columns and a y of "
                "length n + 1; from_band refuses m = 0 and m = 2.5 and rebuilds a 1-row matrix",
                f"band_gaxpy 拒收只有 p + q = {p + q} 行或没有列的 ab、长度为 n + 1 的 y；"
                "from_band 拒收 m = 0 与 m = 2.5，并能还原只有一行的矩阵"),
              rows_named, shown(" / ".join(m for m in (short, no_columns, long_y, no_rows,
                                                       fractional) if m)),
              T(f"errors naming p + q + 1 = {p + q + 1}, shape ({p + q + 1}, 0), length {n}, "
                "m = 0 and 2.5; the row rebuilt",
                f"指明 p + q + 1 = {p + q + 1}、形状 ({p + q + 1}, 0)、长度 {n}、m = 0 与 2.5 "
                "的报错；那一行被还原"),
              id="band-rows-checked"),
    ]
    table = Table(
        T("What was fed, and the answer", "输入了什么，得到什么回答"),
        [T("input", "输入"), T("answer", "回答")],
        [[T(f"A[{p + 1}, 0] = 7 and A[0, {n - 1}] = 9 outside the band",
            f"带外的 A[{p + 1}, 0] = 7 与 A[0, {n - 1}] = 9"), shown(dropped)],
         [T("A[1, 1] = ∞, A[2, 2] = NaN", "A[1, 1] = ∞，A[2, 2] = NaN"), shown(infinite)],
         [T(f"a 0 × {n} matrix", f"0 × {n} 矩阵"), shown(empty)],
         [T(f"lower bandwidth p = {n}", f"下带宽 p = {n}"), shown(too_low)],
         [T(f"upper bandwidth q = {n}", f"上带宽 q = {n}"), shown(too_high)],
         [T("lower bandwidth p = −1", "下带宽 p = −1"), shown(negative)],
         [T(f"ab with {p + q} rows", f"只有 {p + q} 行的 ab"), shown(short)],
         [T("ab with no columns", "没有列的 ab"), shown(no_columns)],
         [T(f"y of length {n + 1} for m = {n}", f"m = {n} 时长度为 {n + 1} 的 y"), shown(long_y)],
         [T("from_band with m = 0", "m = 0 时的 from_band"), shown(no_rows)],
         [T("from_band with m = 2.5", "m = 2.5 时的 from_band"), shown(fractional)]],
    )
    return Result(checks=checks, tables=[table])
