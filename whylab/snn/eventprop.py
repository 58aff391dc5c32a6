"""EventProp (Wunderlich & Pehle 2021): exact gradients of spike-time losses, event by event.

A feed-forward network of current-based LIF neurons (no refractory period),

    τ_m dV/dt = −V + I,    τ_s dI/dt = −I,

where a presynaptic spike of neuron i at time t adds W[j, i] to I_j, and V_j
reaching ϑ is a spike of neuron j, after which V_j = 0. Between events both
equations are linear, so the state moves by the exact propagator
Φ(Δ) = [[e^(−Δ/τ_m), k(Δ)], [0, e^(−Δ/τ_s)]], k(Δ) = τ_s/(τ_s − τ_m)·(e^(−Δ/τ_s) − e^(−Δ/τ_m)),
and a threshold crossing is found inside one interval where V is monotone (V is a
sum of two exponentials: one extremum at most), by bisection and Newton's method
to rounding. No time grid enters the forward pass or the gradient.

The gradient is the adjoint method with jumps. The adjoint (λ_V, λ_I) of each
neuron runs backward from the end through the same events: between them
λ(t) = Φ(Δ)ᵀ λ(t + Δ); at an input spike from neuron i at t_k it adds
∂L/∂W[j, i] += λ_I,j(t_k⁺) and reports the loss's sensitivity to that spike time,
∂L/∂t_k = Σ_j W[j, i]·(λ_I,j/τ_s − λ_V,j/τ_m); at a neuron's own spike at t_s,
with V̇⁻ = (I − ϑ)/τ_m and V̇⁺ = I/τ_m just before and after it,

    λ_V⁻ = (V̇⁺/V̇⁻)·λ_V⁺ − (∂L/∂t_s)/V̇⁻,

where ∂L/∂t_s holds the loss's own dependence on t_s plus what the next layer
reported for that spike. (This is the jump condition of EventProp, derived here
from the implicit-function theorem at the threshold crossing, in this
parametrisation of the adjoint.) Everything is vectorised over a batch and over
the neurons of a layer; the Python loop runs over events.

The loss on the output layer's first spike times t_k is the one EventProp used
for Yin-Yang: cross-entropy of the scores −t_k/τ₀ plus α·(e^(t_label/τ₁) − 1),
which rewards an early spike of the right neuron. An output neuron that never
spikes counts as spiking at t_max, with no gradient.

τ₀ and τ₁ are times, in the network's unit. :data:`YIN_YANG_LIF` and
:class:`SpikeTimeLoss`'s defaults are both the paper's Yin-Yang constants in ms
(τ₀ = 0.5 ms is a sixtieth of the 30 ms trial). Used with a network whose unit is
ten times longer, τ₀ = 0.5 is an eighth of its window: the softmax over the first
spike times cannot saturate within it, so the cross-entropy keeps pushing every
wrong output later until it falls past t_max, silent, where no gradient brings it
back (94% of the outputs were silent after 3 epochs of that mismatch; see
tests/snn/test_eventprop_training.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whylab.snn import _validate, yinyang

BISECTION_STEPS = 14  # halvings of a crossing's bracket (to ~1e-4 of its length) ...
NEWTON_STEPS = 4  # ... then Newton steps, each squaring the error: to rounding


@dataclass(frozen=True)
class EventLIF:
    """Constants shared by every layer; the defaults are the paper's Yin-Yang ones, in ms
    (times in other units work alike, if the loss's time constants are in that unit too)."""

    tau_mem: float = 20.0
    tau_syn: float = 5.0
    threshold: float = 1.0
    t_max: float = 30.0

    def __post_init__(self) -> None:
        for name in ("tau_mem", "tau_syn", "threshold", "t_max"):
            _validate.positive("EventLIF", name, getattr(self, name))
        if abs(self.tau_mem - self.tau_syn) <= 1e-3 * self.tau_mem:
            raise ValueError(f"EventLIF: tau_syn must differ from tau_mem (got both "
                             f"{self.tau_mem:g}); the propagator divides by their difference")

    def kernel(self, delta):
        """k(Δ): V after Δ from V = 0, I = 1."""
        ts, tm = self.tau_syn, self.tau_mem
        return ts / (ts - tm) * (np.exp(-delta / ts) - np.exp(-delta / tm))

    def propagate(self, v, i, delta):
        """State (V, I) after a time ``delta`` without events."""
        return np.exp(-delta / self.tau_mem) * v + self.kernel(delta) * i, \
            np.exp(-delta / self.tau_syn) * i

    def first_crossing(self, v, i, span):
        """Time from now of the first V = ϑ within ``span`` (inf where none)."""
        ts, tm, theta = self.tau_syn, self.tau_mem, self.threshold
        a = i * ts / (ts - tm)  # V(u) = (v − a)·e^(−u/τm) + a·e^(−u/τs)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = -(v - a) * ts / (a * tm)
            extremum = -np.log(q) / (1.0 / ts - 1.0 / tm)
        inside = (q > 0) & np.isfinite(extremum) & (extremum > 0) & (extremum < span)
        first_end = np.where(inside, extremum, span)
        v_first = self.propagate(v, i, first_end)[0]
        v_span = self.propagate(v, i, span)[0]
        in_first = v_first >= theta
        in_second = ~in_first & inside & (v_span >= theta)
        lo = np.where(in_first, 0.0, first_end)
        hi = np.where(in_first, first_end, span)
        found = in_first | in_second
        result = np.full(np.shape(v), np.inf)
        if not np.any(found):
            return result
        lo, hi, a, v = lo[found], hi[found], a[found], v[found]
        # Bisection narrows the bracket, Newton (kept inside it) finishes to rounding.
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            above = (v - a) * np.exp(-mid / tm) + a * np.exp(-mid / ts) >= theta
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid)
        u = hi
        for _ in range(NEWTON_STEPS):
            decay_m, decay_s = np.exp(-u / tm), np.exp(-u / ts)
            value = (v - a) * decay_m + a * decay_s - theta
            slope = -(v - a) * decay_m / tm - a * decay_s / ts
            with np.errstate(divide="ignore", invalid="ignore"):
                step = np.where(slope != 0, value / slope, 0.0)
            u = np.clip(u - step, lo, hi)
        result[found] = u
        return result


