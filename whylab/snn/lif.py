"""The leaky integrate-and-fire neuron on a time grid: two integrators, two ways to time spikes.

Between spikes the membrane potential obeys

    τ_m dV/dt = −(V − V_rest) + R·I(t),

and when V reaches the threshold V_th the neuron spikes, its potential is reset
(to V_reset, or by subtracting V_th − V_reset) and held there for the refractory
period t_ref. With a current held constant over a step of length h, V relaxes
towards V_∞ = V_rest + R·I, and two integrators advance it:

* forward Euler, V ← V + (h/τ_m)(V_∞ − V): first order in h;
* exact exponential integration, V ← V_∞ + (V − V_∞)·e^(−h/τ_m): exact between events.

A spike can be *locked to the grid* (it happens at the end of the step in which V
crossed V_th, as most clock-driven simulators do), or *interpolated*: the crossing
time is found by linear interpolation inside the step, the reset happens there and
the rest of the step is integrated from V_reset. Hansel et al. (1998, Neural
Computation 10:467) showed that grid-locked spikes make even exact integration
first order in h; interpolation restores second order.

Everything here is NumPy and vectorised over neurons: ``current`` holds one value
per neuron (or one per step and neuron), so an f–I curve is a single simulation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from whylab.snn import _validate

RESETS = ("zero", "subtract")


@dataclass(frozen=True)
class LIFParams:
    """Constants of one LIF neuron; units are yours (ms and mV-like units by convention here).

    ``reset="zero"`` sets V to ``v_reset`` after a spike; ``"subtract"`` lowers it by
    ``threshold − v_reset`` and so keeps any overshoot past the threshold.
    ``tau_syn`` is the synaptic current's time constant, used by the networks built on
    these constants (the current-driven simulator below takes the current as given).
    """

    tau_mem: float = 10.0
    threshold: float = 1.0
    v_reset: float = 0.0
    v_rest: float = 0.0
    resistance: float = 1.0
    t_ref: float = 0.0
    reset: str = "zero"
    tau_syn: float = 5.0

    def __post_init__(self) -> None:
        where = "LIFParams"
        _validate.positive(where, "tau_mem", self.tau_mem)
        _validate.positive(where, "tau_syn", self.tau_syn)
        _validate.positive(where, "resistance", self.resistance)
        _validate.non_negative(where, "t_ref", self.t_ref)
        for name in ("threshold", "v_reset", "v_rest"):
            _validate.finite(where, name, getattr(self, name))
        if self.threshold <= self.v_reset:
            raise ValueError(
                f"{where}: threshold must be > v_reset (got threshold={self.threshold}, "
                f"v_reset={self.v_reset})"
            )
        if self.reset not in RESETS:
            raise ValueError(f"{where}: reset must be one of {RESETS}, got {self.reset!r}")


@dataclass(frozen=True)
class Integrator:
    """How V moves towards V_∞ over a time ``h`` (an array: each neuron its own h)."""

    name: str
    advance: Callable[[np.ndarray, np.ndarray, np.ndarray, float], np.ndarray]


def _euler(v, v_inf, h, tau):
    return v + (h / tau) * (v_inf - v)


def _exact(v, v_inf, h, tau):
    return v_inf + (v - v_inf) * np.exp(-h / tau)


EULER = Integrator("euler", _euler)
EXACT = Integrator("exact", _exact)
INTEGRATORS = {"euler": EULER, "exact": EXACT}


@dataclass
class Simulation:
    """What :func:`simulate` recorded: the grid, V on it (if asked) and each neuron's spikes."""

    times: np.ndarray  # (steps + 1,)
    voltage: np.ndarray | None  # (steps + 1, neurons), V at the grid points
    spike_times: list[np.ndarray]  # one array per neuron

    def rates(self) -> np.ndarray:
        """Firing rate of each neuron from its mean inter-spike interval (NaN below 2 spikes)."""
        return np.array([mean_isi_rate(t) for t in self.spike_times])


def mean_isi_rate(spike_times: np.ndarray) -> float:
    """1 / mean inter-spike interval; NaN with fewer than two spikes.

    A spike count in a window is off by up to one spike, an error of one ISI over the
    window however fine the time step; the mean ISI has no such floor.
    """
    spike_times = np.asarray(spike_times, dtype=np.float64)
    if spike_times.size < 2:
        return math.nan
    return (spike_times.size - 1) / float(spike_times[-1] - spike_times[0])


def _integrator(method: str | Integrator) -> Integrator:
    if isinstance(method, Integrator):
        return method
    if method not in INTEGRATORS:
        raise ValueError(f"simulate: method must be one of {tuple(INTEGRATORS)}, got {method!r}")
    return INTEGRATORS[method]


