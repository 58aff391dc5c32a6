"""Experiments for "the mini autograd": the recorded graph, forward vs reverse mode, the
local backward rules, softmax/cross-entropy stability, fan-out, finite differences and a
trained two-layer classifier.

Everything runs whylab's engine: graphs come from
:func:`whylab.autograd.graph_export.to_json`, the execution order and buffer sums
from :func:`whylab.autograd.engine_trace`, gradients from ``backward()`` and
:func:`whylab.autograd.grad`. Each is compared with a reference that does not use
the engine: a formula written out in NumPy, central finite differences, or exact
decimal arithmetic. A reader's "expression" is a choice among the functions in
:mod:`whylab.topics.autograd.expressions`; nothing a reader sends is evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import whylab
import whylab.nn as nn
import whylab.nn.functional as F
import whylab.optim
from whylab.autograd.graph_export import to_json
from whylab.explorer.experiment import (
    Check,
    LineChart,
    Param,
    Result,
    Series,
    T,
    Table,
    experiment,
    report_progress,
)
from whylab.topics.autograd.backward_trace import (
    dependency_mismatches,
    diagram,
    execution_table,
    product_nodes,
    runs_in_dependency_order,
    trace_backward,
    unneeded_saves,
)
from whylab.topics.autograd.comparisons import (
    agreement_check,
    central_difference,
    equality_check,
    gradients_error,
    relative_error,
)
from whylab.topics.autograd.datasets import DATASETS, class_count, make_dataset
from whylab.topics.autograd.expressions import (
    EXPRESSIONS,
    constant,
    evaluate,
    expected_nodes,
    labels_tensor,
    leaf_tensors,
    make_case,
    mlp_backward,
    one_hot,
    softmax_rows,
)
from whylab.topics.autograd.stability import (
    DTYPES,
    FORMS,
    loss_errors,
    losses,
    overflow_logit,
    reference_losses,
    threshold_violations,
    underflow_loss,
)

EXACT_TOLERANCE = 1e-12  # engine vs a formula in float64: only rounding differs
SEED = Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
             seed=True)


def _expression_param(keys: tuple[str, ...], default: str) -> Param:
    return Param("expression", "choice", default, T("expression", "表达式"), choices=keys,
                 choice_labels=tuple(EXPRESSIONS[k].label for k in keys))


# ---------------------------------------------------------------- 1. the recorded graph


@experiment(
    name="graph",
    title=T("The graph the engine records", "引擎记录下的计算图"),
    description=T(
        "Runs the chosen expression once with whylab, draws the autograd graph it recorded "
        "(exported by whylab.autograd.graph_export), then runs backward() and lists what the "
        "engine did, step by step.",
        "用 whylab 运行一次所选表达式，画出它记录的自动微分计算图"
        "（由 whylab.autograd.graph_export 导出），再调用 backward()，逐步列出引擎做了什么。",
    ),
    params=[_expression_param(tuple(EXPRESSIONS), "tanh-affine"), SEED],
)
def graph(expression: str, seed: int) -> Result:
    case = make_case(expression, seed)
    leaves = leaf_tensors(case.leaves)
    loss = case.loss(leaves)
    with whylab.no_grad():
        untracked = case.loss(leaves)
    trace = trace_backward(loss, leaves)

    recorded = sorted(n["name"] for n in trace.nodes if n["kind"] != "leaf")
    leaf_nodes = sorted(trace.leaf_names.values())
    engine_gradients = {name: t.grad.numpy() for name, t in leaves.items()}
    mismatched = dependency_mismatches(trace)
    checks = [
        equality_check(T("One AccumulateGrad node per leaf that requires grad (data gets none)",
                         "每个需要梯度的叶子对应一个 AccumulateGrad 节点（数据没有）"),
                       leaf_nodes, sorted(case.leaves)),
        equality_check(T("The recorded grad_fn nodes are the expression's operations",
                         "记录下的 grad_fn 节点正是表达式中的运算"),
                       recorded, expected_nodes(case)),
        agreement_check(T("The engine's gradients equal the hand-derived formula",
                          "引擎算出的梯度等于手推公式"),
                        gradients_error(engine_gradients, case.gradient(case.leaves)),
                        EXACT_TOLERANCE),
        Check(T("Under no_grad nothing is recorded", "在 no_grad 下什么也不记录"),
              passed=untracked.grad_fn is None and not untracked.requires_grad,
              measured=f"grad_fn = {untracked.grad_fn.name() if untracked.grad_fn else None}",
              expected="grad_fn = None"),
        Check(T("Each node's dependency count equals the edges pointing at it",
                "每个节点的依赖计数等于指向它的边数"),
              passed=not mismatched,
              measured="all equal" if not mismatched else f"differs at {mismatched}",
              expected="all equal"),
        Check(T("Each node ran once, after every node that sends it a gradient",
                "每个节点只执行一次，且在所有给它传梯度的节点之后"),
              passed=runs_in_dependency_order(trace),
              measured=f"{len(trace.executed)} runs for {len(trace.nodes)} nodes",
              expected="one run per node, in dependency order"),
        Check(T("Products save only the factors their needed rules use (Ā = ȲBᵀ needs B, "
                "B̄ = AᵀȲ needs A)",
                "乘法只保存用得到的因子（Ā = ȲBᵀ 要用 B，B̄ = AᵀȲ 要用 A）"),
              passed=product_nodes(trace) > 0 and not unneeded_saves(trace),
              measured=f"{product_nodes(trace)} product nodes, "
                       f"{len(unneeded_saves(trace))} keep something else",
              expected="> 0 product nodes, 0 keep something else"),
        Check(T("Saved tensors are freed once the backward pass has used them",
                "反向传播用过之后，保存的张量被释放"),
              passed=trace.saved_before() > 0 and trace.saved_after == 0,
              measured=f"{trace.saved_before()} saved before, {trace.saved_after} after",
              expected="> 0 before, 0 after"),
    ]
    label = EXPRESSIONS[expression].label
    return Result(
        checks=checks,
        figures=[diagram(trace, T(f"Autograd graph of {label.en}",
                                  f"{label.zh} 的自动微分计算图"))],
        tables=[execution_table(trace)],
        metrics={"nodes": len(trace.nodes), "edges": len(trace.edges),
                 "leaves": len(trace.leaf_names), "saved_tensors": trace.saved_before(),
                 "loss": float(loss.item())},
        notes=[T("Edges point the way gradients flow, from the loss towards the leaves; each is "
                 "labelled with the shape of the gradient it carries.",
                 "边的方向就是梯度流动的方向：从损失指向叶子；边上标注的是它所传梯度的形状。")],
    )


# ---------------------------------------------------------------- 2. forward vs reverse mode

HIDDEN_WIDTH = 8
FD_STEP = 1e-6  # central differences in float64: error near 1e-10, far below the tolerance
FD_TOLERANCE = 1e-7


@dataclass(frozen=True)
class SmallMap:
    """f(x) = W2 tanh(W1 x + c), from R^n to R^m: the function whose Jacobian we build."""

    w1: np.ndarray
    c: np.ndarray
    w2: np.ndarray

    def __call__(self, x: whylab.Tensor) -> whylab.Tensor:
        return constant(self.w2).mv((constant(self.w1).mv(x) + constant(self.c)).tanh())

    def tangent(self, x: whylab.Tensor, v: whylab.Tensor) -> whylab.Tensor:
        """One forward-mode pass: J v from the tangent rule of each operation in turn."""
        with whylab.no_grad():
            hidden = (constant(self.w1).mv(x) + constant(self.c)).tanh()
            d_pre = constant(self.w1).mv(v)  # d(W1 x + c) = W1 dx
            d_hidden = (1 - hidden * hidden) * d_pre  # d tanh(u) = (1 - tanh(u)^2) du
            return constant(self.w2).mv(d_hidden)  # d(W2 h) = W2 dh


def unit_vector(size: int, index: int) -> whylab.Tensor:
    vector = np.zeros(size)
    vector[index] = 1.0
    return constant(vector)


def count_engine_passes(trace) -> int:
    """Backward passes in an engine trace: each starts by counting dependencies."""
    return sum(event["kind"] == "dependencies" for event in trace.events)


@experiment(
    name="modes",
    title=T("A Jacobian by reverse mode and by forward mode", "用反向模式和前向模式构造雅可比矩阵"),
    description=T(
        "Builds the m×n Jacobian of f(x) = W₂ tanh(W₁x + c) row by row with the engine's "
        "vector-Jacobian products, and column by column with Jacobian-vector products, counting "
        "the passes each needs.",
        "用引擎的向量–雅可比积逐行、用雅可比–向量积逐列构造 f(x) = W₂ tanh(W₁x + c) 的 m×n "
        "雅可比矩阵，并统计两种方式各走了几遍。",
    ),
    params=[
        Param("inputs", "int", 6, T("inputs n", "输入维数 n"), minimum=1, maximum=32, step=1),
        Param("outputs", "int", 2, T("outputs m", "输出维数 m"), minimum=1, maximum=32, step=1),
        SEED,
    ],
)
def modes(inputs: int, outputs: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    f = SmallMap(rng.standard_normal((HIDDEN_WIDTH, inputs)) / np.sqrt(inputs),
                 0.1 * rng.standard_normal(HIDDEN_WIDTH),
                 rng.standard_normal((outputs, HIDDEN_WIDTH)) / np.sqrt(HIDDEN_WIDTH))
    x_value = rng.standard_normal(inputs)
    x = constant(x_value).requires_grad_()
    y = f(x)

    with whylab.autograd.engine_trace() as reverse_trace:
        rows = [whylab.autograd.grad(y, x, grad_outputs=unit_vector(outputs, i),
                                     retain_graph=True)[0].numpy() for i in range(outputs)]
    reverse_jacobian = np.stack(rows)
    forward_jacobian = np.stack([f.tangent(x.detach(), unit_vector(inputs, j)).numpy()
                                 for j in range(inputs)], axis=1)

    def f_numpy(values: dict[str, np.ndarray]) -> np.ndarray:
        with whylab.no_grad():
            return f(constant(values["x"])).numpy()

    difference_jacobian = np.stack(
        [central_difference(lambda v, i=i: float(f_numpy(v)[i]), {"x": x_value}, FD_STEP)["x"]
         for i in range(outputs)])

    u = rng.standard_normal(outputs)
    (vjp,) = whylab.autograd.grad(y, x, grad_outputs=constant(u), retain_graph=True)
    loss = 0.5 * (y * y).sum()
    with whylab.autograd.engine_trace() as scalar_trace:
        loss.backward()
    y_value = y.detach().numpy()

    checks = [
        agreement_check(T("Reverse mode: m engine passes give the Jacobian, one row each "
                          "(vs finite differences)",
                          "反向模式：引擎走 m 遍得到雅可比矩阵，每遍一行（与有限差分对照）"),
                        relative_error(reverse_jacobian, difference_jacobian), FD_TOLERANCE),
        agreement_check(T("Forward mode: n tangent passes give the same Jacobian, one column each",
                          "前向模式：走 n 遍切向量传播得到同一个雅可比矩阵，每遍一列"),
                        relative_error(forward_jacobian, reverse_jacobian), EXACT_TOLERANCE),
        equality_check(T("Engine passes used for the full Jacobian = m",
                         "构造完整雅可比矩阵时引擎走的遍数 = m"),
                       count_engine_passes(reverse_trace), outputs),
        agreement_check(T("One engine pass with a cotangent u gives uᵀJ without forming J",
                          "带余切向量 u 的一遍反向传播直接给出 uᵀJ，无需构造 J"),
                        relative_error(vjp.numpy(), u @ reverse_jacobian), EXACT_TOLERANCE),
        equality_check(T("For the scalar L = ½‖f(x)‖², backward() runs one engine pass",
                         "对标量 L = ½‖f(x)‖²，backward() 只让引擎走一遍"),
                       count_engine_passes(scalar_trace), 1),
        agreement_check(T("That one pass gives all n derivatives, ∇L = Jᵀf(x)",
                          "这一遍就给出全部 n 个导数：∇L = Jᵀf(x)"),
                        relative_error(x.grad.numpy(), reverse_jacobian.T @ y_value),
                        EXACT_TOLERANCE),
    ]
    table = Table(
        title=T("Passes run here for the whole Jacobian", "本次构造整个雅可比矩阵实际走的遍数"),
        columns=[T("Jacobian size m × n", "雅可比矩阵大小 m × n"),
                 T("reverse passes (engine; one row uᵀJ each)", "反向遍数（引擎；每遍一行 uᵀJ）"),
                 T("forward passes (one column Jv each)", "前向遍数（每遍一列 Jv）")],
        rows=[[f"{outputs} × {inputs}", count_engine_passes(reverse_trace),
               forward_jacobian.shape[1]]],
    )
    return Result(
        checks=checks,
        tables=[table],
        metrics={"n": inputs, "m": outputs, "reverse_passes": count_engine_passes(reverse_trace),
                 "forward_passes": inputs,
                 "max_abs_jacobian_entry": float(np.abs(reverse_jacobian).max())},
    )


# ---------------------------------------------------------------- 3. local rules

SYMMETRY_TOLERANCE = 1e-14


def _inner(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sum(a * b))


def _no_grad_value(fn, values: dict[str, np.ndarray]) -> float:
    with whylab.no_grad():
        return float(fn({k: constant(v) for k, v in values.items()}).item())


@experiment(
    name="local-rules",
    title=T("Local backward rules, one operation at a time", "逐个运算检验局部反向规则"),
    description=T(
        "Feeds a random upstream gradient into the engine's backward of matmul, ReLU, softmax "
        "and cross-entropy, and compares what comes out with the formulas on this page and with "
        "finite differences.",
        "给矩阵乘法、ReLU、softmax 和交叉熵的反向节点输入随机的上游梯度，"
        "把引擎的输出与本页公式以及有限差分逐一对照。",
    ),
    params=[
        Param("classes", "int", 5, T("softmax classes K", "softmax 类别数 K"), minimum=2,
              maximum=32, step=1),
        SEED,
    ],
)
def local_rules(classes: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    rows, formula_errors, difference_errors = [], {}, {}

    # Matrix product Y = AB with upstream gradient G.
    a_value, b_value = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    upstream = rng.standard_normal((3, 2))
    a, b = constant(a_value).requires_grad_(), constant(b_value).requires_grad_()
    (a @ b).backward(constant(upstream))
    engine = {"A": a.grad.numpy(), "B": b.grad.numpy()}
    formula_errors["matmul"] = gradients_error(
        engine, {"A": upstream @ b_value.T, "B": a_value.T @ upstream})
    difference_errors["matmul"] = gradients_error(engine, central_difference(
        lambda v: _no_grad_value(lambda t: ((t["A"] @ t["B"]) * constant(upstream)).sum(), v),
        {"A": a_value, "B": b_value}, FD_STEP))

    # ReLU with two inputs exactly at zero.
    x_value = rng.standard_normal(8)
    x_value[:2] = 0.0
    g = rng.standard_normal(8)
    x = constant(x_value).requires_grad_()
    x.relu().backward(constant(g))
    relu_grad = x.grad.numpy()
    formula_errors["relu"] = relative_error(relu_grad, g * (x_value > 0))
    away = x_value != 0  # a central difference straddles the kink at exactly zero
    relu_difference = central_difference(
        lambda v: _no_grad_value(lambda t: (t["x"].relu() * constant(g)).sum(), v),
        {"x": x_value}, FD_STEP)["x"]
    difference_errors["relu"] = relative_error(relu_grad[away], relu_difference[away])

    # Softmax: one vector-Jacobian product, and the whole Jacobian from K engine passes.
    z_value, g = rng.standard_normal(classes), rng.standard_normal(classes)
    z = constant(z_value).requires_grad_()
    s = whylab.softmax(z, 0)
    (softmax_vjp,) = whylab.autograd.grad(s, z, grad_outputs=constant(g), retain_graph=True)
    s_value = s.detach().numpy()
    jacobian = np.stack([whylab.autograd.grad(s, z, grad_outputs=unit_vector(classes, i),
                                              retain_graph=True)[0].numpy()
                         for i in range(classes)])
    jacobian_formula = np.diag(s_value) - np.outer(s_value, s_value)
    formula_errors["softmax"] = relative_error(softmax_vjp.numpy(),
                                               s_value * (g - _inner(g, s_value)))
    difference_errors["softmax"] = relative_error(softmax_vjp.numpy(), central_difference(
        lambda v: _no_grad_value(lambda t: (whylab.softmax(t["z"], 0) * constant(g)).sum(), v),
        {"z": z_value}, FD_STEP)["z"])
    softmax_saved = [item["shape"] for node in to_json(s)["nodes"] for item in node["saved"]]
    scale = float(np.abs(jacobian).max())
    asymmetry = float(np.abs(jacobian - jacobian.T).max()) / scale
    row_sums = float(np.abs(jacobian.sum(axis=1)).max()) / scale

    # Cross-entropy of one sample's logits.
    target = int(rng.integers(0, classes))
    logits = constant(z_value[None, :]).requires_grad_()
    F.cross_entropy(logits, labels_tensor(np.array([target]))).backward()
    ce_grad = logits.grad.numpy()[0]
    formula_errors["cross-entropy"] = relative_error(ce_grad, s_value - np.eye(classes)[target])
    difference_errors["cross-entropy"] = relative_error(ce_grad, central_difference(
        lambda v: _no_grad_value(lambda t: F.cross_entropy(
            t["z"][None, :], labels_tensor(np.array([target]))), v),
        {"z": z_value}, FD_STEP)["z"])

    formulas = {"matmul": "Ā = Ȳ Bᵀ, B̄ = Aᵀ Ȳ", "relu": "x̄ = ȳ ⊙ 1[x > 0]",
                "softmax": "s ⊙ (g − ⟨g, s⟩)", "cross-entropy": "s − onehot(y)"}
    for rule, formula in formulas.items():
        rows.append([rule, formula, f"{formula_errors[rule]:.1e}",
                     f"{difference_errors[rule]:.1e}"])
    checks = [
        agreement_check(T("matmul: Ā = ȲBᵀ and B̄ = AᵀȲ", "矩阵乘法：Ā = ȲBᵀ，B̄ = AᵀȲ"),
                        formula_errors["matmul"], EXACT_TOLERANCE),
        agreement_check(T("ReLU: the gradient passes only where x > 0",
                          "ReLU：梯度只在 x > 0 处通过"),
                        formula_errors["relu"], EXACT_TOLERANCE),
        equality_check(T("ReLU at exactly x = 0: gradient 0 (PyTorch's convention)",
                         "ReLU 在 x 恰为 0 处梯度为 0（与 PyTorch 一致）"),
                       [float(v) for v in relu_grad[:2]], [0.0, 0.0]),
        agreement_check(T("softmax backward = s ⊙ (g − ⟨g, s⟩)", "softmax 反向 = s ⊙ (g − ⟨g, s⟩)"),
                        formula_errors["softmax"], EXACT_TOLERANCE),
        equality_check(T("The softmax node keeps only its output s (K numbers), not the K×K "
                         "Jacobian", "softmax 节点只保存输出 s（K 个数），而不是 K×K 的雅可比矩阵"),
                       softmax_saved, [[classes]]),
        agreement_check(T("softmax Jacobian from K engine passes = diag(s) − ssᵀ",
                          "引擎走 K 遍得到的 softmax 雅可比矩阵 = diag(s) − ssᵀ"),
                        relative_error(jacobian, jacobian_formula), EXACT_TOLERANCE),
        Check(T("The softmax Jacobian is symmetric and its rows sum to zero",
                "softmax 雅可比矩阵对称，且每行之和为零"),
              passed=max(asymmetry, row_sums) <= SYMMETRY_TOLERANCE,
              measured=f"asymmetry {asymmetry:.1e}, row sums {row_sums:.1e}",
              expected=f"both ≤ {SYMMETRY_TOLERANCE:.0e}"),
        agreement_check(T("cross-entropy: ∂L/∂z = s − onehot(y)", "交叉熵：∂L/∂z = s − onehot(y)"),
                        formula_errors["cross-entropy"], EXACT_TOLERANCE),
        agreement_check(T("Every rule agrees with central finite differences",
                          "每条规则都与中心差分一致"),
                        max(difference_errors.values()), FD_TOLERANCE),
    ]
    table = Table(
        title=T("Each rule against its formula and against finite differences",
                "各条规则与公式、与有限差分的对照"),
        columns=[T("operation", "运算"), T("rule", "规则"), T("error vs formula", "与公式之差"),
                 T("error vs finite differences", "与有限差分之差")],
        rows=rows,
    )
    return Result(checks=checks, tables=[table],
                  metrics={"classes": classes, "target_class": target,
                           "softmax_jacobian_asymmetry": asymmetry})


# ---------------------------------------------------------------- 4. softmax + cross-entropy

STABILITY_BATCH, STABILITY_CLASSES = 32, 10
SCALES_PER_DECADE = 4
FUSED_ERROR_BOUND = {"float32": 1e-6, "float64": 1e-14}  # about 8 and 45 units of rounding
GRADIENT_ERROR_BOUND = {"float32": 1e-6, "float64": 1e-14}
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


def _describe_scale(scale: float | None) -> str:
    return "never" if scale is None else f"{scale:.3g}"


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
)
def softmax_ce_stability(max_log10_scale: int, dtype: str, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    whylab_dtype, numpy_dtype = DTYPES[dtype]
    directions = rng.standard_normal((STABILITY_BATCH, STABILITY_CLASSES))
    label_values = rng.integers(0, STABILITY_CLASSES, size=STABILITY_BATCH)
    labels = labels_tensor(label_values)
    scales = [10.0 ** (k / SCALES_PER_DECADE)
              for k in range(SCALES_PER_DECADE * max_log10_scale + 1)]
    underflow, overflow = underflow_loss(numpy_dtype), overflow_logit(numpy_dtype)

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
                values_tensor.backward(whylab.ones_like(values_tensor))
                gradient = logits.grad.numpy().astype(np.float64)
                expected = (softmax_rows(logits_value.astype(np.float64))
                            - one_hot(label_values, STABILITY_CLASSES))
                gradient_finite &= bool(np.all(np.isfinite(gradient)))
                gradient_error = max(gradient_error, float(np.abs(gradient - expected).max()))
                gradient_range = max(gradient_range, float(np.abs(gradient).max()))
            elif form == "separate":
                separate_violations += threshold_violations(values, reference, underflow)
                with _floating_point_errors_expected():
                    values_tensor.backward(whylab.ones_like(values_tensor))
                gradient_rows_finite = np.isfinite(logits.grad.numpy()).all(axis=1)
                inf_loss_with_finite_gradient += int(np.count_nonzero(
                    ~np.isfinite(values) & gradient_rows_finite))
            else:
                largest_logit = logits_value.astype(np.float64).max(axis=1)
                naive_violations += threshold_violations(values, largest_logit, overflow,
                                                         both_sides=False)

    first_failure = {form: _first_scale(scales, non_finite[form]) for form in FORMS}
    checks = [
        Check(T("Fused: accurate at every scale, never inf or nan",
                "合并写法：各个尺度下都准确，从不出现 inf 或 nan"),
              passed=first_failure["fused"] is None
              and max(worst["fused"]) <= FUSED_ERROR_BOUND[dtype],
              measured=f"largest error {max(worst['fused']):.1e}",
              expected=f"≤ {FUSED_ERROR_BOUND[dtype]:.0e}"),
        Check(T(f"Separate: −log softmax(z)_y is infinite exactly where the true loss exceeds "
                f"−log(smallest {dtype}) = {underflow:.1f}",
                f"分开写法：当真实损失超过 −log({dtype} 最小正数) = {underflow:.1f} 时，"
                f"−log softmax(z)_y 恰好变为无穷大"),
              passed=separate_violations == 0,
              measured=f"first inf at scale {_describe_scale(first_failure['separate'])}, "
                       f"{separate_violations} samples disagree",
              expected="0 samples disagree"),
        Check(T("Separate: where the loss is infinite, its gradient is not finite either",
                "分开写法：损失为无穷大的样本，梯度也不是有限值"),
              passed=inf_loss_with_finite_gradient == 0,
              measured=f"{inf_loss_with_finite_gradient} samples with a finite gradient",
              expected="0"),
        Check(T(f"Naive: once the largest logit exceeds log(max {dtype}) = {overflow:.1f}, "
                f"exp overflows and the loss is not finite",
                f"朴素写法：最大 logit 一旦超过 log({dtype} 最大值) = {overflow:.1f}，"
                f"exp 上溢，损失不再是有限值"),
              passed=naive_violations == 0,
              measured=f"first failure at scale {_describe_scale(first_failure['naive'])}, "
                       f"{naive_violations} samples disagree",
              expected="0 samples disagree"),
        Check(T("Fused gradient = softmax(z) − onehot(y) at every scale",
                "合并写法的梯度在各个尺度下都等于 softmax(z) − onehot(y)"),
              passed=gradient_finite and gradient_error <= GRADIENT_ERROR_BOUND[dtype],
              measured=f"max abs error {gradient_error:.1e}",
              expected=f"≤ {GRADIENT_ERROR_BOUND[dtype]:.0e}"),
        Check(T("Fused gradient stays between −1 and 1", "合并写法的梯度始终在 −1 与 1 之间"),
              passed=gradient_finite and gradient_range <= 1.0,
              measured=f"max |gradient| {gradient_range:.3g}", expected="≤ 1"),
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
        rows=[[form, _describe_scale(first_failure[form]), f"{finite_error[form]:.1e}"]
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


# ---------------------------------------------------------------- 5. fan-out


def _counts_by_name(trace, per_node: dict[str, int]) -> dict[str, int]:
    return {trace.node(node_id)["name"]: count for node_id, count in sorted(per_node.items())}


@experiment(
    name="fan-out",
    title=T("Fan-out: b = a + a, c = b · b", "扇出：b = a + a，c = b · b"),
    description=T(
        "Both operations use their input twice, so gradients must be summed twice on the way "
        "back. Shows the engine's dependency counts, input-buffer sums and AccumulateGrad "
        "writes, and what repeated backward passes do to a.grad.",
        "两个运算都把输入用了两次，所以反向时梯度要累加两次。"
        "本实验展示引擎的依赖计数、输入缓冲区累加和 AccumulateGrad 的写入，"
        "以及多次反向传播对 a.grad 的影响。",
    ),
    params=[
        Param("size", "int", 3, T("length of a", "a 的长度"), minimum=1, maximum=8, step=1),
        Param("passes", "int", 2, T("backward passes before clearing a.grad",
                                    "清零 a.grad 之前的反向传播次数"),
              minimum=1, maximum=4, step=1),
        SEED,
    ],
)
def fan_out(size: int, passes: int, seed: int) -> Result:
    a_value = np.random.default_rng(seed).standard_normal(size)
    a = constant(a_value).requires_grad_()
    b = a + a
    c = b * b
    seed_gradient = whylab.ones_like(c)
    trace = trace_backward(c, {"a": a}, grad_output=seed_gradient, retain_graph=True)
    after_one = a.grad.numpy().copy()
    with whylab.autograd.engine_trace() as later:
        for _ in range(passes - 1):
            c.backward(seed_gradient, retain_graph=True)
    after_all = a.grad.numpy().copy()
    writes = trace.grad_writes[next(iter(trace.leaf_names))] + [
        event["mode"] for event in later.events if event["kind"] == "accumulate_grad"]
    a.grad = None  # what optimizer.zero_grad() does
    c.backward(seed_gradient)
    after_clearing = a.grad.numpy()

    checks = [
        agreement_check(T("One pass gives ∂c/∂a = 8a", "一遍反向传播得到 ∂c/∂a = 8a"),
                        relative_error(after_one, 8 * a_value), EXACT_TOLERANCE),
        equality_check(T("Dependency counts: each node waits for every edge into it",
                         "依赖计数：每个节点等齐所有指向它的边"),
                       _counts_by_name(trace, trace.dependencies),
                       {"MulBackward0": 1, "AddBackward0": 2, "AccumulateGrad": 2}),
        equality_check(T("Input buffers summed two gradients at b's node and two at a's",
                         "输入缓冲区在 b 的节点和 a 的节点各累加了两个梯度"),
                       _counts_by_name(trace, {node: adds + 1 for node, adds
                                               in trace.buffer_sums.items()}),
                       {"AddBackward0": 2, "AccumulateGrad": 2}),
        Check(T("Each node ran once, with the full sum", "每个节点只执行一次，拿到的是完整的和"),
              passed=runs_in_dependency_order(trace),
              measured=f"{len(trace.executed)} runs for {len(trace.nodes)} nodes",
              expected="one run per node"),
        agreement_check(T(f"After {passes} passes AccumulateGrad has added them up: "
                          f"a.grad = {passes}·8a",
                          f"{passes} 遍之后 AccumulateGrad 把它们加在一起：a.grad = {passes}·8a"),
                        relative_error(after_all, passes * 8 * a_value), EXACT_TOLERANCE),
        equality_check(T("AccumulateGrad writes .grad first, then adds to it",
                         "AccumulateGrad 第一次写入 .grad，之后都是累加"),
                       [mode if mode == "add" else "write" for mode in writes],
                       ["write"] + ["add"] * (passes - 1)),
        agreement_check(T("After clearing a.grad, one pass gives 8a again",
                          "清零 a.grad 后，再走一遍又得到 8a"),
                        relative_error(after_clearing, 8 * a_value), EXACT_TOLERANCE),
    ]
    return Result(
        checks=checks,
        figures=[diagram(trace, T("Autograd graph of c = (a + a) · (a + a)",
                                  "c = (a + a) · (a + a) 的自动微分计算图"))],
        tables=[execution_table(trace)],
        metrics={"passes": passes, "grad_over_a_after_passes": float(after_all[0] / a_value[0])
                 if a_value[0] else 0.0},
        notes=[T("Two edges leave each node because each operation used its input twice; the "
                 "engine sums what arrives over both before running the next node.",
                 "每个节点都引出两条边，因为每个运算都把输入用了两次；"
                 "引擎先把两条边送来的梯度加起来，再执行下一个节点。")],
    )


# ---------------------------------------------------------------- 6. finite differences

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


def slope_check(name, slope: float, expected: float) -> Check:
    """Pass when a fitted slope is within SLOPE_TOLERANCE of the model's."""
    return Check(name=name, passed=bool(abs(slope - expected) <= SLOPE_TOLERANCE),
                 measured=f"slope {slope:.2f}", expected=f"{expected:g} ± {SLOPE_TOLERANCE}")


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
        _expression_param(SMOOTH_EXPRESSIONS, "tanh-affine"),
        Param("log10_h", "float", -6.0, T("step h = 10^k: k", "步长 h = 10^k：k"),
              minimum=-12, maximum=-1, step=0.5),
        SEED,
    ],
)
def finite_differences(expression: str, log10_h: float, seed: int) -> Result:
    case = make_case(expression, seed)
    leaves = leaf_tensors(case.leaves)
    case.loss(leaves).backward()
    engine = {name: tensor.grad.numpy() for name, tensor in leaves.items()}

    def loss(values: dict[str, np.ndarray]) -> float:
        return evaluate(case, values)

    errors = [gradients_error(central_difference(loss, case.leaves, 10.0**k), engine)
              for k in STEP_EXPONENTS]
    chosen = central_difference(loss, case.leaves, 10.0**log10_h)
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
        agreement_check(T(f"At your step h = 10^{log10_h:g} the engine agrees with the central "
                          f"difference", f"在你选的步长 h = 10^{log10_h:g} 下，引擎与中心差分一致"),
                        chosen_error, AGREEMENT_AT_CHOSEN_STEP),
        agreement_check(T("At the bottom of the V the agreement is close to float64 rounding",
                          "在 V 字底部，两者的差距接近 float64 的舍入误差"),
                        errors[best], BEST_ERROR_BOUND),
        slope_check(T(f"Truncation: for h ≥ 10^{TRUNCATION_FROM:g} the error grows like h²",
                      f"截断误差：h ≥ 10^{TRUNCATION_FROM:g} 时误差按 h² 增长"),
                    truncation_slope, 2.0),
        slope_check(T(f"Rounding: for h ≤ 10^{ROUNDING_UP_TO:g} the error grows like ε/h",
                      f"舍入误差：h ≤ 10^{ROUNDING_UP_TO:g} 时误差按 ε/h 增长"),
                    rounding_slope, -1.0),
        Check(T("The best step lies near ε^(1/3) ≈ 6e-6 (within 1.5 decades)",
                "最佳步长在 ε^(1/3) ≈ 6e-6 附近（相差不超过 1.5 个数量级）"),
              passed=bool(distance <= 1.5), measured=f"best h = 10^{STEP_EXPONENTS[best]:g}",
              expected=f"10^{np.log10(optimum) - 1.5:.1f} … 10^{np.log10(optimum) + 1.5:.1f}"),
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


