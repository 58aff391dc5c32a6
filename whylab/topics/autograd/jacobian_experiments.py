"""Experiments on vector-Jacobian products: ``modes`` (reverse vs forward mode) and
``local-rules`` (the backward rules of matmul, ReLU, softmax and cross-entropy).

The engine's results are compared with the formulas on the page and with
central finite differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import whylab
import whylab.nn.functional as F
from whylab.autograd.graph_export import to_json
from whylab.explorer.experiment import (
    Check,
    Param,
    Result,
    T,
    Table,
    experiment,
)
from whylab.topics.autograd.comparisons import (
    EXACT_TOLERANCE,
    FD_STEP,
    FD_TOLERANCE,
    agreement_check,
    central_difference,
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
            d_hidden = (1 - hidden * hidden) * d_pre  # d tanh(u) = (1 - tanh(u)^2) du
            return constant(self.w2).mv(d_hidden)  # d(W2 h) = W2 dh


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
              measured=T(f"asymmetry {asymmetry:.1e}, row sums {row_sums:.1e}",
                         f"不对称 {asymmetry:.1e}，行和 {row_sums:.1e}"),
              expected=T(f"both ≤ {SYMMETRY_TOLERANCE:.0e}", f"两者都 ≤ {SYMMETRY_TOLERANCE:.0e}")),
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
