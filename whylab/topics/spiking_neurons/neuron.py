"""Experiments on one LIF neuron: its f–I curve, its membrane trace, and integrator orders.

The simulations run :func:`whylab.snn.lif.simulate` with the integrator, spike
timing and constants taken from :mod:`.under_test`; the expected rates come from
the closed form, which no simulation enters.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from whylab.explorer.experiment import (
    Check,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    Table,
    experiment,
)
from whylab.snn import lif
from whylab.topics.spiking_neurons import under_test as ut
from whylab.topics.spiking_neurons.figures import thin, ticks

# A hyperpolarising reset below rest, as in most cortical models, so that resetting to
# the resting potential instead is a different neuron.
NEURON = lif.LIFParams(tau_mem=10.0, threshold=1.0, v_reset=-0.2, v_rest=0.0, t_ref=2.0)
RATE_TOLERANCE = 1e-4  # relative, at dt = 0.01 ms with exact integration and interpolation


def _neuron(t_ref: float) -> lif.LIFParams:
    return ut.neuron_params(lif.LIFParams(
        tau_mem=NEURON.tau_mem, threshold=NEURON.threshold, v_reset=NEURON.v_reset,
        v_rest=NEURON.v_rest, t_ref=t_ref))


@experiment(
    name="fi-curve",
    title=T("The f–I curve against its closed form", "f–I 曲线与其闭式解"),
    description=T(
        "Drives LIF neurons with constant currents from below to well above rheobase, "
        "simulates them with exact integration and interpolated spike times, measures each "
        "rate from the mean inter-spike interval and compares it with "
        "f = 1/(t_ref + τ ln((V∞ − V_reset)/(V∞ − V_th))).",
        "用从阈下到远高于基强度的恒定电流驱动 LIF 神经元，以精确积分和插值的脉冲时刻模拟，"
        "由平均脉冲间隔测出发放率，再与 f = 1/(t_ref + τ ln((V∞ − V_reset)/(V∞ − V_th))) 比较。"),
    params=[
        Param("i_min", "float", 0.5, T("smallest current I (R = 1)", "最小电流 I（R = 1）"),
              minimum=0.0, maximum=5.0),
        Param("i_max", "float", 4.0, T("largest current I", "最大电流 I"),
              minimum=0.1, maximum=10.0),
        Param("t_ref", "float", 2.0, T("refractory period t_ref", "不应期 t_ref"), unit="ms",
              minimum=0.0, maximum=10.0),
    ],
    controls=[
        ut.control(ut.LEAK_WRONG_SIGN, ("rates-match-closed-form", "silent-below-rheobase",
                                        "trace-spike-times")),
        ut.control(ut.RESET_TO_REST, ("rates-match-closed-form", "trace-resets-to-v-reset",
                                      "trace-spike-times")),
        ut.control(ut.INTERPOLATION_OFF, ("rates-match-closed-form", "trace-spike-times")),
    ],
    metrics=[Metric("max_relative_rate_error", T("largest relative rate error",
                                                 "最大相对发放率误差"))],
)
def fi_curve(i_min: float, i_max: float, t_ref: float) -> Result:
    params = _neuron(t_ref)
    currents = np.linspace(min(i_min, i_max), max(i_min, i_max), 24)
    dt, duration = 0.01, 150.0
    sim = lif.simulate(params, currents, duration, dt, method=ut.integrator("exact"),
                       interpolate=ut.interpolated(True))
    measured = sim.rates()
    expected = lif.firing_rate(dataclasses.replace(NEURON, t_ref=t_ref), currents)
    rheobase = lif.rheobase(NEURON)
    above = currents > rheobase * 1.02  # at least a couple of spikes in the window
    below = currents <= rheobase
    checks = []
    name = T("Rates from the mean ISI equal the closed form above rheobase",
             "基强度以上，由平均脉冲间隔得到的发放率等于闭式解")
    if np.any(above):
        error = float(np.max(np.abs(measured[above] - expected[above]) / expected[above]))
        error = error if np.all(np.isfinite(measured[above])) else float("inf")
        checks.append(Check(name, error <= RATE_TOLERANCE, f"max |Δf|/f = {error:.1e}",
                            f"≤ {RATE_TOLERANCE:.0e}", id="rates-match-closed-form"))
    else:
        error = float("nan")
        checks.append(Check.not_applicable(
            id="rates-match-closed-form", name=name, expected=f"≤ {RATE_TOLERANCE:.0e}",
            why=T("needs a current above rheobase (I > 1.02·V_th/R)",
                  "需要高于基强度的电流（I > 1.02·V_th/R）")))
    name = T("At or below rheobase the neuron never fires", "基强度及以下，神经元从不发放")
    if np.any(below):
        counts = [sim.spike_times[i].size for i in np.flatnonzero(below)]
        spikes_seen = T(f"{sum(counts)} spikes", f"{sum(counts)} 个脉冲")
        checks.append(Check(name, max(counts) == 0, spikes_seen, T("0 spikes", "0 个脉冲"),
                            id="silent-below-rheobase"))
    else:
        checks.append(Check.not_applicable(
            id="silent-below-rheobase", name=name, expected=T("0 spikes", "0 个脉冲"),
            why=T("needs a current at or below rheobase (I ≤ V_th/R)",
                  "需要不高于基强度的电流（I ≤ V_th/R）")))

    # A membrane trace at the largest current, drawn from its own simulation.
    trace_current = float(currents[-1])
    trace = lif.simulate(params, np.array([trace_current]), 60.0, 0.05,
                         method=ut.integrator("exact"), interpolate=ut.interpolated(True),
                         record=True)
    v = trace.voltage[:, 0]
    spikes = trace.spike_times[0]
    rate = float(lif.firing_rate(dataclasses.replace(NEURON, t_ref=t_ref), [trace_current])[0])
    if rate > 0:
        isi = 1.0 / rate
        first = isi - t_ref  # from V_reset to threshold, then t_ref held, and again
        predicted = first + isi * np.arange(spikes.size)
        shift = float(np.max(np.abs(spikes - predicted))) if spikes.size else float("inf")
    else:
        shift = 0.0 if spikes.size == 0 else float("inf")
    checks.append(Check(
        T("The trace's spike times are the closed-form ones, t_k = t₁ + k·ISI",
          "膜电位轨迹中的脉冲时刻就是闭式解给出的 t_k = t₁ + k·ISI"),
        shift <= 1e-3, f"max |Δt| = {shift:.1e} ms", "≤ 1e-3 ms", id="trace-spike-times"))
    name = T("After each spike the potential starts again from V_reset",
             "每次发放后，膜电位都从 V_reset 重新开始")
    if spikes.size:
        lowest = float(np.min(v[1:]))
        span = params.threshold - NEURON.v_reset
        checks.append(Check(name, abs(lowest - NEURON.v_reset) < 0.05 * span,
                            f"min V = {lowest:.3f}", f"≈ V_reset = {NEURON.v_reset:g}",
                            id="trace-resets-to-v-reset"))
    else:
        checks.append(Check.not_applicable(
            id="trace-resets-to-v-reset", name=name, expected=f"≈ V_reset = {NEURON.v_reset:g}",
            why=T("needs a largest current above rheobase", "需要最大电流高于基强度")))

    fi_chart = LineChart(
        title=T("Firing rate against input current", "发放率与输入电流"),
        x_label=T("current I (R = 1)", "电流 I（R = 1）"),
        y_label=T("rate (spikes per ms)", "发放率（每 ms 脉冲数）"),
        series=[
            Series(T("closed form", "闭式解"), currents.tolist(), expected.tolist()),
            Series(T("simulated (mean ISI)", "模拟（平均脉冲间隔）"), currents.tolist(),
                   np.nan_to_num(measured, nan=0.0).tolist()),
        ],
    )
    times = trace.times
    trace_chart = LineChart(
        title=T(f"Membrane potential at I = {trace_current:.2f}",
                f"I = {trace_current:.2f} 时的膜电位"),
        x_label=T("time (ms)", "时间（ms）"),
        y_label=T("V", "V"),
        series=[
            Series(T("membrane potential V", "膜电位 V"), thin(times, 600), thin(v, 600)),
            Series(T("threshold V_th", "阈值 V_th"), [0.0, float(times[-1])],
                   [params.threshold, params.threshold]),
            ticks(T("spikes", "脉冲"), spikes, np.full(spikes.size, params.threshold + 0.15),
                  height=0.2),
        ],
    )
    table = Table(
        title=T("Rates at a few currents", "几个电流下的发放率"),
        columns=[T("current I", "电流 I"), T("closed form", "闭式解"),
                 T("simulated", "模拟"), T("spikes", "脉冲数")],
        rows=[[f"{currents[i]:.2f}", f"{expected[i]:.6f}", f"{measured[i]:.6f}",
               sim.spike_times[i].size] for i in range(0, currents.size, 6)],
    )
    return Result(checks=checks, figures=[fi_chart, trace_chart], tables=[table],
                  metrics={"max_relative_rate_error": error})


VARIANTS = (
    ("euler", False, T("Euler, spikes on the grid", "Euler，脉冲锁定在网格上")),
    ("euler", True, T("Euler, interpolated spikes", "Euler，插值脉冲")),
    ("exact", False, T("exact, spikes on the grid", "精确积分，脉冲锁定在网格上")),
    ("exact", True, T("exact, interpolated spikes", "精确积分，插值脉冲")),
)


def _order_check(check_id: str, name, order: float, low: float, high: float | None) -> Check:
    passed = order >= low and (high is None or order <= high)
    expected = f"{low:g} ≤ p ≤ {high:g}" if high is not None else f"p ≥ {low:g}"
    return Check(name, passed, f"p = {order:.2f}", expected, id=check_id)


@experiment(
    name="integrator-order",
    title=T("How the rate error shrinks with the time step", "发放率误差如何随时间步长缩小"),
    description=T(
        "Measures the rate error of eight neurons against the closed form at five time "
        "steps, for both integrators with spikes on the grid and interpolated, and fits "
        "the order p in error ∝ dtᵖ.",
        "在五个时间步长下测量八个神经元的发放率相对闭式解的误差，两种积分器各自分为"
        "脉冲锁定网格和插值两种情形，并拟合误差 ∝ dtᵖ 中的阶数 p。"),
    params=[
        Param("dt_max", "float", 0.4, T("largest time step", "最大时间步长"), unit="ms",
              minimum=0.05, maximum=2.0),
        Param("duration", "float", 100.0, T("simulated time", "模拟时长"), unit="ms",
              minimum=50.0, maximum=1000.0),
    ],
    controls=[
        ut.control(ut.EULER_IS_EXACT, ("euler-interpolated-first-order",)),
        ut.control(ut.LOCKED_IS_INTERPOLATED, ("exact-locked-first-order",)),
        ut.control(ut.INTERPOLATION_OFF, ("exact-interpolated-second-order",)),
    ],
    metrics=[Metric(f"order_{m}_{'interp' if i else 'grid'}", label)
             for m, i, label in VARIANTS],
)
def integrator_order(dt_max: float, duration: float) -> Result:
    params = _neuron(NEURON.t_ref)
    currents = np.linspace(1.2, 3.0, 8)
    expected = lif.firing_rate(NEURON, currents)
    steps = dt_max / 2.0 ** np.arange(5)
    series, orders, rows = [], {}, []
    for method, interp, label in VARIANTS:
        errors = []
        for dt in steps:
            whole = round(duration / dt) * dt
            sim = lif.simulate(params, currents, whole, dt, method=ut.integrator(method),
                               interpolate=ut.interpolated(interp))
            errors.append(float(np.mean(np.abs(sim.rates() - expected) / expected)))
        errors = np.array(errors)
        ok = np.isfinite(errors) & (errors > 0)
        order = float(np.polyfit(np.log(steps[ok]), np.log(errors[ok]), 1)[0]) \
            if ok.sum() >= 2 else float("nan")
        orders[(method, interp)] = order
        series.append(Series(label, steps.tolist(), errors.tolist()))
        rows.append([label, *[f"{e:.1e}" for e in errors], f"{order:.2f}"])
    checks = [
        _order_check("euler-interpolated-first-order",
                     T("Euler stays first order with interpolated spikes: its own error "
                       "is O(dt)", "插值脉冲时 Euler 仍是一阶：它自身的误差就是 O(dt)"),
                     orders[("euler", True)], 0.7, 1.3),
        _order_check("exact-locked-first-order",
                     T("Exact integration is only first order when spikes are locked to "
                       "the grid (Hansel et al. 1998)",
                       "脉冲锁定在网格上时，精确积分也只有一阶（Hansel 等，1998）"),
                     orders[("exact", False)], 0.7, 1.3),
        _order_check("exact-interpolated-second-order",
                     T("Exact integration with interpolated spike times is second order "
                       "or better", "精确积分配合插值脉冲时刻，达到二阶或更高"),
                     orders[("exact", True)], 1.8, None),
    ]
    chart = LineChart(
        title=T("Relative rate error against time step", "相对发放率误差与时间步长"),
        x_label=T("time step dt (ms)", "时间步长 dt（ms）"),
        y_label=T("mean |Δf|/f", "平均 |Δf|/f"),
        series=series, log_x=True, log_y=True,
    )
    table = Table(
        title=T("Mean relative rate error", "平均相对发放率误差"),
        columns=[T("integrator", "积分器"), *[T(f"dt = {s:g}", f"dt = {s:g}") for s in steps],
                 T("order p", "阶数 p")],
        rows=rows,
    )
    metrics = {f"order_{m}_{'interp' if i else 'grid'}": orders[(m, i)] for m, i, _ in VARIANTS}
    return Result(checks=checks, figures=[chart], tables=[table], metrics=metrics)