@dataclass
class LayerRun:
    """What a layer's forward pass recorded, per batch, for its backward pass.

    Inputs: ``in_times``/``in_source`` (batch, K), padded with t_max and source −1.
    Spikes: flat arrays of batch index, neuron, time and the current I at the spike.
    """

    in_times: np.ndarray
    in_source: np.ndarray
    batch: np.ndarray
    neuron: np.ndarray
    time: np.ndarray
    current: np.ndarray


def layer_forward(lif: EventLIF, weight: np.ndarray, in_times, in_source) -> LayerRun:
    """Simulate one layer of ``weight.shape[0]`` neurons on its input spikes, exactly."""
    in_times = np.asarray(in_times, dtype=np.float64)
    in_source = np.asarray(in_source, dtype=np.int64)
    batch, events = in_times.shape
    order = np.argsort(in_times, axis=1, kind="stable")
    in_times = np.take_along_axis(in_times, order, 1)
    in_source = np.take_along_axis(in_source, order, 1)
    neurons = weight.shape[0]
    v = np.zeros((batch, neurons))
    i = np.zeros((batch, neurons))
    now = np.zeros(batch)
    records: list[tuple[np.ndarray, ...]] = []
    padded = np.concatenate([np.minimum(in_times, lif.t_max),
                             np.full((batch, 1), lif.t_max)], axis=1)
    for k in range(events + 1):
        end = padded[:, k]
        start = np.repeat(now[:, None], neurons, axis=1)
        span = (end[:, None] - start)
        wait = lif.first_crossing(v, i, np.maximum(span, 0.0))
        b, n = np.nonzero(np.isfinite(wait))
        wait = wait[b, n]
        while b.size:
            i_hit = np.exp(-wait / lif.tau_syn) * i[b, n]
            records.append((b, n, start[b, n] + wait, i_hit))
            v[b, n], i[b, n] = 0.0, i_hit
            start[b, n] += wait
            span[b, n] -= wait
            # Only a neuron that has just spiked can spike again before the next input.
            again = lif.first_crossing(v[b, n], i[b, n], np.maximum(span[b, n], 0.0))
            keep = np.isfinite(again)
            b, n, wait = b[keep], n[keep], again[keep]
        v, i = lif.propagate(v, i, np.maximum(span, 0.0))
        now = end
        if k < events:
            real = (in_source[:, k] >= 0) & (in_times[:, k] < lif.t_max)
            i[real] += weight[:, in_source[real, k]].T
    if records:
        b, n, t, cur = (np.concatenate(parts) for parts in zip(*records, strict=True))
    else:
        b = n = np.zeros(0, np.int64)
        t = cur = np.zeros(0)
    return LayerRun(in_times, in_source, b, n, t, cur)