# ---------------------------------------------------------------- 7. training

TRAIN_POINTS, TEST_POINTS, BATCH = 256, 256, 64
TEST_SEED_OFFSET = 1_000_003  # the test set comes from a different seed than the training set
CURVE_POINTS = 40
LOSS_RATIO_AT_MOST = 0.25
ACCURACY_AT_LEAST = 0.9
HAND_BACKWARD_TOLERANCE = 1e-10


def init_linear(layer, rng: np.random.Generator) -> None:
    """PyTorch's default range U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from ``rng``."""
    bound = 1.0 / np.sqrt(layer.in_features)
    with whylab.no_grad():
        layer.weight.copy_(constant(rng.uniform(-bound, bound, tuple(layer.weight.shape))))
        layer.bias.copy_(constant(rng.uniform(-bound, bound, tuple(layer.bias.shape))))


def hand_backward_error(first: nn.Linear, second: nn.Linear, points: np.ndarray,
                        labels: np.ndarray) -> float:
    """The engine's gradients (already in .grad) against :func:`mlp_backward` in NumPy.

    ``nn.Linear`` stores its weight as (out, in) and computes x Wᵀ + b, so the
    NumPy weights are the transposes.
    """
    reference = mlp_backward(points, labels, first.weight.detach().numpy().T,
                             first.bias.detach().numpy(), second.weight.detach().numpy().T,
                             second.bias.detach().numpy())
    engine = {"w1": first.weight.grad.numpy().T, "b1": first.bias.grad.numpy(),
              "w2": second.weight.grad.numpy().T, "b2": second.bias.grad.numpy()}
    return gradients_error(engine, reference)


