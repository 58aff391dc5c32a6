"""Experiments on floating point: ``softmax-ce-stability`` (fused vs separate
cross-entropy as logits grow) and ``finite-differences`` (the V-shaped error of a
central difference).
"""

from __future__ import annotations

import numpy as np

import whylab
from whylab.explorer.experiment import (
    Check,
    Control,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    Table,
    Text,
    control_active,
    experiment,
)
from whylab.topics.autograd.comparisons import (
    central_difference,
    check_if_reached,
    forward_difference,
    gradients_error,
)
from whylab.topics.autograd.expressions import (
    EXPRESSIONS,
    SEED,
    constant,
    evaluate,
    expression_param,
    labels_tensor,
    leaf_tensors,
    make_case,
    one_hot,
    softmax_rows,
)
from whylab.topics.autograd.sabotage import pass_through, replace_backward
from whylab.topics.autograd.stability import (
    DTYPES,
    FORMS,
    beyond_threshold,
    loss_errors,
    losses,
    overflow_logit,
    reference_losses,
    threshold_violations,
    underflow_loss,
)
from whylab.topics.shared import error_check

# ---------------------------------------------------------------- softmax + cross-entropy

STABILITY_BATCH, STABILITY_CLASSES = 32, 10
SCALES_PER_DECADE = 4
FUSED_ERROR_BOUND = {"float32": 1e-6, "float64": 1e-14}  # about 8 and 45 units of rounding
GRADIENT_ERROR_BOUND = {"float32": 1e-6, "float64": 1e-14}
# The smallest max_log10_scale whose logits cross the thresholds, for the page's
# "not applicable" note (32 standard normal directions: the largest logit is about
# 2 to 3 times the scale, so 10^2 reaches 88.7 and 104, 10^3 reaches 710 and 745).
LEAST_SCALE_REACHING = {"float32": 2, "float64": 3}
FORM_NAMES = {"fused": T("fused", "合并"), "separate": T("separate", "分开"),
              "naive": T("naive", "朴素")}
FORM_LABELS = {
    "fused": T("fused: cross_entropy(logits)", "合并：cross_entropy(logits)"),
    "separate": T("separate: −log softmax(z)_y", "分开：−log softmax(z)_y"),
    "naive": T("naive: exp(z)/Σexp(z), then −log", "朴素：exp(z)/Σexp(z) 再取 −log"),
}


def _floating_point_errors_expected():
    """Overflow, division by zero and 0·inf are what this experiment looks for: no warnings."""
    return np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore")


def _first_scale(scales: list[float], flags: list[bool]) -> float | None:
    return next((scale for scale, flag in zip(scales, flags, strict=True) if flag), None)


def _first_failure_text(scale: float | None, disagreeing: int, *, what: Text) -> Text:
    """E.g. "first inf at scale 56.2, 0 samples disagree", in both languages."""
    if scale is None:
        return T(f"{what.en} at no scale, {disagreeing} samples disagree",
                 f"任何尺度下都没有{what.zh}，{disagreeing} 个样本不符")
    return T(f"first {what.en} at scale {scale:.3g}, {disagreeing} samples disagree",
             f"尺度 {scale:.3g} 处首次{what.zh}，{disagreeing} 个样本不符")


NO_SAMPLE_DISAGREES = T("0 samples disagree", "0 个样本不符")


def _finite_or_zero(computed, received):
    """A "safe" log backward: a gradient that is not finite becomes 0."""
    values = computed[0].numpy()
    return [constant(np.where(np.isfinite(values), values, 0.0)).to(computed[0].dtype)]


def _describe_scale(scale: float | None) -> str:
    """A table cell: the scale, or a dash (read in either language) when there is none."""
    return "—" if scale is None else f"{scale:.3g}"


