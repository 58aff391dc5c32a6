"""STDP: the online traces against the analytic window, and a pairing protocol.

The measured points come from :meth:`whylab.snn.stdp.STDP.weight_change` (online
traces, event by event); the curve they are compared with is the closed-form
window, evaluated on its own.
"""

from __future__ import annotations

import numpy as np

from whylab.explorer.experiment import (
    Check,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    experiment,
)
from whylab.snn import stdp
from whylab.topics.spiking_neurons import under_test as ut
from whylab.topics.spiking_neurons.figures import NAN

WINDOW_TOLERANCE = 1e-15  # absolute, on weight changes of order A₊ = 5e-3: rounding


@experiment(
    name="stdp-window",
    title=T("STDP: online traces reproduce the window", "STDP：在线迹重现学习窗"),
    description=T(
        "Sweeps the interval Δt = t_post − t_pre, lets the online pre/post traces compute each "
        "weight change, compares them with the analytic window, and runs Bi & Poo's protocol "
        "of 60 pairings at 1 Hz at a leading and a lagging interval.",
        "扫描间隔 Δt = t_post − t_pre，由在线的突触前/后迹算出每次权重变化，与解析学习窗比较；"
        "再在前导和滞后两个间隔上运行 Bi 与 Poo 的方案：以 1 Hz 配对 60 次。"),
    params=[
        Param("tau_plus", "float", 20.0, T("τ₊", "τ₊"), unit="ms", minimum=1.0, maximum=100.0),
        Param("tau_minus", "float", 20.0, T("τ₋", "τ₋"), unit="ms", minimum=1.0, maximum=100.0),
        Param("lag", "float", 10.0, T("pairing interval |Δt|", "配对间隔 |Δt|"), unit="ms",
              minimum=0.5, maximum=100.0),
    ],
    controls=[
        ut.control(ut.EULER_TRACE_DECAY, ("traces-equal-window",)),
        ut.control(ut.PRE_POST_SWAPPED, ("traces-equal-window", "pre-before-post-potentiates",
                                         "post-before-pre-depresses")),
    ],
    metrics=[Metric("max_window_error", T("largest |trace − window|", "最大 |迹 − 学习窗|"))],
)
def stdp_window(tau_plus: float, tau_minus: float, lag: float) -> Result:
    theory = stdp.STDP(tau_plus=tau_plus, tau_minus=tau_minus)
    rule = ut.stdp_rule(theory)
    sweep = np.linspace(-100.0, 100.0, 41)
    sweep = sweep[sweep != 0.0]
    measured = []
    for delta in sweep:
        pre, post = ut.spike_pair(np.array([200.0]), np.array([200.0 + delta]))
        measured.append(rule.weight_change(pre, post))
    measured = np.array(measured)
    expected = theory.window(sweep)
    error = float(np.max(np.abs(measured - expected)))

    onsets = np.arange(60) * 1000.0
    pre, post = ut.spike_pair(onsets, onsets + lag)
    leading = rule.weight_change(pre, post)
    pre, post = ut.spike_pair(onsets + lag, onsets)
    lagging = rule.weight_change(pre, post)
    want_leading = 60 * float(theory.window(lag))
    want_lagging = 60 * float(theory.window(-lag))
    checks = [
        Check(T("Online traces give the analytic window at every Δt, to rounding",
                "在每个 Δt 上，在线迹都给出解析学习窗（误差只在舍入级别）"),
              error <= WINDOW_TOLERANCE, f"max |Δ| = {error:.1e}", f"≤ {WINDOW_TOLERANCE:.0e}",
              id="traces-equal-window"),
        Check(T(f"Pre {lag:g} ms before post, 60 times at 1 Hz: the synapse strengthens",
                f"突触前先于突触后 {lag:g} ms，以 1 Hz 配对 60 次：突触增强"),
              leading > 0 and abs(leading - want_leading) <= 1e-12,
              f"Δw = {leading:+.5f}", f"+{want_leading:.5f} (60·A₊·e^(−Δt/τ₊))",
              id="pre-before-post-potentiates"),
        Check(T(f"Post {lag:g} ms before pre: the synapse weakens",
                f"突触后先于突触前 {lag:g} ms：突触减弱"),
              lagging < 0 and abs(lagging - want_lagging) <= 1e-12,
              f"Δw = {lagging:+.5f}", f"{want_lagging:.5f} (−60·A₋·e^(−Δt/τ₋))",
              id="post-before-pre-depresses"),
    ]
    curve = np.linspace(-100.0, 100.0, 401)
    shown = np.linspace(0, sweep.size - 1, 12).round().astype(int)
    chart = LineChart(
        title=T("The STDP window: theory and online traces", "STDP 学习窗：理论与在线迹"),
        x_label=T("Δt = t_post − t_pre (ms)", "Δt = t_post − t_pre（ms）"),
        y_label=T("weight change Δw", "权重变化 Δw"),
        series=[
            # One line, broken at Δt = 0 where the window jumps.
            Series(T("analytic window", "解析学习窗"),
                   [*curve[curve < 0], NAN, *curve[curve > 0]],
                   [*theory.window(curve[curve < 0]), NAN, *theory.window(curve[curve > 0])]),
            # Separate points (NaN between them): each is drawn as a marker, none joined.
            Series(T("online traces (measured)", "在线迹（实测）"),
                   [v for x in sweep[shown] for v in (x, NAN)],
                   [v for y in measured[shown] for v in (y, NAN)]),
        ],
    )
    return Result(checks=checks, figures=[chart], metrics={"max_window_error": error})
