"""BPTT through whylab's engine: what the surrogate gradient is, and what it is not.

One small spiking network (float64) is run four ways: with hard spikes (the
model), with the smooth sigmoid in both passes (the smoothed model), each
differentiated by whylab's BPTT and by central finite differences. The expected
values are finite differences of the very function evaluated, never the backward
pass being checked, and the layer's trace is compared with the recurrence written
out in NumPy.
"""

from __future__ import annotations

import numpy as np

import whylab
from whylab.explorer.experiment import Check, Metric, Param, Result, T, Table, experiment
from whylab.nn import functional as F
from whylab.snn import network, surrogate, yinyang
from whylab.topics.shared import relative_error
from whylab.topics.spiking_neurons import under_test as ut

STEPS, DT, HIDDEN = 20, 1.0, 12
BETA_HIDDEN, BETA_OUT = float(np.exp(-DT / 10.0)), float(np.exp(-DT / 20.0))


def _inputs(batch: int, seed: int):
    points, labels = yinyang.yin_yang(batch, seed)
    times = yinyang.latency_code(points, 0.0, STEPS - 6.0, 0.0)
    return yinyang.spike_raster(times, STEPS, DT), labels


def _model(spike, seed: int, gain: float):
    whylab.manual_seed(seed)
    model = network.SpikingClassifier(5, HIDDEN, 3, beta_hidden=BETA_HIDDEN, beta_out=BETA_OUT,
                                      spike=spike, input_gain=gain, dtype=whylab.float64)
    model.lif = ut.leaky_layer(BETA_HIDDEN, 1.0, spike)
    return model


def _loss(model, raster, labels):
    scores, hidden = model(whylab.tensor(raster, dtype=whylab.float64))
    return F.cross_entropy(scores, whylab.tensor(labels)), hidden


def _grad_and_fd(model, raster, labels, h: float):
    """BPTT gradient of the input weights, and their central finite differences."""
    weight = model.fc_in.weight
    loss, hidden = _loss(model, raster, labels)
    weight.grad = None
    loss.backward()
    grad = np.zeros(weight.shape) if weight.grad is None else weight.grad.numpy().copy()
    fd = np.zeros(weight.shape)
    values = weight.detach().numpy()
    with whylab.no_grad():
        for index in np.ndindex(*weight.shape):
            original = values[index]
            values[index] = original + h
            plus = float(_loss(model, raster, labels)[0].item())
            values[index] = original - h
            minus = float(_loss(model, raster, labels)[0].item())
            values[index] = original
            fd[index] = (plus - minus) / (2 * h)
    return grad, fd, hidden.detach().numpy()


def leaky_by_numpy(currents: np.ndarray, beta: float, threshold: float):
    """snnTorch's Leaky recurrence (reset by subtraction) written out in NumPy."""
    mem = np.zeros(currents.shape[1:])
    mems, spikes = [], []
    for current in currents:
        reset = (mem > threshold).astype(np.float64)
        mem = beta * mem + current - reset * threshold
        mems.append(mem)
        spikes.append((mem - threshold > 0).astype(np.float64))
    return np.array(mems), np.array(spikes)


