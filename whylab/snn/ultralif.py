"""UltraLIF: a LIF step made smooth by a soft max-plus operation (Miñoza 2026).

UltraLIF (J. M. A. Miñoza, "UltraLIF: Fully Differentiable Spiking Neural Networks
via Ultradiscretization and Max-Plus Algebra", arXiv:2602.11206) starts from the
max-plus ("tropical") form of a LIF step, in which the membrane keeps the larger
of its decayed self and its input, and relaxes it with the log-sum-exp soft
maximum at a temperature ε:

    LSE_ε(a, b) = ε·ln(e^(a/ε) + e^(b/ε)),
    V(t+1) = LSE_ε(V(t) + ln τ, I(t)),        s(t) = σ(V(t)/ε),

with 0 < τ < 1 the decay per step and σ the logistic function. The same smooth
functions run forward and backward, so there is no surrogate and no mismatch
between what is computed and what is differentiated; ε is a learnable parameter.
The paper's text beyond its abstract was not available to us: these are the
formulas as stated in whylab's issue 21, and the properties checked here follow
from them alone:

* 0 ≤ LSE_ε(a, b) − max(a, b) ≤ ε ln 2 (equality at a = b);
* ∂LSE/∂a = σ((a − b)/ε) and ∂LSE/∂b = 1 − ∂LSE/∂a: both in [0, 1], summing to 1,
  so they are never both zero;
* as ε → 0, LSE_ε → max and σ(V/ε) → H(V), the hard threshold.

Every operation is a whylab op (``logsumexp``, ``sigmoid``), so training runs on
whylab's engine like the surrogate-gradient network.
"""

from __future__ import annotations

import math

import numpy as np

import whylab
from whylab import nn
from whylab.snn import _validate


def soft_max_plus(a, b, eps):
    """LSE_ε(a, b) = ε·ln(e^(a/ε) + e^(b/ε)) on whylab tensors (``eps`` a tensor or float)."""
    return eps * whylab.logsumexp(whylab.stack([a / eps, b / eps]), dim=0)


def lse_numpy(a, b, eps: float) -> np.ndarray:
    """LSE_ε in NumPy, for reference curves."""
    return eps * np.logaddexp(np.asarray(a) / eps, np.asarray(b) / eps)


class UltraLIF(nn.Module):
    """One UltraLIF step ``(current, v) -> (s, v)`` with decay ``tau`` and learnable ε.

    ε is stored as ln ε so that it stays positive while it is trained.
    """

    def __init__(self, tau: float, eps: float = 0.1, learn_eps: bool = True, dtype=None):
        super().__init__()
        tau = float(tau)
        if not 0.0 < tau < 1.0:
            raise ValueError(f"UltraLIF: tau must lie in (0, 1) (a decay per step; got {tau!r})")
        eps = _validate.positive("UltraLIF", "eps", eps)
        self.log_tau = math.log(tau)
        log_eps = whylab.tensor(math.log(eps), dtype=dtype or whylab.get_default_dtype())
        self.log_eps = nn.Parameter(log_eps, requires_grad=learn_eps)

    @property
    def eps(self):
        return self.log_eps.exp()

    def forward(self, current, v):
        eps = self.eps
        v = soft_max_plus(v + self.log_tau, current, eps)
        return whylab.sigmoid(v / eps), v


class UltraLIFClassifier(nn.Module):
    """Inputs -> one UltraLIF layer -> linear read-out of its mean spike output over time.

    ``forward(inputs)`` takes (steps, batch, inputs): the inputs as currents, one row per
    step (a direct code: the same values at every step, as UltraLIF's few-step regime
    uses), and returns (scores (batch, outputs), hidden outputs s (steps, batch, hidden)).
    """

    def __init__(self, inputs: int, hidden: int, outputs: int, *, tau: float,
                 eps: float = 0.1, learn_eps: bool = True, v0: float = -1.0, dtype=None):
        super().__init__()
        self.fc_in = nn.Linear(inputs, hidden, dtype=dtype)
        self.fc_out = nn.Linear(hidden, outputs, dtype=dtype)
        self.neuron = UltraLIF(tau, eps, learn_eps, dtype=dtype)
        self.inputs = inputs
        self.v0 = _validate.finite("UltraLIFClassifier", "v0", v0)

    def forward(self, inputs):
        if inputs.dim() != 3 or inputs.shape[2] != self.inputs:
            raise ValueError(f"UltraLIFClassifier: inputs must have shape (steps, batch, "
                             f"{self.inputs}), got {tuple(inputs.shape)}")
        steps, batch, _ = inputs.shape
        currents = self.fc_in(inputs.reshape(steps * batch, self.inputs))
        currents = currents.reshape(steps, batch, -1)
        v = whylab.full((batch, currents.shape[2]), self.v0, dtype=currents.dtype)
        outputs = []
        for step in range(steps):
            s, v = self.neuron(currents[step], v)
            outputs.append(s)
        hidden = whylab.stack(outputs)
        return self.fc_out(hidden.mean(dim=0)), hidden
