"""Pair-based spike-timing-dependent plasticity with online traces (Song, Miller & Abbott 2000).

Bi & Poo (1998) paired pre- and postsynaptic spikes in cultured hippocampal
neurons: a presynaptic spike a few ms *before* the postsynaptic one strengthened
the synapse, one after it weakened it, both fading with the interval. The usual
fit of that window, with Δt = t_post − t_pre, is

    Δw(Δt) = A₊·e^(−Δt/τ₊)   for Δt > 0,
    Δw(Δt) = −A₋·e^(Δt/τ₋)   for Δt < 0.

The default constants are those of Song, Miller & Abbott (2000, Nature
Neuroscience 3:919): τ₊ = τ₋ = 20 ms, A₊ = 0.005 and A₋ = 1.05·A₊ (depression
slightly stronger, which keeps their rates stable); all are parameters.

Online, nothing looks back at spike pairs. Each synapse keeps two traces:
x (from presynaptic spikes) and y (from postsynaptic ones), which decay with τ₊
and τ₋ and jump by 1 at each spike of their own side. At a postsynaptic spike the
weight grows by A₊·x; at a presynaptic spike it shrinks by A₋·y. Summed over all
pairs this is exactly the window above (all-to-all pairing), which the tests and
the topic check to rounding. Here the traces are advanced event by event with the
exact decay e^(−(t − t_last)/τ), so no time grid enters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from whylab.snn import _validate

# Song, Miller & Abbott (2000): tau_+ = tau_- = 20 ms, A_+ = 0.005, A_-/A_+ = 1.05.
SONG_2000 = {"a_plus": 0.005, "a_minus": 0.00525, "tau_plus": 20.0, "tau_minus": 20.0}


@dataclass(frozen=True)
class STDP:
    """The window's constants (times in ms by convention)."""

    a_plus: float = SONG_2000["a_plus"]
    a_minus: float = SONG_2000["a_minus"]
    tau_plus: float = SONG_2000["tau_plus"]
    tau_minus: float = SONG_2000["tau_minus"]

    def __post_init__(self) -> None:
        for name in ("a_plus", "a_minus"):
            _validate.non_negative("STDP", name, getattr(self, name))
        for name in ("tau_plus", "tau_minus"):
            _validate.positive("STDP", name, getattr(self, name))

    def window(self, delta_t) -> np.ndarray:
        """The analytic Δw for intervals Δt = t_post − t_pre (0 at Δt = 0)."""
        delta_t = np.asarray(delta_t, dtype=np.float64)
        potentiation = self.a_plus * np.exp(-np.abs(delta_t) / self.tau_plus)
        depression = -self.a_minus * np.exp(-np.abs(delta_t) / self.tau_minus)
        return np.where(delta_t > 0, potentiation, np.where(delta_t < 0, depression, 0.0))

    def weight_change(self, pre_times, post_times) -> float:
        """The total Δw that the online traces produce for one synapse's spike trains."""
        pre = np.sort(_validate.array_of_shape("STDP.weight_change", "pre_times",
                                               pre_times, 1))
        post = np.sort(_validate.array_of_shape("STDP.weight_change", "post_times",
                                                post_times, 1))
        # Events in time order; at equal times the order does not matter (Δt = 0 pairs
        # contribute nothing, as the window says): a trace is read before its own jump.
        times = np.concatenate([pre, post])
        is_post = np.concatenate([np.zeros(pre.size, bool), np.ones(post.size, bool)])
        order = np.argsort(times, kind="stable")
        x = y = 0.0  # presynaptic and postsynaptic traces
        last = times[order[0]] if times.size else 0.0
        dw = 0.0
        pending_pre = pending_post = 0  # jumps at the current time, applied after reading
        for index in order:
            t = times[index]
            if t != last:
                x = (x + pending_pre) * np.exp(-(t - last) / self.tau_plus)
                y = (y + pending_post) * np.exp(-(t - last) / self.tau_minus)
                pending_pre = pending_post = 0
                last = t
            if is_post[index]:
                dw += self.a_plus * x
                pending_post += 1
            else:
                dw -= self.a_minus * y
                pending_pre += 1
        return dw

    def pairing_protocol(self, delta_t, pairs: int = 60, period: float = 1000.0) -> np.ndarray:
        """Δw after ``pairs`` pre/post pairings at interval Δt, one pairing per ``period``
        (Bi & Poo 1998 paired 60 times at 1 Hz), computed by the online traces."""
        delta_t = np.asarray(delta_t, dtype=np.float64)
        if pairs < 1:
            raise ValueError(f"STDP.pairing_protocol: pairs must be >= 1 (got {pairs})")
        period = _validate.positive("STDP.pairing_protocol", "period", period)
        if np.any(np.abs(delta_t) >= period / 2):
            raise ValueError("STDP.pairing_protocol: |delta_t| must be < period / 2 "
                             f"= {period / 2:g}")
        onsets = np.arange(pairs) * period
        return np.array([
            self.weight_change(onsets + max(0.0, -lag), onsets + max(0.0, lag))
            for lag in delta_t.ravel()
        ]).reshape(delta_t.shape)