@experiment(
    name="bptt-surrogate",
    title=T("BPTT with a surrogate gradient, against finite differences",
            "带替代梯度的 BPTT 与有限差分对照"),
    description=T(
        "Runs a small spiking network on Yin-Yang points through whylab's engine, "
        "backpropagates through all its time steps, and compares the gradients of the input "
        "weights with central finite differences of the hard model and of the smoothed one.",
        "让一个小型脉冲网络在 whylab 引擎上处理 Yin-Yang 样本，沿所有时间步做反向传播，"
        "再把输入权重的梯度与硬模型和平滑模型的中心有限差分比较。"),
    params=[
        Param("slope", "float", 5.0, T("surrogate slope k", "替代函数斜率 k"),
              minimum=0.5, maximum=50.0),
        Param("batch", "int", 6, T("samples", "样本数"), minimum=1, maximum=32),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        ut.control(ut.RESET_SAME_STEP, ("leaky-matches-recurrence",)),
        ut.control(ut.RESET_ONE_STEP_LATE, ("leaky-matches-recurrence",)),
        ut.control(ut.BPTT_CUT, ("bptt-equals-fd-smooth",)),
        ut.control(ut.SURROGATE_IN_FORWARD, ("spikes-are-binary", "hard-fd-zero",
                                             "surrogate-differs-from-smooth")),
        ut.control(ut.TRUE_GRADIENT, ("surrogate-is-not-zero",)),
    ],
    metrics=[Metric("bptt_vs_fd_smooth", T("BPTT vs finite differences, smoothed model",
                                           "平滑模型：BPTT 与有限差分之差"))],
)
def bptt_surrogate(slope: float, batch: int, seed: int) -> Result:
    raster, labels = _inputs(batch, seed)
    gain = 3.0
    spike = surrogate.spike_function("sigmoid", slope)
    smooth = lambda x: whylab.sigmoid(slope * x)  # noqa: E731 - the smoothed model's spike

    hard_model = _model(ut.training_spike(ut.hard_spike(spike)), seed, gain)
    surrogate_grad, hard_fd, hidden = _grad_and_fd(hard_model, raster, labels, 1e-7)
    smooth_model = _model(smooth, seed, gain)
    smooth_grad, smooth_fd, _ = _grad_and_fd(smooth_model, raster, labels, 1e-6)

    # The layer's own trace against the recurrence in NumPy, on the same currents.
    with whylab.no_grad():
        currents = hard_model.fc_in(whylab.tensor(raster.reshape(-1, 5), dtype=whylab.float64))
        currents = currents.numpy().reshape(STEPS, batch, HIDDEN)
    layer = ut.leaky_layer(BETA_HIDDEN, 1.0, surrogate.spike_function("sigmoid", slope))
    mem = whylab.zeros(batch, HIDDEN, dtype=whylab.float64)
    mems, spks = [], []
    with whylab.no_grad():
        for step in range(STEPS):
            spk, mem = layer(whylab.tensor(currents[step]), mem)
            mems.append(mem.numpy().copy())
            spks.append(spk.numpy().copy())
    ref_mem, ref_spk = leaky_by_numpy(currents, BETA_HIDDEN, 1.0)
    trace_error = max(relative_error(np.array(mems), ref_mem),
                      float(np.max(np.abs(np.array(spks) - ref_spk))))

    smooth_error = relative_error(smooth_grad, smooth_fd)
    zero_fd = float(np.mean(hard_fd == 0.0))
    surrogate_nonzero = float(np.mean(np.abs(surrogate_grad) > 1e-12))
    differs = relative_error(surrogate_grad, smooth_grad)
    binary = bool(np.all((hidden == 0.0) | (hidden == 1.0)))
    spike_count = int(hidden.sum())
    cosine = float(np.sum(surrogate_grad * smooth_grad)
                   / (np.linalg.norm(surrogate_grad) * np.linalg.norm(smooth_grad) or 1.0))
    checks = [
        Check(T("whylab's Leaky layer follows snnTorch's recurrence step by step",
                "whylab 的 Leaky 层逐步遵循 snnTorch 的递推式"),
              trace_error <= 1e-12,
              T(f"max error {trace_error:.1e}", f"最大误差 {trace_error:.1e}"), "≤ 1e-12",
              id="leaky-matches-recurrence"),
        Check(T("The forward pass emits spikes of exactly 0 or 1",
                "前向传播输出的脉冲恰好是 0 或 1"),
              binary and spike_count > 0,
              T(f"{spike_count} spikes, binary: {binary}", f"{spike_count} 个脉冲，二值：{binary}"),
              T("binary, > 0 spikes", "二值，脉冲数 > 0"),
              id="spikes-are-binary"),
        Check(T("BPTT through the smoothed model equals its finite differences",
                "平滑模型的 BPTT 梯度等于其有限差分"),
              smooth_error <= 1e-6,
              T(f"relative error {smooth_error:.1e}", f"相对误差 {smooth_error:.1e}"), "≤ 1e-6",
              id="bptt-equals-fd-smooth"),
        Check(T("The hard model's true gradient is zero almost everywhere: finite differences "
                "of the input weights vanish",
                "硬模型的真实梯度几乎处处为零：输入权重的有限差分为零"),
              zero_fd >= 0.9,
              T(f"{zero_fd:.0%} exactly 0", f"{zero_fd:.0%} 恰为 0"), "≥ 90%", id="hard-fd-zero"),
        Check(T("Yet the surrogate gradient of those weights is not zero",
                "然而这些权重的替代梯度并不为零"),
              surrogate_nonzero >= 0.5,
              T(f"{surrogate_nonzero:.0%} nonzero", f"{surrogate_nonzero:.0%} 非零"), "≥ 50%",
              id="surrogate-is-not-zero"),
        Check(T("The surrogate gradient is not the smoothed model's gradient either",
                "替代梯度也不是平滑模型的梯度"),
              differs >= 0.01,
              T(f"relative difference {differs:.2f}", f"相对差 {differs:.2f}"), "≥ 0.01",
              id="surrogate-differs-from-smooth"),
    ]
    table = Table(
        title=T("Gradients of the input weights", "输入权重的梯度"),
        columns=[T("comparison", "比较"), T("value", "数值")],
        rows=[
            [T("smoothed model: BPTT vs finite differences", "平滑模型：BPTT 与有限差分"),
             f"{smooth_error:.1e}"],
            [T("hard model: finite differences exactly 0", "硬模型：有限差分恰为 0 的比例"),
             f"{zero_fd:.0%}"],
            [T("surrogate vs smoothed gradient: relative difference",
               "替代梯度与平滑模型梯度的相对差"), f"{differs:.2f}"],
            [T("surrogate vs smoothed gradient: cosine", "替代梯度与平滑模型梯度的余弦相似度"),
             f"{cosine:.3f}"],
        ],
    )
    return Result(checks=checks, tables=[table], metrics={"bptt_vs_fd_smooth": smooth_error})
