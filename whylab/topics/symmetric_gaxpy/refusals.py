"""The symmetric-gaxpy experiment "what packed storage refuses": inputs it cannot hold.

Packing keeps one triangle and trusts it to stand for the other, so a matrix that is
not symmetric (beyond rounding), not square, or not finite would come out silently
wrong; and a packed vector of the wrong length, or a ``uplo`` that is neither 'L' nor
'U', would be read from the wrong places. The experiment feeds each to
:mod:`whylab.numerics.symmetric`, checks that it is refused with an error naming the
entry or the bound, and that an asymmetry at the level of rounding (within
``SYMMETRY_RTOL`` of the largest entry) is accepted. Its control packs and multiplies
with code that trusts its input.
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
from whylab.numerics.symmetric import SYMMETRY_RTOL, pack, packed_length, sym_gaxpy, unpack

TRUSTING = "trusting-storage"


def _trusting_pack(A: np.ndarray, uplo: str = "L") -> np.ndarray:
    """The lower triangle column by column, whatever A holds (the order of uplo = 'L')."""
    rows, columns = np.triu_indices(A.shape[0])
    return A[columns, rows]


def _trusting_product(ap: np.ndarray, x: np.ndarray, y=None, uplo: str = "L") -> np.ndarray:
    """y + A x read from the first n(n+1)/2 entries of ap, whatever its length or uplo."""
    n = x.shape[0]
    rows, columns = np.triu_indices(n)
    A = np.zeros((n, n))
    A[columns, rows] = ap[:packed_length(n)]
    A[rows, columns] = ap[:packed_length(n)]
    return (np.zeros(n) if y is None else y) + A @ x


def _refusal(call) -> str:
    """The message of the ValueError ``call()`` raises, or "" when it accepts."""
    try:
        call()
    except ValueError as error:
        return str(error)
    return ""


@experiment(
    name="packed-refusals",
    title=T("What packed storage refuses", "压缩存储拒收什么"),
    description=T(
        "Feeds pack and sym_gaxpy inputs packed storage cannot hold -- an asymmetric, a "
        "non-square and a non-finite matrix, a packed vector one entry short, a y of the "
        "wrong length, an unknown uplo -- and checks that each is refused with an error naming "
        "the entry or the bound, while an asymmetry at the level of rounding is accepted.",
        "把压缩存储无法容纳的输入交给 pack 和 sym_gaxpy：不对称、非方阵、含非有限值的矩阵，"
        "少一个元素的压缩向量，长度不对的 y，未知的 uplo。检查每一种都被拒收，且报错指明了"
        "那个元素或界限；而舍入误差量级的不对称可以接受。",
    ),
    params=[Param("n", "int", 6, T("order n", "阶数 n"), minimum=3, maximum=12, step=1)],
    controls=[
        Control(TRUSTING, T("packing and the product trust their input: one triangle is copied "
                            "and read back without looking at the other",
                            "压缩和乘积都不检查输入：只复制、读回一个三角，不看另一个三角"),
                breaks=("asymmetry-refused", "matrix-shape-refused", "packed-length-checked")),
    ],
)
def packed_refusals(n: int) -> Result:
    trusting = control_active(TRUSTING)
    store = _trusting_pack if trusting else pack
    product = _trusting_product if trusting else sym_gaxpy
    A = np.add.outer(np.arange(n, dtype=float), np.arange(n, dtype=float)) + 1.0  # symmetric
    largest = float(np.max(np.abs(A)))
    asymmetric = A.copy()
    asymmetric[n - 1, 0] += 0.5
    rounding = A.copy()
    rounding[n - 1, 0] += 0.5 * SYMMETRY_RTOL * largest
    # The bound is relative: scaled down 1000-fold, an asymmetry of twice rtol · max|A| (far
    # below rtol itself) is still refused.
    small = A / 1000.0
    small[n - 1, 0] += 2.0 * SYMMETRY_RTOL * largest / 1000.0
    skew = _refusal(lambda: store(asymmetric, uplo="L"))
    rounding_answer = _refusal(lambda: store(rounding))
    small_skew = _refusal(lambda: store(small))
    zero_answer = _refusal(lambda: store(np.zeros((n, n))))  # max|A| = 0: the bound is 0
    skew_named = (f"|A[0, {n - 1}] - A[{n - 1}, 0]| = 0.5" in skew and not rounding_answer
                  and "not symmetric" in small_skew and not zero_answer)

    infinite = A.copy()
    infinite[1, 2] = infinite[2, 1] = np.inf
    wide = _refusal(lambda: store(np.ones((n, n + 1))))
    not_finite = _refusal(lambda: store(infinite))
    shape_named = (f"square matrix, got shape ({n}, {n + 1})" in wide
                   and "A[1, 2] = inf" in not_finite)

    x = np.ones(n)
    ap = store(A)
    short = _refusal(lambda: product(ap[:-1], x))
    long_y = _refusal(lambda: product(ap, x, np.ones(n + 1)))
    unknown = _refusal(lambda: product(ap, x, y=None, uplo="X"))
    negative_order = "" if trusting else _refusal(lambda: unpack(ap, -1))
    fractional_order = "" if trusting else _refusal(lambda: unpack(ap, 2.5))
    empty_ok = trusting or unpack(np.zeros(0), 0).shape == (0, 0)
    lengths_named = (f"n(n+1)/2 = {packed_length(n)} entries for n = {n}, got shape "
                     f"({packed_length(n) - 1},)" in short
                     and f"length n = {n}, got shape ({n + 1},)" in long_y
                     and "got 'X'" in unknown and "got -1" in negative_order
                     and "got 2.5" in fractional_order and empty_ok)

    def shown(message: str) -> T:
        """The refusal quoted as the code raised it (its words are the program's, in English)."""
        return T(f"“{message}”", f"“{message}”") if message else T("accepted", "被接受")

    checks = [
        Check(T(f"A matrix off symmetry by 0.5 at A[{n - 1}, 0] is refused by name; one off by "
                "half the rounding bound (rtol · max|A|) is packed, and so is the zero matrix; the "
                "bound is relative (A/1000 off by twice it is refused)",
                f"A[{n - 1}, 0] 处偏离对称 0.5 的矩阵被拒收且被点名；只偏离舍入界限"
                "（rtol · max|A|）一半的矩阵照常压缩，零矩阵也一样；界限是相对的"
                "（A/1000 偏离它的两倍就被拒收）"),
              skew_named, shown(skew),
              T(f"an error naming |A[0, {n - 1}] - A[{n - 1}, 0]| = 0.5; the rounding-level one "
                "packed", f"点名 |A[0, {n - 1}] - A[{n - 1}, 0]| = 0.5 的报错；"
                "舍入量级的那个照常压缩"),
              id="asymmetry-refused"),
        Check(T("A non-square and a non-finite matrix are refused, naming the shape and the entry",
                "非方阵和含非有限值的矩阵都被拒收，报错指明形状和那个元素"),
              shape_named, shown(f"{wide} / {not_finite}" if wide or not_finite else ""),
              T(f"errors naming shape ({n}, {n + 1}) and A[1, 2] = inf",
                f"指明形状 ({n}, {n + 1}) 与 A[1, 2] = inf 的报错"),
              id="matrix-shape-refused"),
        Check(T("sym_gaxpy refuses a packed vector one entry short, a y of length n + 1 and "
                "uplo 'X', and unpack the orders n = −1 and 2.5 (n = 0 is the empty matrix), "
                "naming the length or the value",
                "sym_gaxpy 拒收少一个元素的压缩向量、长度为 n + 1 的 y 和 uplo 'X'，"
                "unpack 拒收阶数 n = −1 与 2.5（n = 0 是空矩阵），报错指明长度或取值"),
              lengths_named,
              shown(" / ".join(m for m in (short, long_y, unknown, negative_order,
                                           fractional_order) if m)),
              T(f"errors naming n(n+1)/2 = {packed_length(n)}, n = {n} and 'X'",
                f"指明 n(n+1)/2 = {packed_length(n)}、n = {n} 与 'X' 的报错"),
              id="packed-length-checked"),
    ]
    table = Table(
        T("What was fed, and the answer", "输入了什么，得到什么回答"),
        [T("input", "输入"), T("answer", "回答")],
        [[T(f"A[{n - 1}, 0] off by 0.5", f"A[{n - 1}, 0] 偏离 0.5"), shown(skew)],
         [T("A[n − 1, 0] off by rtol · max|A| / 2", "A[n − 1, 0] 偏离 相对容差 · max|A| / 2"),
          shown(rounding_answer)],
         [T(f"a {n} × {n + 1} matrix", f"{n} × {n + 1} 矩阵"), shown(wide)],
         [T("A[1, 2] = A[2, 1] = ∞", "A[1, 2] = A[2, 1] = ∞"), shown(not_finite)],
         [T("ap one entry short", "少一个元素的 ap"), shown(short)],
         [T(f"y of length {n + 1}", f"长度为 {n + 1} 的 y"), shown(long_y)],
         [T("uplo = 'X'", "uplo = 'X'"), shown(unknown)],
         [T("A/1000 off by 2 · rtol · max|A|", "A/1000 偏离 2 · 相对容差 · max|A|"),
          shown(small_skew)],
         [T("the zero matrix", "零矩阵"), shown(zero_answer)],
         [T("unpack with n = −1", "用 n = −1 解包"), shown(negative_order)],
         [T("unpack with n = 2.5", "用 n = 2.5 解包"), shown(fractional_order)]],
    )
    return Result(checks=checks, tables=[table])
