"""Experiments on vector-Jacobian products: ``modes`` (reverse vs forward mode) and
``local-rules`` (the backward rules of matmul, ReLU, softmax and cross-entropy).

The engine's results are compared with the formulas on the page and with
central finite differences.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

import whylab
import whylab.nn.functional as F
from whylab.autograd.graph_export import to_json
from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    Text,
    control_active,
    experiment,
)
from whylab.topics.autograd.comparisons import (
    EXACT_TOLERANCE,
    FD_STEP,
    FD_TOLERANCE,
    central_difference,
    check_if_reached,
    equality_check,
    gradients_error,
    relative_error,
)
from whylab.topics.autograd.expressions import (
    SEED,
    constant,
    labels_tensor,
    unit_vector,
)
from whylab.topics.autograd.sabotage import keep_first_gradient, pass_through, replace_backward
from whylab.topics.shared import error_check

# ---------------------------------------------------------------- forward vs reverse mode

HIDDEN_WIDTH = 8


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
            if control_active("tangent-rule-wrong"):
                d_hidden = (1 - hidden) * d_pre
            else:
                d_hidden = (1 - hidden * hidden) * d_pre  # d tanh(u) = (1 - tanh(u)^2) du
            return constant(self.w2).mv(d_hidden)  # d(W2 h) = W2 dh

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """The closed form J = W2 diag(1 - tanh(W1 x + c)^2) W1, in NumPy."""
        hidden = np.tanh(self.w1 @ x + self.c)
        return self.w2 @ np.diag(1.0 - hidden * hidden) @ self.w1


def engine_work(trace) -> tuple[int, int]:
    """(backward passes, node runs) in an engine trace; GraphRoot is not counted as a node."""
    passes = sum(event["kind"] == "dependencies" for event in trace.events)
    runs = sum(event["kind"] == "execute" and event["node"] != "GraphRoot"
               for event in trace.events)
    return passes, runs


def _work_text(passes: int, runs: int) -> Text:
    passes_en = "1 pass" if passes == 1 else f"{passes} passes"
    return T(f"{passes_en}, {runs} node runs", f"{passes} 遍，节点共执行 {runs} 次")


def _reverse_jacobian(y: whylab.Tensor, x: whylab.Tensor, outputs: int) -> np.ndarray:
    """The Jacobian from the engine, one vector-Jacobian product eᵢᵀJ per row.

    Under the ``jacobian-entry-by-entry`` control each entry gets its own pass
    (the rows come out the same, at n times the work).
    """
    rows = []
    for i in range(outputs):
        cotangent = unit_vector(outputs, i)
        if control_active("jacobian-entry-by-entry"):
            rows.append([whylab.autograd.grad(y, x, grad_outputs=cotangent,
                                              retain_graph=True)[0].numpy()[j]
                         for j in range(x.numel())])
        else:
            rows.append(whylab.autograd.grad(y, x, grad_outputs=cotangent,
                                             retain_graph=True)[0].numpy())
    return np.array(rows)


@experiment(
    name="modes",
    title=T("A Jacobian by reverse mode and by forward mode", "用反向模式和前向模式构造雅可比矩阵"),
    description=T(
        "Builds the m×n Jacobian of f(x) = W₂ tanh(W₁x + c) row by row with the engine's "
        "vector-Jacobian products, and column by column with Jacobian-vector products, and "
        "counts from the engine's trace the passes and node runs the reverse side took.",
        "用引擎的向量–雅可比积逐行、用雅可比–向量积逐列构造 f(x) = W₂ tanh(W₁x + c) 的 m×n "
        "雅可比矩阵，并从引擎的执行记录里数出反向一侧走了几遍、节点执行了几次。",
    ),
    params=[
        Param("inputs", "int", 6, T("inputs n", "输入维数 n"), minimum=1, maximum=32, step=1),
        Param("outputs", "int", 2, T("outputs m", "输出维数 m"), minimum=1, maximum=32, step=1),
        SEED,
    ],
    controls=[
        Control("tanh-rule-forgotten",
                T("tanh's backward forgot its local derivative 1 − h²",
                  "tanh 的反向忘了乘局部导数 1 − h²"),
                breaks=("reverse-rows", "forward-columns")),
        Control("tangent-rule-wrong",
                T("the forward-mode tangent of tanh were (1 − h)·du instead of (1 − h²)·du",
                  "前向模式里 tanh 的切向量公式写成了 (1 − h)·du，而不是 (1 − h²)·du"),
                breaks=("forward-columns",)),
        Control("jacobian-entry-by-entry",
                T("the Jacobian were built with one reverse pass per entry (m·n passes) "
                  "instead of one per row",
                  "雅可比矩阵每个元素各走一遍反向（共 m·n 遍），而不是每行一遍"),
                breaks=("reverse-work",)),
        Control("cotangent-ignored",
                T("backward(u) ignored u and started from ones",
                  "backward(u) 忽略了 u，从全 1 开始"),
                breaks=("vector-backward",)),
        Control("vector-summed",
                T("a vector output were silently summed to a scalar when no gradient is given",
                  "没给梯度时，向量输出被悄悄求和成标量"),
                breaks=("vector-needs-grad-output",)),
        Control("gradient-via-jacobian",
                T("∇L were assembled from the whole Jacobian (m passes) instead of one "
                  "backward() pass",
                  "∇L 先构造整个雅可比矩阵（m 遍）再相乘，而不是一次 backward()"),
                breaks=("scalar-one-pass",)),
        Control("fan-out-gradient-dropped",
                T("y · y passed on the gradient of one use only (∇L halved)",
                  "y · y 只传回了一次使用的梯度（∇L 只剩一半）"),
                breaks=("scalar-gradient",)),
    ],
    metrics=[
        Metric("n", T("inputs n", "输入个数 n")),
        Metric("m", T("outputs m", "输出个数 m")),
        Metric(
            "reverse_passes",
            T("reverse passes (one row uᵀJ each)", "反向遍数（每遍一行 uᵀJ）"),
        ),
        Metric("reverse_node_runs", T("node runs in those passes", "这些遍中节点执行次数")),
        Metric(
            "forward_passes",
            T("forward passes (one column Jv each)", "前向遍数（每遍一列 Jv）"),
        ),
        Metric("max_abs_jacobian_entry", T("largest |Jᵢⱼ|", "雅可比矩阵元素的最大绝对值 |Jᵢⱼ|")),
    ],
)
def modes(inputs: int, outputs: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    f = SmallMap(rng.standard_normal((HIDDEN_WIDTH, inputs)) / np.sqrt(inputs),
                 0.1 * rng.standard_normal(HIDDEN_WIDTH),
                 rng.standard_normal((outputs, HIDDEN_WIDTH)) / np.sqrt(HIDDEN_WIDTH))
    x_value = rng.standard_normal(inputs)
    exact = f.jacobian(x_value)
    x = constant(x_value).requires_grad_()
    y = f(x)
    if control_active("tanh-rule-forgotten"):
        replace_backward(y, "TanhBackward0", pass_through)
    graph_nodes = sum(node["kind"] != "leaf" for node in to_json(y)["nodes"])

    with whylab.autograd.engine_trace() as reverse_trace:
        reverse_jacobian = _reverse_jacobian(y, x, outputs)
    reverse_passes, reverse_runs = engine_work(reverse_trace)
    forward_jacobian = np.stack([f.tangent(x.detach(), unit_vector(inputs, j)).numpy()
                                 for j in range(inputs)], axis=1)

    # A non-scalar backward: y.backward(u) leaves uᵀJ in x.grad.
    u = rng.standard_normal(outputs)
    x_for_u = constant(x_value).requires_grad_()
    y_for_u = f(x_for_u)
    y_for_u.backward(whylab.ones_like(y_for_u) if control_active("cotangent-ignored")
                     else constant(u), retain_graph=True)
    vector_backward = x_for_u.grad.numpy().copy()
    vector_backward_error = None
    try:
        if control_active("vector-summed"):
            y_for_u.sum().backward()
        else:
            y_for_u.backward()
    except RuntimeError as error:
        vector_backward_error = str(error)

    # A scalar loss: one backward() gives all n derivatives.
    x_for_loss = constant(x_value).requires_grad_()
    y_for_loss = f(x_for_loss)
    loss = 0.5 * (y_for_loss * y_for_loss).sum()
    if control_active("fan-out-gradient-dropped"):
        replace_backward(loss, "MulBackward0", keep_first_gradient)
    loss_nodes = len(to_json(loss)["nodes"])
    with whylab.autograd.engine_trace() as scalar_trace:
        if control_active("gradient-via-jacobian"):
            x_for_loss.grad = constant(_reverse_jacobian(y_for_loss, x_for_loss, outputs).T
                                       @ y_for_loss.detach().numpy())
        else:
            loss.backward()
    scalar_passes, scalar_runs = engine_work(scalar_trace)
    scalar_runs_per_node = set(Counter(scalar_trace.execution_order()).values())
    y_value = y.detach().numpy()

    vector_check = check_if_reached(
        outputs >= 2,
        T("backward() on a vector output without a gradient is an error",
          "向量输出不给梯度就调用 backward() 会报错"),
        passed=vector_backward_error is not None and "scalar" in vector_backward_error,
        measured=T(f"RuntimeError: “{vector_backward_error}”",
                   f"RuntimeError：“{vector_backward_error}”") if vector_backward_error
        else T("no error", "没有报错"),
        expected=T("RuntimeError (only a scalar's gradient is implicit)",
                   "RuntimeError（只有标量的梯度可以默认为 1）"),
        why=T("needs m ≥ 2 outputs (with m = 1 the output is a scalar)",
              "需要 m ≥ 2 个输出（m = 1 时输出就是标量）"),
        id="vector-needs-grad-output")
    checks = [
        error_check(T("Reverse mode: m engine passes give the Jacobian, one row each "
                          "(vs the closed form W₂ diag(1 − h²) W₁)",
                          "反向模式：引擎走 m 遍得到雅可比矩阵，每遍一行"
                          "（与闭式解 W₂ diag(1 − h²) W₁ 对照）"),
                        relative_error(reverse_jacobian, exact), EXACT_TOLERANCE,
                        id="reverse-rows"),
        error_check(T("Forward mode: n tangent passes give the same Jacobian, one column each",
                          "前向模式：走 n 遍切向量传播得到同一个雅可比矩阵，每遍一列"),
                        relative_error(forward_jacobian, reverse_jacobian), EXACT_TOLERANCE,
                        id="forward-columns"),
        Check(T(f"The engine's trace: m passes, each running the {graph_nodes} nodes of f once",
                f"引擎的执行记录：走了 m 遍，每遍把 f 的 {graph_nodes} 个节点各执行一次"),
              passed=(reverse_passes, reverse_runs) == (outputs, outputs * graph_nodes),
              measured=_work_text(reverse_passes, reverse_runs),
              expected=_work_text(outputs, outputs * graph_nodes), id="reverse-work"),
        error_check(T("y.backward(u) on the vector y leaves uᵀJ in x.grad, without forming J",
                          "对向量 y 调用 y.backward(u)，x.grad 中得到 uᵀJ，无需构造 J"),
                        relative_error(vector_backward, u @ exact), EXACT_TOLERANCE,
                        id="vector-backward"),
        vector_check,
        Check(T("For the scalar L = ½‖f(x)‖², backward() runs one engine pass, each node once",
                "对标量 L = ½‖f(x)‖²，backward() 只让引擎走一遍，每个节点执行一次"),
              passed=scalar_passes == 1 and scalar_runs == loss_nodes
              and scalar_runs_per_node == {1},
              measured=_work_text(scalar_passes, scalar_runs),
              expected=_work_text(1, loss_nodes), id="scalar-one-pass"),
        error_check(T("That one pass gives all n derivatives, ∇L = Jᵀf(x)",
                          "这一遍就给出全部 n 个导数：∇L = Jᵀf(x)"),
                        relative_error(x_for_loss.grad.numpy(), exact.T @ y_value),
                        EXACT_TOLERANCE, id="scalar-gradient"),
    ]
    table = Table(
        title=T("What the whole Jacobian cost here", "本次构造整个雅可比矩阵的开销"),
        columns=[T("Jacobian size m × n", "雅可比矩阵大小 m × n"),
                 T("reverse passes (engine trace; one row uᵀJ each)",
                   "反向遍数（引擎记录；每遍一行 uᵀJ）"),
                 T("node runs in those passes (engine trace)", "这些遍中节点执行次数（引擎记录）"),
                 T("forward passes (one column Jv each)", "前向遍数（每遍一列 Jv）")],
        rows=[[f"{outputs} × {inputs}", reverse_passes, reverse_runs, forward_jacobian.shape[1]]],
    )
    return Result(
        checks=checks,
        tables=[table],
        metrics={"n": inputs, "m": outputs, "reverse_passes": reverse_passes,
                 "reverse_node_runs": reverse_runs, "forward_passes": inputs,
                 "max_abs_jacobian_entry": float(np.abs(reverse_jacobian).max())},
    )


# ---------------------------------------------------------------- local rules

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
    controls=[
        Control("matmul-rule-missing",
                T("the matrix product's backward gave B no gradient (B̄ = 0)",
                  "矩阵乘法的反向没有给 B 梯度（B̄ = 0）"),
                breaks=("matmul-rule", "rules-match-differences")),
        Control("relu-passes-everything",
                T("ReLU's backward let the gradient through everywhere",
                  "ReLU 的反向让梯度处处通过"),
                breaks=("relu-rule", "relu-at-zero", "rules-match-differences")),
        Control("relu-one-at-zero",
                T("ReLU's backward used 1[x ≥ 0] (gradient 1 at exactly zero)",
                  "ReLU 的反向用了 1[x ≥ 0]（恰为零处梯度为 1）"),
                breaks=("relu-rule", "relu-at-zero")),
        Control("softmax-diagonal-only",
                T("softmax's backward dropped the −⟨g, s⟩ term (only the diagonal of J)",
                  "softmax 的反向漏掉了 −⟨g, s⟩ 一项（只剩 J 的对角线）"),
                breaks=("softmax-rule", "softmax-jacobian", "softmax-jacobian-shape",
                        "rules-match-differences")),
        Control("softmax-op-by-op",
                T("softmax were recorded op by op, exp(z − max) / Σ, saving its pieces",
                  "softmax 按逐个运算 exp(z − max) / Σ 记录，存下了各个中间量"),
                breaks=("softmax-saves-output",)),
        Control("log-softmax-rule-forgotten",
                T("log-softmax's backward forgot its Jacobian (∂L/∂z = −onehot(y))",
                  "log-softmax 的反向忘了它的雅可比矩阵（∂L/∂z = −onehot(y)）"),
                breaks=("cross-entropy-rule", "rules-match-differences")),
    ],
    metrics=[
        Metric("classes", T("classes K", "类别数 K")),
        Metric("target_class", T("target class y", "目标类别 y")),
        Metric(
            "softmax_jacobian_asymmetry",
            T(
                "softmax Jacobian: max |J − Jᵀ| / scale",
                "softmax 雅可比矩阵的不对称度 max |J − Jᵀ| / 尺度",
            ),
        ),
    ],
)
def local_rules(classes: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    rows, formula_errors, difference_errors = [], {}, {}

    # Matrix product Y = AB with upstream gradient G.
    a_value, b_value = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    upstream = rng.standard_normal((3, 2))
    a, b = constant(a_value).requires_grad_(), constant(b_value).requires_grad_()
    product = a @ b
    if control_active("matmul-rule-missing"):
        replace_backward(product, "MmBackward0",
                         lambda computed, received: [computed[0], whylab.zeros_like(b)])
    product.backward(constant(upstream))
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
    rectified = x.relu()
    if control_active("relu-passes-everything"):
        replace_backward(rectified, "ReluBackward0", pass_through)
    if control_active("relu-one-at-zero"):
        replace_backward(rectified, "ReluBackward0", lambda computed, received: [
            received[0] * constant((x_value >= 0).astype(np.float64))])
    rectified.backward(constant(g))
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
    if control_active("softmax-op-by-op"):
        exponentials = (z - z.detach().max()).exp()
        s = exponentials / exponentials.sum()
    else:
        s = whylab.softmax(z, 0)
    if control_active("softmax-diagonal-only"):
        replace_backward(s, "SoftmaxBackward0",
                         lambda computed, received: [received[0] * s.detach()])
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
    ce_loss = F.cross_entropy(logits, labels_tensor(np.array([target])))
    if control_active("log-softmax-rule-forgotten"):
        replace_backward(ce_loss, "LogSoftmaxBackward0", pass_through)
    ce_loss.backward()
    ce_grad = logits.grad.numpy()[0]
    formula_errors["cross-entropy"] = relative_error(ce_grad, s_value - np.eye(classes)[target])
    difference_errors["cross-entropy"] = relative_error(ce_grad, central_difference(
        lambda v: _no_grad_value(lambda t: F.cross_entropy(
            t["z"][None, :], labels_tensor(np.array([target]))), v),
        {"z": z_value}, FD_STEP)["z"])

    formulas = {"matmul": "Ā = Ȳ Bᵀ, B̄ = Aᵀ Ȳ", "relu": "x̄ = ȳ ⊙ 1[x > 0]",
                "softmax": "s ⊙ (g − ⟨g, s⟩)", "cross-entropy": "s − onehot(y)"}
    for rule, formula in formulas.items():
        # Each operation by its function's name (F.cross_entropy), as code reads in any language.
        rows.append([rule.replace("-", "_"), formula, f"{formula_errors[rule]:.1e}",
                     f"{difference_errors[rule]:.1e}"])
    checks = [
        error_check(T("matmul: Ā = ȲBᵀ and B̄ = AᵀȲ", "矩阵乘法：Ā = ȲBᵀ，B̄ = AᵀȲ"),
                        formula_errors["matmul"], EXACT_TOLERANCE, id="matmul-rule"),
        error_check(T("ReLU: the gradient passes only where x > 0",
                          "ReLU：梯度只在 x > 0 处通过"),
                        formula_errors["relu"], EXACT_TOLERANCE, id="relu-rule"),
        equality_check(T("ReLU at exactly x = 0: gradient 0 (PyTorch's convention)",
                         "ReLU 在 x 恰为 0 处梯度为 0（与 PyTorch 一致）"),
                       [float(v) for v in relu_grad[:2]], [0.0, 0.0], id="relu-at-zero"),
        error_check(T("softmax backward = s ⊙ (g − ⟨g, s⟩)", "softmax 反向 = s ⊙ (g − ⟨g, s⟩)"),
                        formula_errors["softmax"], EXACT_TOLERANCE, id="softmax-rule"),
        equality_check(T("The softmax node keeps only its output s (K numbers), not the K×K "
                         "Jacobian", "softmax 节点只保存输出 s（K 个数），而不是 K×K 的雅可比矩阵"),
                       softmax_saved, [[classes]], id="softmax-saves-output"),
        error_check(T("softmax Jacobian from K engine passes = diag(s) − ssᵀ",
                          "引擎走 K 遍得到的 softmax 雅可比矩阵 = diag(s) − ssᵀ"),
                        relative_error(jacobian, jacobian_formula), EXACT_TOLERANCE,
                        id="softmax-jacobian"),
        Check(T("The softmax Jacobian is symmetric and its rows sum to zero",
                "softmax 雅可比矩阵对称，且每行之和为零"),
              passed=max(asymmetry, row_sums) <= SYMMETRY_TOLERANCE,
              measured=T(f"asymmetry {asymmetry:.1e}, row sums {row_sums:.1e}",
                         f"不对称 {asymmetry:.1e}，行和 {row_sums:.1e}"),
              expected=T(f"both ≤ {SYMMETRY_TOLERANCE:.0e}", f"两者都 ≤ {SYMMETRY_TOLERANCE:.0e}"),
              id="softmax-jacobian-shape"),
        error_check(T("cross-entropy: ∂L/∂z = s − onehot(y)", "交叉熵：∂L/∂z = s − onehot(y)"),
                        formula_errors["cross-entropy"], EXACT_TOLERANCE,
                        id="cross-entropy-rule"),
        error_check(T("Every rule agrees with central finite differences",
                          "每条规则都与中心差分一致"),
                        max(difference_errors.values()), FD_TOLERANCE,
                        id="rules-match-differences"),
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
