"""Precision as a boundary of a timing: what TF32 does to a float32 matrix product.

On Ampere and later GPUs a float32 matmul may run on tensor cores in TF32 (inputs
rounded to 10 mantissa bits, products accumulated in float32); PyTorch decides
with ``torch.backends.cuda.matmul.allow_tf32`` / ``torch.set_float32_matmul_precision``.
A timing that does not say which it measured compares two different computations.
No GPU is needed to see the numerical side: rounding the inputs the way TF32 does
and multiplying in float32 reproduces it in NumPy.
"""

from __future__ import annotations

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)

FLOAT32_MANTISSA_BITS = 23
TF32_MANTISSA_BITS = 10
BFLOAT16_MANTISSA_BITS = 7
TF32_UNIT_ROUNDOFF = 2.0 ** -(TF32_MANTISSA_BITS + 1)


def round_mantissa(values: np.ndarray, mantissa_bits: int) -> np.ndarray:
    """float32 ``values`` rounded to nearest (ties to even) with ``mantissa_bits`` kept."""
    drop = FLOAT32_MANTISSA_BITS - mantissa_bits
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    if drop == 0:
        return bits.view(np.float32).copy()
    half = np.uint32((1 << (drop - 1)) - 1)
    odd = (bits >> np.uint32(drop)) & np.uint32(1)
    mask = np.uint32(~((1 << drop) - 1) & 0xFFFFFFFF)
    return ((bits + half + odd) & mask).view(np.float32)


@experiment(
    name="tf32-precision",
    metrics=[
        Metric("fp32_error", T("FP32 relative error", "FP32 相对误差")),
        Metric("tf32_error", T("TF32 relative error", "TF32 相对误差")),
    ],
    title=T("FP32 or TF32: the same matmul, two answers",
            "FP32 还是 TF32：同一个矩阵乘法，两个答案"),
    description=T(
        "Multiplies two random float32 matrices as float32 and as TF32 (inputs rounded to 10 "
        "mantissa bits, accumulated in float32) and measures each against a float64 product.",
        "把两个随机 float32 矩阵分别按 float32 和按 TF32（输入舍入到 10 位尾数、以 float32 累加）"
        "相乘，各自与 float64 的乘积比较。",
    ),
    params=[
        Param("n", "int", 64, T("matrix size n", "矩阵阶数 n"), minimum=8, maximum=256),
        Param("k", "int", 256, T("inner dimension k", "内维 k"), minimum=16, maximum=1024),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("no-tf32-rounding", T("the inputs are not rounded: plain FP32 is run twice",
                                      "输入没有舍入：其实跑了两遍普通 FP32"),
                breaks=("tf32-error-scale", "tf32-differs-from-fp32")),
        Control("bfloat16-rounding", T("the inputs are rounded to bfloat16's 7 bits instead",
                                       "输入被舍入成 bfloat16 的 7 位尾数"),
                breaks=("tf32-error-scale",)),
    ],
)
def tf32_precision(n, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bits = TF32_MANTISSA_BITS
    if control_active("no-tf32-rounding"):
        bits = FLOAT32_MANTISSA_BITS
    elif control_active("bfloat16-rounding"):
        bits = BFLOAT16_MANTISSA_BITS
    scale = np.max(np.abs(exact))
    fp32_error = float(np.max(np.abs(a @ b - exact)) / scale)
    tf32_error = float(np.max(np.abs(round_mantissa(a, bits) @ round_mantissa(b, bits) - exact))
                       / scale)
    low, high = TF32_UNIT_ROUNDOFF / 8, 2 * TF32_UNIT_ROUNDOFF
    checks = [
        Check(T("TF32's error is on the scale of its unit roundoff 2⁻¹¹",
                "TF32 的误差在它的单位舍入 2⁻¹¹ 这一量级"),
              low <= tf32_error <= high, f"{tf32_error:.1e}", f"{low:.1e} … {high:.1e}",
              id="tf32-error-scale"),
        Check(T("TF32 differs from FP32 by more than 100×", "TF32 与 FP32 的误差相差 100 倍以上"),
              tf32_error >= 100 * fp32_error, f"{tf32_error / fp32_error:.0f}×", "≥ 100×",
              id="tf32-differs-from-fp32"),
    ]
    table = Table(T("Relative error against float64", "相对 float64 的误差"),
                  [T("precision", "精度"), T("max |error| / max |C|", "max |误差| / max |C|")],
                  [["FP32", f"{fp32_error:.2e}"], ["TF32", f"{tf32_error:.2e}"]])
    return Result(checks=checks, tables=[table],
                  metrics={"fp32_error": fp32_error, "tf32_error": tf32_error})