@experiment(
    name="softmax-ce-stability",
    title=T("Cross-entropy: fused on logits vs softmax then log",
            "交叉熵：在 logit 上合并计算 vs 先 softmax 再取对数"),
    description=T(
        "Scales random logits up and computes the per-sample cross-entropy three ways with "
        "whylab, comparing each with an exact decimal reference; also compares the fused "
        "form's gradient with softmax − onehot.",
        "把随机 logit 逐步放大，用 whylab 以三种方式计算每个样本的交叉熵，"
        "并与十进制高精度参考值对照；同时检验合并写法的梯度是否等于 softmax − onehot。",
    ),
    params=[
        Param("max_log10_scale", "int", 3,
              T("largest logit scale 10^k: k", "最大 logit 尺度 10^k：k"),
              minimum=0, maximum=6, step=1),
        Param("dtype", "choice", "float32", T("dtype", "数据类型"), choices=tuple(DTYPES)),
        SEED,
    ],
    controls=[
        Control("fused-unshifted",
                T("the fused form computed log Σ exp(z) without subtracting the largest logit",
                  "合并写法计算 log Σ exp(z) 时没有先减去最大的 logit"),
                breaks=("fused-accurate", "fused-gradient", "fused-gradient-bounded")),
        Control("fused-is-separate",
                T("the “fused” loss were really softmax followed by −log",
                  "所谓“合并”的损失其实是先 softmax 再取 −log"),
                breaks=("fused-accurate", "fused-gradient", "fused-gradient-bounded")),
        Control("log-softmax-rule-forgotten",
                T("log-softmax's backward forgot its Jacobian (gradient −onehot(y))",
                  "log-softmax 的反向忘了它的雅可比矩阵（梯度成了 −onehot(y)）"),
                breaks=("fused-gradient",)),
        Control("threshold-flush-to-zero",
                T("the predicted threshold assumed subnormals flushed to zero (87.3, not 104, "
                  "in float32), which NumPy does not do",
                  "预测的阈值按次正规数被清零来算（float32 下为 87.3 而不是 104），"
                  "而 NumPy 并不清零"),
                breaks=("separate-inf-past-underflow",)),
        Control("log-backward-safe",
                T("log's backward replaced 1/0 by 0 (a “safe” log), so an infinite loss got a "
                  "finite gradient",
                  "log 的反向把 1/0 换成 0（所谓“安全”的 log），无穷大的损失得到了有限的梯度"),
                breaks=("separate-inf-gradient",)),
        Control("naive-shifted",
                T("the naive form subtracted the largest logit after all",
                  "朴素写法其实也减去了最大的 logit"),
                breaks=("naive-overflow",)),
    ],
    metrics=[
        Metric(
            "fused_max_error",
            T("fused cross_entropy: largest relative error", "合并的 cross_entropy：最大相对误差"),
        ),
        Metric(
            "separate_first_inf_scale",
            T(
                "separate −log softmax: first scale giving inf or nan (0: none)",
                "分开计算 −log softmax：首次出现 inf 或 nan 的尺度（0 表示没有）",
            ),
        ),
        Metric(
            "naive_first_failure_scale",
            T(
                "naive exp(z)/Σexp(z): first scale that fails (0: none)",
                "朴素的 exp(z)/Σexp(z)：首次失败的尺度（0 表示没有）",
            ),
        ),
    ],
)
def softmax_ce_stability(max_log10_scale: int, dtype: str, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    whylab_dtype, numpy_dtype = DTYPES[dtype]
    directions = rng.standard_normal((STABILITY_BATCH, STABILITY_CLASSES))
    label_values = rng.integers(0, STABILITY_CLASSES, size=STABILITY_BATCH)
    labels = labels_tensor(label_values)
    scales = [10.0 ** (k / SCALES_PER_DECADE)
              for k in range(SCALES_PER_DECADE * max_log10_scale + 1)]
    underflow = underflow_loss(numpy_dtype,
                               flush_to_zero=control_active("threshold-flush-to-zero"))
    overflow = overflow_logit(numpy_dtype)
    separate_reached = naive_reached = separate_infinite = 0

    worst = {form: [] for form in FORMS}
    non_finite = {form: [] for form in FORMS}
    broken_samples = {form: [] for form in FORMS}
    finite_error = dict.fromkeys(FORMS, 0.0)
    separate_violations = naive_violations = 0
    gradient_error, gradient_range, gradient_finite = 0.0, 0.0, True
    inf_loss_with_finite_gradient = 0
    for scale in scales:
        logits_value = (scale * directions).astype(numpy_dtype)
        reference = reference_losses(logits_value.astype(np.float64), label_values)
        for form in FORMS:
            logits = whylab.from_numpy(logits_value.copy()).requires_grad_()
            with _floating_point_errors_expected():
                values_tensor = losses(form, logits, labels)
            values = values_tensor.detach().numpy()
            errors = loss_errors(values, reference)
            worst[form].append(float(errors.max()))
            non_finite[form].append(bool(np.isinf(errors).any()))
            broken_samples[form].append(int(np.count_nonzero(np.isinf(errors))))
            finite_errors = errors[np.isfinite(errors)]
            if finite_errors.size:
                finite_error[form] = max(finite_error[form], float(finite_errors.max()))
            if form == "fused":
                if control_active("log-softmax-rule-forgotten"):
                    replace_backward(values_tensor, "LogSoftmaxBackward0", pass_through)
                with _floating_point_errors_expected():
                    values_tensor.backward(whylab.ones_like(values_tensor))
                gradient = logits.grad.numpy().astype(np.float64)
                expected = (softmax_rows(logits_value.astype(np.float64))
                            - one_hot(label_values, STABILITY_CLASSES))
                gradient_finite &= bool(np.all(np.isfinite(gradient)))
                gradient_error = max(gradient_error, float(np.abs(gradient - expected).max()))
                gradient_range = max(gradient_range, float(np.abs(gradient).max()))
            elif form == "separate":
                separate_violations += threshold_violations(values, reference, underflow)
                separate_reached += beyond_threshold(reference, underflow)
                separate_infinite += int(np.count_nonzero(~np.isfinite(values)))
                if control_active("log-backward-safe"):
                    replace_backward(values_tensor, "LogBackward0", _finite_or_zero)
                with _floating_point_errors_expected():
                    values_tensor.backward(whylab.ones_like(values_tensor))
                gradient_rows_finite = np.isfinite(logits.grad.numpy()).all(axis=1)
                inf_loss_with_finite_gradient += int(np.count_nonzero(
                    ~np.isfinite(values) & gradient_rows_finite))
            else:
                largest_logit = logits_value.astype(np.float64).max(axis=1)
                naive_violations += threshold_violations(values, largest_logit, overflow,
                                                         both_sides=False)
                naive_reached += beyond_threshold(largest_logit, overflow)

    first_failure = {form: _first_scale(scales, non_finite[form]) for form in FORMS}
    larger_scale = T(f"no sample got past the threshold: needs larger logits, "
                     f"max_log10_scale ≥ {LEAST_SCALE_REACHING[dtype]} in {dtype}",
                     f"没有样本越过阈值：需要更大的 logit，{dtype} 下 max_log10_scale ≥ "
                     f"{LEAST_SCALE_REACHING[dtype]}")
    separate_name = T(f"Separate: −log softmax(z)_y is infinite exactly where the true loss "
                      f"exceeds {underflow:.2f}, where e^(−loss) rounds to zero in {dtype}",
                      f"分开写法：真实损失超过 {underflow:.2f}（{dtype} 中 e^(−损失) 在此舍入为零）"
                      f"时，−log softmax(z)_y 恰好变为无穷大")
    separate_check = check_if_reached(
        separate_reached > 0, separate_name, passed=separate_violations == 0,
        measured=_first_failure_text(first_failure["separate"], separate_violations,
                                     what=T("inf", "出现 inf")),
        expected=NO_SAMPLE_DISAGREES, why=larger_scale, id="separate-inf-past-underflow")
    gradient_check = check_if_reached(
        separate_infinite > 0,
        T("Separate: where the loss is infinite, its gradient is not finite either",
          "分开写法：损失为无穷大的样本，梯度也不是有限值"),
        passed=inf_loss_with_finite_gradient == 0,
        measured=T(f"{inf_loss_with_finite_gradient} of {separate_infinite} with a finite "
                   f"gradient",
                   f"{separate_infinite} 个中有 {inf_loss_with_finite_gradient} 个梯度有限"),
        expected="0", why=larger_scale, id="separate-inf-gradient")
    naive_check = check_if_reached(
        naive_reached > 0,
        T(f"Naive: once the largest logit exceeds log(max {dtype}) = {overflow:.1f}, "
          f"exp overflows and the loss is not finite",
          f"朴素写法：最大 logit 一旦超过 log({dtype} 最大值) = {overflow:.1f}，"
          f"exp 上溢，损失不再是有限值"),
        passed=naive_violations == 0,
        measured=_first_failure_text(first_failure["naive"], naive_violations,
                                     what=T("failure", "失效")),
        expected=NO_SAMPLE_DISAGREES, why=larger_scale, id="naive-overflow")
    checks = [
        Check(T("Fused: accurate at every scale, never inf or nan",
                "合并写法：各个尺度下都准确，从不出现 inf 或 nan"),
              passed=first_failure["fused"] is None
              and max(worst["fused"]) <= FUSED_ERROR_BOUND[dtype],
              measured=T(f"largest error {max(worst['fused']):.1e}",
                         f"最大误差 {max(worst['fused']):.1e}"),
              expected=f"≤ {FUSED_ERROR_BOUND[dtype]:.0e}", id="fused-accurate"),
        separate_check,
        gradient_check,
        naive_check,
        Check(T("Fused gradient = softmax(z) − onehot(y) at every scale",
                "合并写法的梯度在各个尺度下都等于 softmax(z) − onehot(y)"),
              passed=gradient_finite and gradient_error <= GRADIENT_ERROR_BOUND[dtype],
              measured=T(f"max abs error {gradient_error:.1e}",
                         f"最大绝对误差 {gradient_error:.1e}"),
              expected=f"≤ {GRADIENT_ERROR_BOUND[dtype]:.0e}", id="fused-gradient"),
        Check(T("Fused gradient stays between −1 and 1", "合并写法的梯度始终在 −1 与 1 之间"),
              passed=gradient_finite and gradient_range <= 1.0,
              measured=f"max |∂L/∂z| = {gradient_range:.3g}", expected="≤ 1",
              id="fused-gradient-bounded"),
    ]
    chart = LineChart(
        title=T(f"Largest loss error in a batch of {STABILITY_BATCH} ({dtype})",
                f"一批 {STABILITY_BATCH} 个样本中最大的损失误差（{dtype}）"),
        x_label=T("logit scale", "logit 尺度"),
        y_label=T("|loss − exact| / max(1, exact)", "|损失 − 精确值| / max(1, 精确值)"),
        series=[Series(FORM_LABELS[form], scales, worst[form]) for form in FORMS],
        log_x=True, log_y=True,
    )
    broken_chart = LineChart(
        title=T(f"Samples (of {STABILITY_BATCH}) whose loss is inf or nan ({dtype})",
                f"损失为 inf 或 nan 的样本数（共 {STABILITY_BATCH} 个，{dtype}）"),
        x_label=T("logit scale", "logit 尺度"),
        y_label=T("samples", "样本数"),
        series=[Series(FORM_LABELS[form], scales, broken_samples[form]) for form in FORMS],
        log_x=True,
    )
    table = Table(
        title=T("Where each form breaks", "每种写法在哪里失效"),
        columns=[T("form", "写法"), T("first scale with inf or nan", "首次出现 inf 或 nan 的尺度"),
                 T("largest error while finite", "有限时的最大误差")],
        rows=[[FORM_NAMES[form], _describe_scale(first_failure[form]),
               f"{finite_error[form]:.1e}"]
              for form in FORMS],
    )
    return Result(
        checks=checks, figures=[chart, broken_chart], tables=[table],
        metrics={"fused_max_error": max(worst["fused"]),
                 "separate_first_inf_scale": first_failure["separate"] or 0.0,
                 "naive_first_failure_scale": first_failure["naive"] or 0.0},
        notes=[T("In the first chart, a scale where some sample's loss was inf or nan has no "
                 "point (the second chart counts those samples); an error of exactly zero "
                 "cannot be drawn on a log scale either.",
                 "第一张图中，只要有样本的损失为 inf 或 nan，该尺度就不画点（第二张图统计了"
                 "这些样本的个数）；误差恰好为零的点在对数坐标上也画不出来。")],
    )



# ---------------------------------------------------------------- finite differences

SMOOTH_EXPRESSIONS = ("tanh-affine", "softmax-ce")
STEP_EXPONENTS = [k / 2 for k in range(-24, -1)]  # h = 10^-12 ... 10^-1 in half decades
AGREEMENT_AT_CHOSEN_STEP = 1e-6
BEST_ERROR_BOUND = 1e-8
TRUNCATION_FROM, ROUNDING_UP_TO = -3.0, -8.0  # log10 h where each error clearly dominates
SLOPE_TOLERANCE = 0.3
TABLE_ENTRIES = 8


def fitted_slope(exponents: list[float], errors: list[float]) -> float:
    """Slope of log10(error) against log10(h): error ~ h^slope."""
    slope, _ = np.polyfit(exponents, np.log10(errors), 1)
    return float(slope)


def slope_check(name, slope: float, expected: float, *, id: str) -> Check:
    """Pass when a fitted slope is within SLOPE_TOLERANCE of the model's."""
    return Check(name=name, passed=bool(abs(slope - expected) <= SLOPE_TOLERANCE),
                 measured=T(f"slope {slope:.2f}", f"斜率 {slope:.2f}"),
                 expected=f"{expected:g} ± {SLOPE_TOLERANCE}", id=id)


@experiment(
    name="finite-differences",
    title=T("Gradient check: the engine against central differences",
            "梯度检验：引擎与中心差分对照"),
    description=T(
        "Perturbs every parameter of the chosen expression by ±h for step sizes from 10⁻¹² to "
        "10⁻¹ (float64) and measures how far the central difference lies from the engine's "
        "gradient.",
        "对所选表达式的每个参数做 ±h 的扰动，步长从 10⁻¹² 到 10⁻¹（float64），"
        "测量中心差分与引擎梯度相差多少。",
    ),
    params=[
        expression_param(SMOOTH_EXPRESSIONS, "tanh-affine"),
        Param("log10_h", "float", -6.0, T("step h = 10^k: k", "步长 h = 10^k：k"),
              minimum=-12, maximum=-1, step=0.5),
        SEED,
    ],
    controls=[
        Control("tanh-rule-forgotten",
                T("the engine's tanh backward forgot its local derivative 1 − y²",
                  "引擎中 tanh 的反向忘了乘局部导数 1 − y²"),
                breaks=("chosen-step-agrees", "best-step-agrees", "truncation-slope",
                        "rounding-slope")),
        Control("difference-missing-half",
                T("the difference quotient divided by h instead of 2h",
                  "差商除以 h 而不是 2h"),
                breaks=("chosen-step-agrees", "best-step-agrees", "truncation-slope",
                        "rounding-slope")),
        Control("forward-difference",
                T("a forward difference (f(x + h) − f(x))/h were used, whose error falls only "
                  "like h",
                  "改用前向差分 (f(x + h) − f(x))/h，其截断误差只按 h 减小"),
                breaks=("truncation-slope", "best-step-near-optimum")),
    ],
    metrics=[
        Metric("best_error", T("smallest error over the steps h", "各步长 h 中最小的误差")),
        Metric("best_log10_h", T("log₁₀ h at that error", "该误差处的 log₁₀ h")),
        Metric("error_at_chosen_h", T("error at the chosen h", "所选 h 处的误差")),
        Metric(
            "truncation_slope",
            T("slope at large h (truncation: 2)", "大 h 处的斜率（截断误差：2）"),
        ),
        Metric(
            "rounding_slope",
            T("slope at small h (rounding: −1)", "小 h 处的斜率（舍入误差：−1）"),
        ),
    ],
)
def finite_differences(expression: str, log10_h: float, seed: int) -> Result:
    case = make_case(expression, seed)
    leaves = leaf_tensors(case.leaves)
    loss_tensor = case.loss(leaves)
    if control_active("tanh-rule-forgotten") and expression == "tanh-affine":
        replace_backward(loss_tensor, "TanhBackward0", pass_through)
    loss_tensor.backward()
    engine = {name: tensor.grad.numpy() for name, tensor in leaves.items()}

    def loss(values: dict[str, np.ndarray]) -> float:
        return evaluate(case, values)

    def difference(step: float) -> dict[str, np.ndarray]:
        if control_active("forward-difference"):
            return forward_difference(loss, case.leaves, step)
        gradients = central_difference(loss, case.leaves, step)
        if control_active("difference-missing-half"):
            return {name: 2.0 * gradient for name, gradient in gradients.items()}
        return gradients

    errors = [gradients_error(difference(10.0**k), engine) for k in STEP_EXPONENTS]
    chosen = difference(10.0**log10_h)
    chosen_error = gradients_error(chosen, engine)
    best = int(np.argmin(errors))
    large = [k >= TRUNCATION_FROM for k in STEP_EXPONENTS]
    small = [k <= ROUNDING_UP_TO for k in STEP_EXPONENTS]
    truncation_slope = fitted_slope([k for k, f in zip(STEP_EXPONENTS, large, strict=True) if f],
                                    [e for e, f in zip(errors, large, strict=True) if f])
    rounding_slope = fitted_slope([k for k, f in zip(STEP_EXPONENTS, small, strict=True) if f],
                                  [e for e, f in zip(errors, small, strict=True) if f])
    optimum = float(np.finfo(np.float64).eps) ** (1 / 3)
    distance = abs(STEP_EXPONENTS[best] - np.log10(optimum))

    checks = [
        error_check(T(f"At your step h = 10^{log10_h:g} the engine agrees with the central "
                          f"difference", f"在你选的步长 h = 10^{log10_h:g} 下，引擎与中心差分一致"),
                        chosen_error, AGREEMENT_AT_CHOSEN_STEP, id="chosen-step-agrees"),
        error_check(T("At the bottom of the V the agreement is close to float64 rounding",
                          "在 V 字底部，两者的差距接近 float64 的舍入误差"),
                        errors[best], BEST_ERROR_BOUND, id="best-step-agrees"),
        slope_check(T(f"Truncation: for h ≥ 10^{TRUNCATION_FROM:g} the error grows like h²",
                      f"截断误差：h ≥ 10^{TRUNCATION_FROM:g} 时误差按 h² 增长"),
                    truncation_slope, 2.0, id="truncation-slope"),
        slope_check(T(f"Rounding: for h ≤ 10^{ROUNDING_UP_TO:g} the error grows like ε/h",
                      f"舍入误差：h ≤ 10^{ROUNDING_UP_TO:g} 时误差按 ε/h 增长"),
                    rounding_slope, -1.0, id="rounding-slope"),
        Check(T("The best step lies near ε^(1/3) ≈ 6e-6 (within 1.5 decades)",
                "最佳步长在 ε^(1/3) ≈ 6e-6 附近（相差不超过 1.5 个数量级）"),
              passed=bool(distance <= 1.5),
              measured=T(f"best h = 10^{STEP_EXPONENTS[best]:g}",
                         f"最佳 h = 10^{STEP_EXPONENTS[best]:g}"),
              expected=f"10^{np.log10(optimum) - 1.5:.1f} … 10^{np.log10(optimum) + 1.5:.1f}",
              id="best-step-near-optimum"),
    ]
    rows = []
    for name in sorted(engine):
        for index in np.ndindex(engine[name].shape):
            if len(rows) < TABLE_ENTRIES:
                where = f"{name}[{', '.join(str(i) for i in index)}]"
                rows.append([where, f"{engine[name][index]:.12g}", f"{chosen[name][index]:.12g}",
                             f"{abs(engine[name][index] - chosen[name][index]):.1e}"])
    label = EXPRESSIONS[expression].label
    return Result(
        checks=checks,
        figures=[LineChart(
            title=T(f"Central difference vs engine: {label.en}", f"中心差分与引擎之差：{label.zh}"),
            x_label=T("step h", "步长 h"),
            y_label=T("relative error", "相对误差"),
            series=[Series(T("max |difference − engine| / max |engine|",
                             "max |差分 − 引擎| / max |引擎|"),
                           [10.0**k for k in STEP_EXPONENTS], errors)],
            log_x=True, log_y=True)],
        tables=[Table(
            title=T(f"The first entries at h = 10^{log10_h:g}",
                    f"h = 10^{log10_h:g} 时的前几个分量"),
            columns=[T("parameter", "参数"), T("engine", "引擎"),
                     T("central difference", "中心差分"), T("difference", "差")],
            rows=rows)],
        metrics={"best_error": errors[best], "best_log10_h": STEP_EXPONENTS[best],
                 "error_at_chosen_h": chosen_error, "truncation_slope": truncation_slope,
                 "rounding_slope": rounding_slope},
    )