def spikes_as_inputs(run: LayerRun, batch: int, t_max: float):
    """A layer's spikes as the next layer's padded input (times, sources)."""
    counts = np.bincount(run.batch, minlength=batch)
    width = max(int(counts.max(initial=0)), 1)
    times = np.full((batch, width), t_max)
    source = np.full((batch, width), -1, dtype=np.int64)
    order = np.lexsort((run.time, run.batch))
    slot = np.arange(order.size) - np.repeat(np.cumsum(counts) - counts, counts)
    times[run.batch[order], slot] = run.time[order]
    source[run.batch[order], slot] = run.neuron[order]
    return times, source


def layer_backward(lif: EventLIF, weight: np.ndarray, run: LayerRun, spike_grad: np.ndarray,
                   *, jump: bool = True):
    """Adjoint pass of one layer: (∂L/∂W, ∂L/∂ input spike times), given ∂L/∂t per own spike.

    ``jump=False`` leaves out the jump at the layer's own spikes (a wrong adjoint, for
    negative controls).
    """
    batch, events = run.in_times.shape
    neurons, sources = weight.shape
    # All events of each sample, latest first: inputs (kind 0) and own spikes (kind 1).
    kinds = np.concatenate([np.zeros(batch * events, np.int64), np.ones(run.time.size, np.int64)])
    owners = np.concatenate([np.repeat(np.arange(batch), events), run.batch])
    times = np.concatenate([run.in_times.ravel(), run.time])
    index = np.concatenate([np.arange(batch * events), np.arange(run.time.size)])
    order = np.lexsort((-times, owners))
    counts = np.bincount(owners, minlength=batch)
    width = int(counts.max(initial=0))
    slot = np.arange(order.size) - np.repeat(np.cumsum(counts) - counts, counts)
    grid_kind = np.full((batch, width), -1)
    grid_time = np.zeros((batch, width))
    grid_index = np.zeros((batch, width), np.int64)
    grid_kind[owners[order], slot] = kinds[order]
    grid_time[owners[order], slot] = times[order]
    grid_index[owners[order], slot] = index[order]

    lam_v = np.zeros((batch, neurons))
    lam_i = np.zeros((batch, neurons))
    now = np.full(batch, lif.t_max)
    grad_w = np.zeros_like(weight)
    grad_in = np.zeros(batch * events)
    rows = np.arange(batch)
    flat_source = run.in_source.ravel()
    flat_in_time = run.in_times.ravel()
    for e in range(width):
        kind = grid_kind[:, e]
        live = kind >= 0
        delta = np.where(live, now - grid_time[:, e], 0.0)[:, None]
        lam_v, lam_i = (np.exp(-delta / lif.tau_mem) * lam_v,
                        lif.kernel(delta) * lam_v + np.exp(-delta / lif.tau_syn) * lam_i)
        now = np.where(live, grid_time[:, e], now)
        inputs = (kind == 0)
        if np.any(inputs):
            k = grid_index[inputs, e]
            src = flat_source[k]
            real = (src >= 0) & (flat_in_time[k] < lif.t_max)
            b, k, src = rows[inputs][real], k[real], src[real]
            np.add.at(grad_w.T, src, lam_i[b])
            grad_in[k] = np.einsum("bn,nb->b", lam_i[b] / lif.tau_syn
                                   - lam_v[b] / lif.tau_mem, weight[:, src])
        own = (kind == 1)
        if np.any(own) and jump:
            s = grid_index[own, e]
            b, n = rows[own], run.neuron[s]
            before = (run.current[s] - lif.threshold) / lif.tau_mem
            after = run.current[s] / lif.tau_mem
            lam_v[b, n] = (after / before) * lam_v[b, n] - spike_grad[s] / before
    return grad_w, grad_in.reshape(batch, events)