@experiment(
    name="train",
    title=T("A two-layer classifier trained by the engine", "用引擎训练两层分类器"),
    description=T(
        "Linear → ReLU → Linear from whylab.nn, cross-entropy on logits and whylab.optim.SGD "
        "on minibatches of 64 points generated in code; the first step's gradients are also "
        "computed by a hand-written NumPy backward.",
        "用 whylab.nn 搭建 Linear → ReLU → Linear，以 logit 上的交叉熵为损失，"
        "用 whylab.optim.SGD 在代码生成的点集上按每批 64 个点训练；"
        "第一步的梯度另用手写的 NumPy 反向传播再算一遍。",
    ),
    params=[
        Param("dataset", "choice", "rings", T("data set", "数据集"), choices=DATASETS,
              choice_labels=(T("two spirals", "双螺旋"), T("disc and ring", "圆盘与圆环"),
                             T("three blobs", "三团点"))),
        Param("hidden", "int", 32, T("hidden width", "隐藏层宽度"), minimum=1, maximum=128,
              step=1),
        Param("lr", "float", 0.5, T("learning rate η", "学习率 η"), minimum=0.001, maximum=2.0,
              step=0.001),
        Param("steps", "int", 400, T("SGD steps", "SGD 步数"), minimum=1, maximum=3000, step=1),
        SEED,
    ],
)
def train(dataset: str, hidden: int, lr: float, steps: int, seed: int) -> Result:
    points, labels = make_dataset(dataset, TRAIN_POINTS, seed)
    test_points, test_labels = make_dataset(dataset, TEST_POINTS, seed + TEST_SEED_OFFSET)
    rng = np.random.default_rng(seed)
    first = nn.Linear(2, hidden, dtype=whylab.float64)
    second = nn.Linear(hidden, class_count(dataset), dtype=whylab.float64)
    init_linear(first, rng)
    init_linear(second, rng)
    model = nn.Sequential(first, nn.ReLU(), second)
    optimizer = whylab.optim.SGD(model.parameters(), lr=lr)
    all_points, all_labels = constant(points), labels_tensor(labels)

    def evaluate_model() -> tuple[float, float]:
        with whylab.no_grad():
            loss = float(F.cross_entropy(model(all_points), all_labels).item())
            predicted = model(constant(test_points)).numpy().argmax(axis=1)
        return loss, float(np.mean(predicted == test_labels))

    initial_loss, initial_accuracy = evaluate_model()
    curve_steps, curve_loss, curve_accuracy = [0], [initial_loss], [initial_accuracy]
    every = max(1, steps // CURVE_POINTS)
    order, position = rng.permutation(TRAIN_POINTS), 0
    hand_error = update_error = np.inf
    for step in range(1, steps + 1):
        if position + BATCH > TRAIN_POINTS:
            order, position = rng.permutation(TRAIN_POINTS), 0
        batch = order[position:position + BATCH]
        position += BATCH
        loss = F.cross_entropy(model(constant(points[batch])), labels_tensor(labels[batch]))
        optimizer.zero_grad()
        loss.backward()
        if step == 1:
            hand_error = hand_backward_error(first, second, points[batch], labels[batch])
            before = [(p.detach().numpy().copy(), p.grad.numpy().copy())
                      for p in model.parameters()]
        optimizer.step()
        if step == 1:
            update_error = gradients_error(
                {str(i): p.detach().numpy() for i, p in enumerate(model.parameters())},
                {str(i): value - lr * grad for i, (value, grad) in enumerate(before)})
        if step % every == 0 or step == steps:
            loss_now, accuracy_now = evaluate_model()
            curve_steps.append(step)
            curve_loss.append(loss_now)
            curve_accuracy.append(accuracy_now)
        report_progress(step / steps)

    final_loss, final_accuracy = curve_loss[-1], curve_accuracy[-1]
    checks = [
        agreement_check(T("First step: the engine's gradients equal a hand-written NumPy backward",
                          "第一步：引擎的梯度等于手写 NumPy 反向传播的结果"),
                        hand_error, HAND_BACKWARD_TOLERANCE),
        agreement_check(T("SGD moved every parameter by exactly −η·grad",
                          "SGD 让每个参数恰好移动了 −η·grad"),
                        update_error, EXACT_TOLERANCE),
        Check(T(f"Training lowers the loss on the training set to at most "
                f"{LOSS_RATIO_AT_MOST:g}× its initial value",
                f"训练把训练集上的损失降到初始值的 {LOSS_RATIO_AT_MOST:g} 倍以下"),
              passed=bool(final_loss <= LOSS_RATIO_AT_MOST * initial_loss),
              measured=f"{initial_loss:.3f} → {final_loss:.3f}",
              expected=f"≤ {LOSS_RATIO_AT_MOST * initial_loss:.3f}"),
        Check(T(f"Accuracy on {TEST_POINTS} held-out points ≥ {ACCURACY_AT_LEAST:.0%}",
                f"在 {TEST_POINTS} 个未参与训练的点上准确率 ≥ {ACCURACY_AT_LEAST:.0%}"),
              passed=bool(final_accuracy >= ACCURACY_AT_LEAST),
              measured=f"{final_accuracy:.1%}", expected=f"≥ {ACCURACY_AT_LEAST:.0%}"),
    ]
    return Result(
        checks=checks,
        figures=[
            LineChart(title=T("Cross-entropy on the training set", "训练集上的交叉熵"),
                      x_label=T("SGD step", "SGD 步数"), y_label=T("loss", "损失"),
                      series=[Series(T("training loss", "训练损失"), curve_steps, curve_loss)]),
            LineChart(title=T("Accuracy on held-out points", "未参与训练的点上的准确率"),
                      x_label=T("SGD step", "SGD 步数"), y_label=T("accuracy", "准确率"),
                      series=[Series(T("test accuracy", "测试准确率"), curve_steps,
                                     curve_accuracy)]),
        ],
        metrics={"initial_loss": initial_loss, "final_loss": final_loss,
                 "test_accuracy": final_accuracy, "hand_backward_error": hand_error,
                 "parameters": sum(p.numel() for p in model.parameters())},
    )


EXPERIMENTS = [graph, modes, local_rules, softmax_ce_stability, fan_out, finite_differences,
               train]
