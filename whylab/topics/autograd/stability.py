"""Three ways to compute the cross-entropy of logits, and an exact reference for them.

* **fused**: :func:`whylab.nn.functional.cross_entropy` on the logits (log-softmax
  with the largest logit subtracted, then the target's entry);
* **separate**: whylab's softmax (which subtracts the largest logit), then ``-log``
  of the target's probability;
* **naive**: ``exp(z) / sum(exp(z))`` without subtracting anything, then ``-log``.

The reference evaluates ``log(sum(exp(z))) - z_y`` for the very same logits in
decimal arithmetic with 40 significant digits, so it is exact for our purpose in
float32 and float64 alike.
"""

from __future__ import annotations

import decimal
import math

import numpy as np

import whylab
import whylab.nn.functional as F

FORMS = ("fused", "separate", "naive")
DTYPES = {"float32": (whylab.float32, np.float32), "float64": (whylab.float64, np.float64)}


def losses(form: str, logits: whylab.Tensor, labels: whylab.Tensor) -> whylab.Tensor:
    """Per-sample cross-entropy of ``logits`` (N, K) computed the way ``form`` says."""
    if form == "fused":
        return F.cross_entropy(logits, labels, reduction="none")
    if form == "separate":
        probabilities = whylab.softmax(logits, 1)
    else:
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


def underflow_loss(dtype: np.dtype) -> float:
    """The loss beyond which a probability rounds to zero: -log(smallest positive number)."""
    return -math.log(float(np.finfo(dtype).smallest_subnormal))


def overflow_logit(dtype: np.dtype) -> float:
    """The logit beyond which exp overflows: log(largest finite number)."""
    return math.log(float(np.finfo(dtype).max))


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