@dataclass(frozen=True)
class SpikeTimeLoss:
    """Cross-entropy on −t/τ₀ of the first output spikes, plus α·(e^(t_label/τ₁) − 1).

    τ₀ and τ₁ are in the network's time unit; the defaults are the paper's, in ms.
    """

    tau0: float = 0.5
    tau1: float = 6.4
    alpha: float = 3e-3

    def first_spikes(self, run: LayerRun, batch: int, outputs: int, t_max: float):
        """First spike time of each output (t_max if none) and which spike it was (−1)."""
        first = np.full((batch, outputs), t_max)
        which = np.full((batch, outputs), -1)
        for s in np.argsort(run.time, kind="stable")[::-1]:  # earliest wins, written last
            first[run.batch[s], run.neuron[s]] = run.time[s]
            which[run.batch[s], run.neuron[s]] = s
        return first, which

    def value_and_grad(self, first: np.ndarray, labels: np.ndarray):
        """Mean loss over the batch and ∂L/∂t of every first spike time."""
        batch = first.shape[0]
        z = -first / self.tau0
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        rows = np.arange(batch)
        t_label = first[rows, labels]
        loss = -np.log(p[rows, labels]) + self.alpha * (np.exp(t_label / self.tau1) - 1.0)
        onehot = np.zeros_like(p)
        onehot[rows, labels] = 1.0
        grad = (onehot - p) / self.tau0  # ∂/∂t of −log p_label, with scores z = −t/τ₀
        grad[rows, labels] += self.alpha * np.exp(t_label / self.tau1) / self.tau1
        return float(loss.mean()), grad / batch


class EventNetwork:
    """Input spikes -> LIF layers (one weight matrix each), simulated and differentiated
    exactly."""

    def __init__(self, lif: EventLIF, weights: list[np.ndarray], loss: SpikeTimeLoss | None = None):
        self.lif = lif
        self.weights = [np.array(w, dtype=np.float64) for w in weights]
        self.loss = loss or SpikeTimeLoss()
        for upper, lower in zip(self.weights[1:], self.weights[:-1], strict=False):
            if upper.shape[1] != lower.shape[0]:
                raise ValueError(f"EventNetwork: weight shapes {lower.shape} and {upper.shape} "
                                 "do not chain (each layer's inputs are the last one's neurons)")

    def forward(self, in_times: np.ndarray):
        """Every layer's run; the input is (batch, inputs) spike times, one per input."""
        in_times = _validate.array_of_shape("EventNetwork", "in_times", in_times, 2)
        if in_times.shape[1] != self.weights[0].shape[1]:
            raise ValueError(f"EventNetwork: in_times must have {self.weights[0].shape[1]} "
                             f"columns (one per input), got {in_times.shape[1]}")
        batch = in_times.shape[0]
        times = in_times
        source = np.broadcast_to(np.arange(in_times.shape[1]), in_times.shape)
        runs = []
        for weight in self.weights:
            run = layer_forward(self.lif, weight, times, source)
            runs.append(run)
            times, source = spikes_as_inputs(run, batch, self.lif.t_max)
        return runs

    def first_spikes(self, in_times: np.ndarray) -> np.ndarray:
        runs = self.forward(in_times)
        return self.loss.first_spikes(runs[-1], in_times.shape[0], self.weights[-1].shape[0],
                                      self.lif.t_max)[0]

    def loss_value(self, in_times: np.ndarray, labels: np.ndarray) -> float:
        return self.loss.value_and_grad(self.first_spikes(in_times), labels)[0]

    def loss_and_grad(self, in_times: np.ndarray, labels: np.ndarray, *, jump: bool = True):
        """Loss and ∂L/∂W of every layer, by the adjoint pass."""
        batch = in_times.shape[0]
        runs = self.forward(in_times)
        first, which = self.loss.first_spikes(runs[-1], batch, self.weights[-1].shape[0],
                                              self.lif.t_max)
        loss, grad_first = self.loss.value_and_grad(first, labels)
        spike_grad = np.zeros(runs[-1].time.size)
        has = which >= 0
        spike_grad[which[has]] = grad_first[has]
        grads = [None] * len(self.weights)
        for layer in range(len(self.weights) - 1, -1, -1):
            grads[layer], grad_in = layer_backward(self.lif, self.weights[layer], runs[layer],
                                                   spike_grad, jump=jump)
            if layer:
                spike_grad = self.spike_grads_below(grad_in, runs[layer - 1], batch)
        return loss, grads

    def spike_grads_below(self, grad_in: np.ndarray, below: LayerRun, batch: int) -> np.ndarray:
        """∂L/∂(input event) of a layer, mapped back onto the spikes of the layer below
        (its inputs are those spikes, in time order per sample)."""
        return _input_grads_to_spikes(grad_in, below, batch)

    def predict(self, in_times: np.ndarray) -> np.ndarray:
        """The class of each sample: the output neuron that spikes first."""
        return np.argmin(self.first_spikes(in_times), axis=1)


