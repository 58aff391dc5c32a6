"""The spiking-neuron code the experiments run, with the negative controls switched in.

Each experiment takes its integrator, its reset, its spike function, its STDP rule
and its data from here, so a control perturbs the very code whose checks the page
shows passing: a leak with the wrong sign, a reset to the resting potential, an
"Euler" that is really exact, spikes silently interpolated, a reset one step late,
BPTT cut at every step, a surrogate used in the forward pass, a trace decayed by
Euler steps, pre and post swapped, yin and yang swapped, and so on.
:func:`control_active` is False on every ordinary run.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import whylab
from whylab.explorer.experiment import Control, T, control_active
from whylab.snn import eventprop, lif, stdp, ultralif, yinyang
from whylab.snn.network import Leaky

LEAK_WRONG_SIGN = "leak-wrong-sign"
RESET_TO_REST = "reset-to-rest"
EULER_IS_EXACT = "euler-is-exact"
LOCKED_IS_INTERPOLATED = "locked-is-interpolated"
INTERPOLATION_OFF = "interpolation-off"
RESET_ONE_STEP_LATE = "reset-one-step-late"
RESET_SAME_STEP = "reset-same-step"
BPTT_CUT = "bptt-cut-each-step"
SURROGATE_IN_FORWARD = "surrogate-in-forward"
TRUE_GRADIENT = "true-heaviside-gradient"
SHUFFLED_LABELS = "shuffled-labels"
EULER_TRACE_DECAY = "euler-trace-decay"
PRE_POST_SWAPPED = "pre-post-swapped"
YIN_YANG_SWAPPED = "yin-yang-swapped"
NOT_MIRRORED = "not-mirrored"
RANDOM_GOALS = "random-goal-classes"

LABELS = {
    LEAK_WRONG_SIGN: T("the leak has the wrong sign: τ dV/dt = +(V − V_rest) + RI",
                       "泄漏项符号反了：τ dV/dt = +(V − V_rest) + RI"),
    RESET_TO_REST: T("after a spike V is reset to the resting potential, not to V_reset",
                     "发放后膜电位被复位到静息电位，而不是复位电位 V_reset"),
    EULER_IS_EXACT: T("the integrator called Euler is really exact exponential integration",
                      "名为 Euler 的积分器其实是精确指数积分"),
    LOCKED_IS_INTERPOLATED: T("spikes said to be locked to the grid are really interpolated",
                              "号称锁定在网格上的脉冲其实做了插值"),
    INTERPOLATION_OFF: T("spike-time interpolation is switched off",
                         "关闭了脉冲时刻插值"),
    RESET_ONE_STEP_LATE: T("the reset uses the spike of two steps back (one step late)",
                           "复位用的是两步之前的脉冲（晚了一步）"),
    RESET_SAME_STEP: T("the reset uses the spike of the same step instead of the previous one",
                       "复位用的是同一步的脉冲，而不是上一步的"),
    BPTT_CUT: T("the membrane potential is detached between steps, so no gradient flows "
                "through time", "每一步之间把膜电位 detach 掉，梯度无法沿时间传播"),
    SURROGATE_IN_FORWARD: T("the smooth surrogate is used in the forward pass too, so the "
                            "'spikes' are not 0 or 1", "前向传播也用了平滑替代函数，"
                            "“脉冲”不再是 0 或 1"),
    TRUE_GRADIENT: T("the spike's true derivative (zero almost everywhere) is used instead of "
                     "a surrogate", "用脉冲的真实导数（几乎处处为零）代替替代梯度"),
    SHUFFLED_LABELS: T("the training labels are shuffled", "训练标签被打乱"),
    EULER_TRACE_DECAY: T("the traces decay by Euler steps of 1 ms, (1 − 1/τ) per ms, "
                         "not by e^(−Δt/τ)", "迹以 1 ms 的 Euler 步衰减，每 ms 乘 (1 − 1/τ)，"
                         "而不是 e^(−Δt/τ)"),
    PRE_POST_SWAPPED: T("pre- and postsynaptic spike trains are swapped",
                        "突触前与突触后的脉冲序列被互换"),
    YIN_YANG_SWAPPED: T("labels 0 and 1 are swapped (the reference code's variable is_yin "
                        "marks label 1, which its class_names call yang)",
                        "标签 0 和 1 被互换（参考代码中的变量 is_yin 标记的是标签 1，"
                        "而它的 class_names 称之为 yang）"),
    NOT_MIRRORED: T("the inputs repeat (x, y) instead of adding the mirrored (1 − x, 1 − y)",
                    "输入重复了 (x, y)，而不是加上镜像的 (1 − x, 1 − y)"),
    RANDOM_GOALS: T("each sample's goal class is drawn at random, as the reference does, "
                    "so the classes are balanced only in expectation",
                    "像参考实现那样为每个样本随机抽取目标类别，类别只在期望上平衡"),
}


def control(name: str, breaks: tuple[str, ...], **params) -> Control:
    """The control ``name`` with its label, declared to break ``breaks``."""
    return Control(name, LABELS[name], breaks=breaks, params=params)


# ---------------------------------------------------------------- the LIF neuron

def _wrong_leak(v, v_inf, h, tau):
    # V_inf = V_rest + RI, so +(V − V_rest) + RI = V + (V_inf − 2 V_rest); V_rest = 0 here.
    return v + (h / tau) * (v + v_inf)


WRONG_LEAK = lif.Integrator("exact", _wrong_leak)


def integrator(name: str) -> lif.Integrator:
    """The integrator ``name`` of :mod:`whylab.snn.lif`, perturbed by whichever control is on."""
    if control_active(LEAK_WRONG_SIGN):
        return WRONG_LEAK
    if name == "euler" and control_active(EULER_IS_EXACT):
        return lif.EXACT
    return lif.INTEGRATORS[name]


def interpolated(asked: bool) -> bool:
    """Whether the simulation interpolates spike times, perturbed by the controls."""
    if not asked and control_active(LOCKED_IS_INTERPOLATED):
        return True
    if asked and control_active(INTERPOLATION_OFF):
        return False
    return asked


def neuron_params(params: lif.LIFParams) -> lif.LIFParams:
    """The simulated neuron's constants; under its control, reset to the resting potential."""
    if control_active(RESET_TO_REST):
        return dataclasses.replace(params, v_reset=params.v_rest)
    return params


