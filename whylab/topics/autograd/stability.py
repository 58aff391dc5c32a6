"""Three ways to compute the cross-entropy of logits, and an exact reference for them.

* **fused**: :func:`whylab.nn.functional.cross_entropy` on the logits (log-softmax
  with the largest logit subtracted, then the target's entry);
* **separate**: whylab's softmax (which subtracts the largest logit), then ``-log``
  of the target's probability;
* **naive**: ``exp(z) / sum(exp(z))`` without subtracting anything, then ``-log``.

The reference evaluates ``log(sum(exp(z))) - z_y`` for the very same logits in
decimal arithmetic with 40 significant digits, so it is exact for our purpose in
float32 and float64 alike.

Negative controls reach in here: ``fused-unshifted`` (the fused form without
subtracting the largest logit), ``fused-is-separate`` (the "fused" form is the
separate one) and ``naive-shifted`` (the naive form subtracts the largest logit
after all).
"""

from __future__ import annotations

import decimal
import math

import numpy as np

import whylab
import whylab.nn.functional as F
from whylab.explorer.experiment import control_active

FORMS = ("fused", "separate", "naive")
DTYPES = {"float32": (whylab.float32, np.float32), "float64": (whylab.float64, np.float64)}


def losses(form: str, logits: whylab.Tensor, labels: whylab.Tensor) -> whylab.Tensor:
    """Per-sample cross-entropy of ``logits`` (N, K) computed the way ``form`` says."""
    if form == "fused" and control_active("fused-unshifted"):
        log_sum_exp = logits.exp().sum(1).log()
        return log_sum_exp - logits.gather(1, labels.unsqueeze(1)).squeeze(1)
    if form == "fused" and not control_active("fused-is-separate"):
        return F.cross_entropy(logits, labels, reduction="none")
    if form in ("fused", "separate"):
        probabilities = whylab.softmax(logits, 1)
    else:
        if control_active("naive-shifted"):
            logits = logits - logits.detach().amax(1, keepdim=True)
        exponentials = logits.exp()
        probabilities = exponentials / exponentials.sum(1, keepdim=True)
    return -probabilities.gather(1, labels.unsqueeze(1)).log().squeeze(1)


def reference_losses(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """log(sum_j exp(z_j)) - z_y per row, in 40-digit decimal arithmetic, rounded to float64."""
    context = decimal.Context(prec=40, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    results = np.empty(logits.shape[0])
    for row, (values, label) in enumerate(zip(logits, labels, strict=True)):
        exact = [decimal.Decimal(float(v)) for v in values]  # float -> Decimal is exact
        largest = max(exact)
        total = sum((context.exp(context.subtract(v, largest)) for v in exact),
                    decimal.Decimal(0))
        log_sum_exp = context.add(largest, context.ln(total))
        results[row] = float(context.subtract(log_sum_exp, exact[int(label)]))
    return results


def loss_errors(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|value - reference| / max(1, |reference|) per sample; a non-finite value is inf."""
    values = np.asarray(values, dtype=np.float64)
    errors = np.abs(values - reference) / np.maximum(1.0, np.abs(reference))
    errors[~np.isfinite(values)] = math.inf
    return errors


def underflow_loss(dtype: np.dtype, flush_to_zero: bool = False) -> float:
    """The loss L beyond which the probability e^-L rounds to zero.

    With subnormal numbers (NumPy's default) that is where e^-L falls below half
    the smallest subnormal, 2^-150 in float32 (L ≈ 103.97); where subnormals are
    flushed to zero, below the smallest normal number, 2^-126 (L ≈ 87.34).
    """
    info = np.finfo(dtype)
    if flush_to_zero:
        return -math.log(float(info.smallest_normal))
    return -math.log(float(info.smallest_subnormal)) + math.log(2.0)


def overflow_logit(dtype: np.dtype) -> float:
    """The logit beyond which exp overflows: log(largest finite number)."""
    return math.log(float(np.finfo(dtype).max))


def beyond_threshold(measure: np.ndarray, threshold: float, margin: float = 1.0) -> int:
    """Samples whose ``measure`` lies clearly past ``threshold`` (by more than ``margin``)."""
    return int(np.count_nonzero(np.asarray(measure) > threshold + margin))


def threshold_violations(values: np.ndarray, measure: np.ndarray, threshold: float,
                         margin: float = 1.0, both_sides: bool = True) -> int:
    """Samples that break "finite below ``threshold``, not finite above it".

    ``measure`` is what the threshold applies to (the exact loss, or the largest
    logit). Samples within ``margin`` of the threshold are not judged: rounding
    decides there. With ``both_sides`` False only the upper side is checked.
    """
    finite = np.isfinite(values)
    broken_above = np.count_nonzero(finite & (measure > threshold + margin))
    broken_below = np.count_nonzero(~finite & (measure < threshold - margin)) if both_sides else 0
    return int(broken_above + broken_below)