def _input_grads_to_spikes(grad_in, below: LayerRun, batch: int):
    counts = np.bincount(below.batch, minlength=batch)
    order = np.lexsort((below.time, below.batch))
    slot = np.arange(order.size) - np.repeat(np.cumsum(counts) - counts, counts)
    spike_grad = np.zeros(below.time.size)
    spike_grad[order] = grad_in[below.batch[order], slot]
    return spike_grad


# ---------------------------------------------------------------- Yin-Yang, as in the paper
# Wunderlich & Pehle's Yin-Yang experiment, in ms, with the constants the GeNN reproduction
# of it lists (Nowotny et al., github.com/tnowotny/genn_eventprop, its Yin-Yang script; the
# paper's methods text was not reachable here): τ_mem = 20, τ_syn = 5, ϑ = 1, a 30 ms trial,
# τ₀ = 0.5, τ₁ = 6.4, α = 3e-3, 200 hidden neurons, weights drawn from N(1.5, 0.78) into the
# hidden layer and N(0.93, 0.1) into the outputs, inputs coded as latencies over
# [0.2, 29.8] ms with the bias spike at 0.2 ms, Adam at 5e-3 times 0.95 per epoch, batches
# of 32.
YIN_YANG_LIF = EventLIF(tau_mem=20.0, tau_syn=5.0, threshold=1.0, t_max=30.0)
YIN_YANG_LOSS = SpikeTimeLoss(tau0=0.5, tau1=6.4, alpha=3e-3)
YIN_YANG_HIDDEN = 200
YIN_YANG_LR, YIN_YANG_LR_DECAY = 5e-3, 0.95


def yin_yang_encode(points: np.ndarray) -> np.ndarray:
    """Yin-Yang inputs (n, 4) as the five input spike times of the paper's network."""
    return yinyang.latency_code(points, t_early=0.2, t_late=29.8, t_bias=0.2)


def yin_yang_network(hidden: int = YIN_YANG_HIDDEN, seed: int = 0,
                     network: type[EventNetwork] = EventNetwork) -> EventNetwork:
    """The paper's 5-``hidden``-3 network with its initial weights.

    For ``hidden`` other than 200 the hidden-to-output mean is scaled by 200/``hidden``,
    so an output neuron gets the same mean drive (our choice, not the paper's).
    """
    if isinstance(hidden, bool) or not isinstance(hidden, (int, np.integer)) or hidden < 1:
        raise ValueError(f"yin_yang_network: hidden must be an int >= 1 (got {hidden!r})")
    rng = np.random.default_rng(seed)
    weights = [rng.normal(1.5, 0.78, (hidden, 5)),
               rng.normal(0.93 * YIN_YANG_HIDDEN / hidden, 0.1, (3, hidden))]
    return network(YIN_YANG_LIF, weights, YIN_YANG_LOSS)