def simulate(
    params: LIFParams,
    current,
    duration: float,
    dt: float,
    *,
    method: str | Integrator = "exact",
    interpolate: bool = True,
    record: bool = False,
    v0=None,
) -> Simulation:
    """Simulate LIF neurons driven by ``current`` for ``duration`` with step ``dt``.

    ``current``: shape (neurons,) for a constant current, or (steps, neurons) for one
    held constant over each step. ``v0`` defaults to ``v_reset``. With ``interpolate``
    the spike times are interpolated inside the step and the reset happens there.
    """
    where = "simulate"
    dt = _validate.time_step(where, dt, params.tau_mem)
    duration = _validate.positive(where, "duration", duration)
    steps = int(round(duration / dt))
    if steps < 1 or abs(steps * dt - duration) > 1e-9 * duration:
        raise ValueError(f"{where}: duration must be a whole number of steps dt (got "
                         f"duration={duration:g}, dt={dt:g})")
    current = np.asarray(current, dtype=np.float64)
    if current.ndim == 1:
        drive = np.broadcast_to(current, (steps, current.shape[0]))
    elif current.ndim == 2 and current.shape[0] == steps:
        drive = current
    else:
        raise ValueError(f"{where}: current must have shape (neurons,) or ({steps}, neurons), "
                         f"got {tuple(current.shape)}")
    if not np.all(np.isfinite(drive)):
        raise ValueError(f"{where}: current must hold finite numbers only")
    integrator = _integrator(method)
    neurons = drive.shape[1]
    v = np.full(neurons, params.v_reset) if v0 is None else np.array(v0, dtype=np.float64)
    if v.shape != (neurons,):
        raise ValueError(f"{where}: v0 must have shape ({neurons},), got {v.shape}")
    tau, theta = params.tau_mem, params.threshold
    refractory_left = np.zeros(neurons)  # time still to hold V at the reset value
    spikes: list[list[float]] = [[] for _ in range(neurons)]
    trace = np.empty((steps + 1, neurons)) if record else None
    if trace is not None:
        trace[0] = v
    locked_ref_steps = int(round(params.t_ref / dt))
    for step in range(steps):
        v_inf = params.v_rest + params.resistance * drive[step]
        start = step * dt
        # Refractory neurons sit at the reset value for the part of the step they owe.
        held = np.minimum(refractory_left, dt)
        refractory_left = refractory_left - held
        free = dt - held
        v_new = np.where(free > 0, integrator.advance(v, v_inf, free, tau), v)
        crossed = (v_new >= theta) & (free > 0)
        if np.any(crossed):
            idx = np.flatnonzero(crossed)
            if interpolate:
                fraction = (theta - v[idx]) / (v_new[idx] - v[idx])
                t_cross = start + held[idx] + np.clip(fraction, 0.0, 1.0) * free[idx]
                remaining = start + dt - t_cross
                owed = np.maximum(params.t_ref - remaining, 0.0)
                moving = np.maximum(remaining - params.t_ref, 0.0)
                v_after = np.full(idx.size, params.v_reset)
                v_new[idx] = np.where(
                    moving > 0, integrator.advance(v_after, v_inf[idx], moving, tau), v_after)
                refractory_left[idx] = owed
            else:
                t_cross = np.full(idx.size, start + dt)
                if params.reset == "zero":
                    v_new[idx] = params.v_reset
                else:
                    v_new[idx] = v_new[idx] - (theta - params.v_reset)
                refractory_left[idx] = locked_ref_steps * dt
            for neuron, time in zip(idx, t_cross, strict=True):
                spikes[neuron].append(float(time))
        v = v_new
        if trace is not None:
            trace[step + 1] = v
    times = np.arange(steps + 1) * dt
    return Simulation(times, trace, [np.array(s) for s in spikes])


def rheobase(params: LIFParams) -> float:
    """The smallest constant current that ever reaches threshold: R·I = V_th − V_rest."""
    return (params.threshold - params.v_rest) / params.resistance


def firing_rate(params: LIFParams, current) -> np.ndarray:
    """The closed-form rate for a constant current (0 at or below rheobase):

    f(I) = 1 / (t_ref + τ_m ln((V_∞ − V_reset) / (V_∞ − V_th))),  V_∞ = V_rest + R·I,

    which with V_rest = V_reset = 0 is 1 / (t_ref + τ ln(RI / (RI − V_th))).
    """
    current = np.asarray(current, dtype=np.float64)
    v_inf = params.v_rest + params.resistance * current
    above = v_inf > params.threshold
    safe = np.where(above, v_inf, params.threshold + 1.0)
    isi = params.t_ref + params.tau_mem * np.log(
        (safe - params.v_reset) / (safe - params.threshold))
    return np.where(above, 1.0 / isi, 0.0)