# ---------------------------------------------------------------- BPTT

class _ResetSameStep(Leaky):
    def forward(self, current, mem):
        mem = self.beta * mem + current
        spk = self.spike(mem - self.threshold)
        return spk, mem - (mem.detach() > self.threshold).to(mem.dtype) * self.threshold


class _ResetLate(Leaky):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.previous = None

    def forward(self, current, mem):
        fired_before = self.previous
        self.previous = (mem.detach() > self.threshold).to(mem.dtype)
        fired = fired_before if fired_before is not None else self.previous * 0.0
        mem = self.beta * mem + current - fired * self.threshold
        return self.spike(mem - self.threshold), mem


class _Cut(Leaky):
    def forward(self, current, mem):
        return super().forward(current, mem.detach())


def leaky_layer(beta: float, threshold: float, spike) -> Leaky:
    """The LIF layer of :mod:`whylab.snn.network`, sabotaged by whichever control is on."""
    if control_active(RESET_SAME_STEP):
        return _ResetSameStep(beta, threshold, "subtract", spike)
    if control_active(RESET_ONE_STEP_LATE):
        return _ResetLate(beta, threshold, "subtract", spike)
    if control_active(BPTT_CUT):
        return _Cut(beta, threshold, "subtract", spike)
    return Leaky(beta, threshold, "subtract", spike)


def hard_spike(spike):
    """The hard model's spike function; under its control, the smooth one in the forward pass."""
    if control_active(SURROGATE_IN_FORWARD):
        slope = spike.slope
        return lambda x: whylab.sigmoid(slope * x)
    return spike


def training_spike(spike):
    """The spike function training uses; under its control, the Heaviside's true gradient."""
    if control_active(TRUE_GRADIENT):
        return lambda x: (x > 0).to(x.dtype)  # not differentiable: no gradient reaches V
    return spike


def training_labels(labels: np.ndarray, seed: int) -> np.ndarray:
    """The labels training sees; under its control, shuffled."""
    if control_active(SHUFFLED_LABELS):
        return np.random.default_rng(seed + 1).permutation(labels)
    return labels


# ---------------------------------------------------------------- STDP

class _EulerDecaySTDP(stdp.STDP):
    def weight_change(self, pre_times, post_times):
        # A trace decayed by (1 − 1/τ) per 1 ms step decays as e^(−t/τ') with
        # τ' = −1 / ln(1 − 1/τ): a little faster than e^(−t/τ), the usual grid bug.
        faster = stdp.STDP(self.a_plus, self.a_minus, -1.0 / np.log1p(-1.0 / self.tau_plus),
                           -1.0 / np.log1p(-1.0 / self.tau_minus))
        return faster.weight_change(pre_times, post_times)


def stdp_rule(rule: stdp.STDP) -> stdp.STDP:
    """The plasticity rule the experiment runs; under its control, decayed by Euler steps."""
    if control_active(EULER_TRACE_DECAY):
        return _EulerDecaySTDP(rule.a_plus, rule.a_minus, rule.tau_plus, rule.tau_minus)
    return rule


