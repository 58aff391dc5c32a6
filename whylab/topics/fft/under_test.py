"""The transforms the fft topic's experiments run, with its negative controls switched in.

Every experiment takes its FFT plan, its recursive FFT and its reference DFT
from here, so a negative control perturbs the very code whose checks the page
shows passing: a twiddle factor off by one, a missing bit reversal, butterflies
skipped, a stage left out, a recursion that swaps its halves, a "DFT" that is
really a fast transform. :func:`control_active` is False on every ordinary run.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from whylab.explorer.experiment import Control, T, control_active
from whylab.numerics.fft import OperationCount, Plan, dft, fft_recursive, plan_fft

TWIDDLE_OFF_BY_ONE = "twiddle-off-by-one"
NO_BIT_REVERSAL = "no-bit-reversal"
ONLY_BIT_REVERSAL = "only-bit-reversal"
LAST_STAGE_MISSING = "last-stage-missing"
RECURSION_SWAPS_HALVES = "recursion-swaps-halves"
DFT_BY_FFT = "dft-by-fft"

LABELS = {
    TWIDDLE_OFF_BY_ONE: T("every twiddle factor is off by one: w⁽ᵏ⁺¹⁾ instead of wᵏ",
                          "每个旋转因子都错一位：用了 w⁽ᵏ⁺¹⁾ 而不是 wᵏ"),
    NO_BIT_REVERSAL: T("the input is not reordered by bit reversal before the stages",
                       "进入各级蝶形运算之前，没有按位反转重排输入"),
    ONLY_BIT_REVERSAL: T("the transform only reorders by bit reversal and runs no butterflies",
                         "变换只做位反转重排，一个蝶形运算也不做"),
    LAST_STAGE_MISSING: T("the last stage of butterflies is left out",
                          "漏掉了最后一级蝶形运算"),
    RECURSION_SWAPS_HALVES: T("the recursion takes the odd samples for the even ones and back",
                              "递归把奇数号样本当成偶数号样本（反之亦然）"),
    DFT_BY_FFT: T("the direct sum is replaced by a fast transform (numpy.fft), "
                  "so no n² products are done",
                  "直接求和被换成了快速变换（numpy.fft），根本没有做 n² 次乘法"),
}


def control(name: str, breaks: tuple[str, ...], **params) -> Control:
    """The control ``name`` with its label, declared to break ``breaks``."""
    return Control(name, LABELS[name], breaks=breaks, params=params)


def plan_under_test(n: int) -> Plan:
    """The radix-2 plan for length n, perturbed by whichever control is on."""
    plan = plan_fft(n)
    if control_active(TWIDDLE_OFF_BY_ONE):
        stages = tuple(
            dataclasses.replace(stage, twiddle_exponent=stage.twiddle_exponent + 1,
                                twiddles=np.exp(-2j * np.pi * (stage.twiddle_exponent + 1)
                                                / stage.span))
            for stage in plan.stages)
        plan = dataclasses.replace(plan, stages=stages)
    if control_active(NO_BIT_REVERSAL):
        plan = dataclasses.replace(plan, order=np.arange(n))
    if control_active(ONLY_BIT_REVERSAL):
        plan = dataclasses.replace(plan, stages=())
    if control_active(LAST_STAGE_MISSING):
        plan = dataclasses.replace(plan, stages=plan.stages[:-1])
    return plan


def recursive_under_test(x: np.ndarray) -> np.ndarray:
    """:func:`fft_recursive` of ``x``; under its control, with even and odd samples swapped."""
    if control_active(RECURSION_SWAPS_HALVES) and x.shape[0] > 1:
        x = x.reshape(-1, 2)[:, ::-1].ravel()
    return fft_recursive(x)


def reference_dft(x: np.ndarray, count: OperationCount | None = None) -> np.ndarray:
    """The direct O(n²) sum (:func:`dft`); under its control, numpy.fft counting nothing."""
    if control_active(DFT_BY_FFT):
        return np.fft.fft(x)
    return dft(x, count)