def spike_pair(pre: np.ndarray, post: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pre, post) as given; under its control, swapped."""
    if control_active(PRE_POST_SWAPPED):
        return post, pre
    return pre, post


# ---------------------------------------------------------------- Yin-Yang

def yin_yang(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`whylab.snn.yinyang.yin_yang`, perturbed by whichever control is on."""
    if control_active(RANDOM_GOALS):
        rng = np.random.default_rng(seed)
        goals = rng.integers(0, 3, n)
        xs = np.empty(n)
        ys = np.empty(n)
        for index, goal in enumerate(goals):
            while True:
                x, y = rng.random(2)
                if yinyang.in_disc(x, y) and yinyang.yin_yang_class(x, y) == goal:
                    xs[index], ys[index] = x, y
                    break
        return np.stack([xs, ys, 1 - xs, 1 - ys], axis=1), goals
    inputs, labels = yinyang.yin_yang(n, seed)
    if control_active(YIN_YANG_SWAPPED):
        labels = np.where(labels == 2, 2, 1 - labels)
    if control_active(NOT_MIRRORED):
        inputs = np.concatenate([inputs[:, :2], inputs[:, :2]], axis=1)
    return inputs, labels


# ---------------------------------------------------------------- EventProp

MISSING_JUMP = "missing-adjoint-jump"
NO_ERROR_BELOW = "no-error-to-hidden-spikes"
LABELS[MISSING_JUMP] = T("the adjoint leaves out the jump at each spike, "
                         "λ_V⁻ = (V̇⁺/V̇⁻)·λ_V⁺ − (∂L/∂t_s)/V̇⁻",
                         "伴随变量在每个脉冲处漏掉了跳变项 λ_V⁻ = (V̇⁺/V̇⁻)·λ_V⁺ − (∂L/∂t_s)/V̇⁻")
LABELS[NO_ERROR_BELOW] = T("the hidden layer's spikes get no share of the error they cause "
                           "downstream (∂L/∂t of the output layer's inputs is dropped)",
                           "隐藏层的脉冲分不到它们在下游造成的误差"
                           "（丢掉了输出层对其输入脉冲时刻的 ∂L/∂t）")


class _NoErrorBelow(eventprop.EventNetwork):
    def spike_grads_below(self, grad_in, below, batch):
        return np.zeros(below.time.size)


def event_network_class() -> type[eventprop.EventNetwork]:
    """:class:`EventNetwork`; under its control, one that passes no error downwards."""
    return _NoErrorBelow if control_active(NO_ERROR_BELOW) else eventprop.EventNetwork


def event_network(lif: eventprop.EventLIF, weights) -> eventprop.EventNetwork:
    return event_network_class()(lif, weights)


def adjoint_jump() -> bool:
    """Whether the adjoint applies its jump at spikes (False under its control)."""
    return not control_active(MISSING_JUMP)


# ---------------------------------------------------------------- UltraLIF

EPS_PREFACTOR_MISSING = "eps-prefactor-missing"
TEMPERATURE_DROPPED = "temperature-dropped"
HARD_THRESHOLD = "hard-threshold"
EPS_FROZEN = "eps-frozen"
LABELS[EPS_PREFACTOR_MISSING] = T("the soft maximum forgets the factor ε: ln(e^(a/ε) + e^(b/ε))",
                                  "软最大值漏掉了因子 ε：写成了 ln(e^(a/ε) + e^(b/ε))")
LABELS[TEMPERATURE_DROPPED] = T("the temperature is dropped: ln(e^a + e^b) whatever ε is",
                                "丢掉了温度：无论 ε 取何值都用 ln(e^a + e^b)")
LABELS[HARD_THRESHOLD] = T("the spike is the hard threshold H(V), forward and backward",
                           "脉冲用的是硬阈值 H(V)，前向和反向都是")
LABELS[EPS_FROZEN] = T("ε is frozen instead of learned", "ε 被冻结，没有参与学习")


def soft_max_plus(a, b, eps):
    """:func:`whylab.snn.ultralif.soft_max_plus`, perturbed by whichever control is on."""
    if control_active(EPS_PREFACTOR_MISSING):
        return whylab.logsumexp(whylab.stack([a / eps, b / eps]), dim=0)
    if control_active(TEMPERATURE_DROPPED):
        return whylab.logsumexp(whylab.stack([a, b]), dim=0)
    return ultralif.soft_max_plus(a, b, eps)


def ultralif_spike(v, eps):
    """s = σ(V/ε); under its control, the hard threshold."""
    if control_active(HARD_THRESHOLD):
        return (v > 0).to(v.dtype)
    return whylab.sigmoid(v / eps)


def learn_eps() -> bool:
    """Whether UltraLIF's ε is trained (not under its control)."""
    return not control_active(EPS_FROZEN)
