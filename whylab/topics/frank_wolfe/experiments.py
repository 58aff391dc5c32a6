"""Experiments for "Frank–Wolfe": feasibility without projection, the gap as a
certificate, Jaggi's O(1/t) rate and its lower-bound instance, the away-step and
pairwise variants, sparse and low-rank iterates, and the path on a triangle.

Every run is :mod:`whylab.optim.frank_wolfe` itself (the NumPy front end
:func:`~whylab.optim.frank_wolfe`). The references it is judged against come from
:mod:`.reference`, which never calls Frank–Wolfe: optima from the KKT conditions
solved and verified exactly, projections by sorting, closed forms from the papers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from unittest import mock

import numpy as np

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
    format_number,
    format_vector,
    subscript,
)
from whylab.optim import FrankWolfe, frank_wolfe
from whylab.optim import constraints as C
from whylab.topics.frank_wolfe.endings import full_step, gap_stop
from whylab.topics.frank_wolfe.mechanics import (
    SEED,
    line_search,
    optimum_fixed_point,
    running_mean,
    short_step,
    variant_steps,
)
from whylab.topics.frank_wolfe.oracles import linear_objective, set_oracles
from whylab.topics.frank_wolfe.reference import (
    KKT_TOL,
    Quadratic,
    project_l1_ball,
    project_simplex,
    simplex_kkt_optimum,
)
from whylab.topics.frank_wolfe.refusals import refusals

FEASIBILITY_TOL = 1e-12  # allowed breach of the set, relative to its radius: rounding only
CERTIFICATE_SLACK = 1e-9  # f* is trusted to KKT_TOL; allow this much (relative) in g_t >= h_t
TARGET_GAP = 1e-8
ZIGZAG_FACTOR = 5  # vanilla needs at least this many times the iterations of away/pairwise
HELDOUT_RATIO = 0.5  # completion error at most this fraction of the zero-fill baseline's
SLOPE_AT_MOST = -0.9  # log h_t against log t: O(1/t) or faster
MAX_PLOTTED = 400



def _steps_param(default: int, maximum: int, minimum: int = 1) -> Param:
    return Param("steps", "int", default, T("Frank–Wolfe steps", "Frank–Wolfe 迭代步数"),
                 minimum=minimum, maximum=maximum, step=1)


def _dimension_param(default: int, minimum: int, maximum: int) -> Param:
    return Param("n", "int", default, T("dimension n", "维数 n"), minimum=minimum,
                 maximum=maximum, step=1)


def _thin(values) -> list[float]:
    values = list(values)
    stride = max(1, math.ceil(len(values) / MAX_PLOTTED))
    return [float(v) for v in values[::stride]]


def _gap_at(constraint, x: np.ndarray, grad: np.ndarray) -> float:
    """The Frank–Wolfe gap <grad, x - s> computed from scratch at any point."""
    return float(np.vdot(grad, x - constraint.lmo(grad)))


def simplex_least_squares(n: int, seed: int) -> Quadratic:
    """0.5 ||A x - b||^2 with b made from a sparse mixture: the optimum lies on a face."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n + 5, n)) / math.sqrt(n)
    truth = np.zeros(n)
    support = rng.choice(n, size=min(4, n), replace=False)
    truth[support] = rng.dirichlet(np.ones(support.shape[0]))
    b = A @ truth + 0.3 * rng.standard_normal(n + 5)
    return Quadratic.least_squares(A, b)


def trusted_simplex_optimum(problem: Quadratic, radius: float = 1.0):
    """f* by the KKT conditions on the support, the support read off a long pairwise run.

    Whoever guesses the support, :func:`simplex_kkt_optimum` verifies the KKT
    conditions, which are sufficient for this convex problem.
    """
    n = problem.c.shape[0]
    guess = frank_wolfe(problem.f_and_grad, C.Simplex(radius).lmo(np.zeros(n)),
                        C.Simplex(radius), 20 * n + 500, step="line_search",
                        variant="pairwise", quadratic=True, gap_tol=1e-14)
    support = np.flatnonzero(guess.x > 1e-12 * radius)
    if control_active("support-missing-a-coordinate"):
        outside = np.setdiff1d(np.arange(n), support)
        smallest = support[np.argmin(guess.x[support])]
        support = np.append(support[support != smallest], outside[:1])
    return simplex_kkt_optimum(problem, radius, support)


SUPPORT_CONTROL = Control(
    "support-missing-a-coordinate",
    T("f* is solved on a support that swaps one optimal coordinate for a wrong one",
      "求 f* 时支撑集里有一个坐标被换成了错误的坐标"),
    breaks=("kkt-verified",))


def kkt_check(optimum) -> Check:
    return Check(
        T("f* is verified: the KKT conditions hold on the support",
          "f* 经过验证：在支撑集上 KKT 条件成立"),
        optimum.verified,
        T(f"largest KKT violation {optimum.violation:.1e}",
          f"KKT 条件最大偏差 {optimum.violation:.1e}"),
        f"≤ {KKT_TOL:.0e}",
        id="kkt-verified",
    )


# ---------------------------------------------------------------- feasibility

SET_CHOICES = ("simplex", "l1", "l2", "box", "nuclear")
SET_LABELS = (T("probability simplex", "概率单纯形"), T("L1 ball", "L1 球"),
              T("L2 ball", "L2 球"), T("box", "盒子"), T("nuclear-norm ball", "核范数球"))


def feasibility_problem(kind: str, n: int, seed: int):
    """A least-squares objective pulling far outside the chosen set, and a vertex start."""
    rng = np.random.default_rng(seed)
    constraint = {"simplex": C.Simplex(1.0), "l1": C.L1Ball(1.0), "l2": C.L2Ball(1.0),
                  "box": C.Box(-0.5, 0.5), "nuclear": C.NuclearBall(1.0)}[kind]
    shape = (n, 3) if kind == "nuclear" else (n,)
    size = int(np.prod(shape))
    A = rng.standard_normal((size + 3, size)) / math.sqrt(size)
    b = 3.0 * rng.standard_normal(size + 3)
    problem = Quadratic.least_squares(A, b)

    def f_and_grad(x):
        value, grad = problem.f_and_grad(x.ravel())
        return value, grad.reshape(shape)

    return f_and_grad, constraint.lmo(rng.standard_normal(shape)), constraint, problem.smoothness


def gradient_descent_path(f_and_grad, x0, steps: int, lr: float) -> list[np.ndarray]:
    """Plain gradient steps x <- x - lr grad f(x), no projection: what FW avoids."""
    path = [x0.copy()]
    for _ in range(steps):
        path.append(path[-1] - lr * f_and_grad(path[-1])[1])
    return path


def _open_loop_error(iterates, feasible_set, f_and_grad) -> float:
    """Largest |γ_t − 2/(t + 2)|, with γ_t = <x_{t+1} − x_t, s_t − x_t> / |s_t − x_t|²."""
    worst = 0.0
    for t, (x, following) in enumerate(zip(iterates[:-1], iterates[1:], strict=True)):
        direction = feasible_set.lmo(f_and_grad(x)[1]) - x
        length = float(np.vdot(direction, direction))
        if length > 0:
            gamma = float(np.vdot(following - x, direction)) / length
            worst = max(worst, abs(gamma - 2.0 / (t + 2.0)))
    return worst


@experiment(
    name="feasibility",
    title=T("Feasible at every step, without a projection",
            "每一步都可行，却从不投影"),
    description=T(
        "Runs Frank–Wolfe on a least-squares objective whose unconstrained minimum lies far "
        "outside the set, and measures how far each iterate breaks the set's constraints. "
        "Plain gradient steps from the same start are shown for comparison.",
        "在一个无约束最小点远在集合之外的最小二乘目标上运行 Frank–Wolfe，"
        "测量每个迭代点违反约束的程度；同一起点出发的普通梯度步作为对照。",
    ),
    params=[
        Param("constraint", "choice", "simplex", T("feasible set", "可行集"),
              choices=SET_CHOICES, choice_labels=SET_LABELS),
        Param("n", "int", 20, T("dimension n (rows for matrices)", "维数 n（矩阵为行数）"),
              minimum=2, maximum=200, step=1),
        _steps_param(200, 1000, minimum=50),
        SEED,
    ],
    controls=[
        Control("unconstrained-gradient-step",
                T("each step is the unconstrained gradient step x − ∇f(x)/L instead of the "
                  "convex combination", "每一步换成无约束的梯度步 x − ∇f(x)/L，而不是凸组合"),
                breaks=("iterates-feasible",)),
        Control("frozen-iterate",
                T("the step size is 0, so the iterate never moves (and trivially stays "
                  "feasible)", "步长取 0，迭代点根本不动（于是平凡地保持可行）"),
                breaks=("gap-shrinks", "open-loop-schedule")),
    ],
    metrics=[
        Metric(
            "max_breach",
            T("largest breach of the set by an iterate", "迭代点越出集合的最大距离"),
        ),
        Metric("final_gap", T("gap g_T after the last step", "最后一步之后的间隙 g_T")),
    ],
)
def feasibility(constraint: str, n: int, steps: int, seed: int) -> Result:
    f_and_grad, x0, feasible_set, smoothness = feasibility_problem(constraint, n, seed)
    step_rule = (lambda t: 0.0) if control_active("frozen-iterate") else "open_loop"
    run = frank_wolfe(f_and_grad, x0, feasible_set, steps, step=step_rule, keep_iterates=True)
    descent = gradient_descent_path(f_and_grad, x0, steps, 1.0 / smoothness)
    fw_path = descent if control_active("unconstrained-gradient-step") else run.iterates
    fw_violations = [feasible_set.violation(x) for x in fw_path]
    gd_violations = [feasible_set.violation(x) for x in descent]
    gaps = [_gap_at(feasible_set, x, f_and_grad(x)[1]) for x in (fw_path[0], fw_path[-1])]
    worst = max(fw_violations)
    limit = FEASIBILITY_TOL
    schedule_error = _open_loop_error(run.iterates, feasible_set, f_and_grad)
    checks = [
        Check(T(f"Every Frank–Wolfe iterate x₀…x{subscript(steps)} lies in the set (to rounding)",
                f"Frank–Wolfe 的每个迭代点 x₀…x{subscript(steps)} 都在集合内（误差仅为舍入）"),
              worst <= limit,
              T(f"largest breach {worst:.1e}", f"最大越界 {worst:.1e}"),
              f"≤ {limit:.0e}", id="iterates-feasible"),
        Check(T("…and the iterate really moves: the gap falls below 1/10 of its start",
                "……而且迭代点确实在前进：间隙降到初值的 1/10 以下"),
              gaps[1] <= 0.1 * gaps[0],
              f"g_T / g₀ = {gaps[1] / gaps[0]:.2e}" if gaps[0] > 0 else "g₀ = 0",
              "≤ 0.1", id="gap-shrinks"),
        Check(T("…by the open-loop steps γₜ = 2/(t + 2), γₜ recovered from each pair of "
                "iterates and the oracle's vertex (a schedule one step off differs by ≥ 2e-6)",
                "……而且步长恰好是开环规则 γₜ = 2/(t + 2)：γₜ 由每一对相邻迭代点和预言机"
                "给出的顶点反推得到（差一步的步长序列至少相差 2e-6）"),
              schedule_error <= 1e-7, f"max |γₜ − 2/(t + 2)| = {schedule_error:.1e}", "≤ 1e-7",
              id="open-loop-schedule"),
    ]
    t = list(range(steps + 1))
    figure = LineChart(
        title=T("How far each iterate breaks the constraints", "每个迭代点违反约束的程度"),
        x_label=T("step t", "迭代步 t"),
        y_label=T("breach of the set (0 = inside)", "越界量（0 表示在集合内）"),
        series=[Series(T("Frank–Wolfe", "Frank–Wolfe"), _thin(t), _thin(fw_violations)),
                Series(T("gradient step, no projection", "梯度步，不投影"), _thin(t),
                       _thin(gd_violations))],
    )
    table = Table(
        title=T("After the last step", "最后一步之后"),
        columns=[T("method", "方法"), T("f(x_T)", "f(x_T)"), T("largest breach", "最大越界")],
        rows=[[T("Frank–Wolfe", "Frank–Wolfe"), f"{f_and_grad(fw_path[-1])[0]:.6g}",
               f"{worst:.1e}"],
              [T("gradient step, no projection", "梯度步，不投影"),
               f"{f_and_grad(descent[-1])[0]:.6g}", f"{max(gd_violations):.1e}"]],
    )
    return Result(checks=checks, figures=[figure], tables=[table],
                  metrics={"max_breach": worst, "final_gap": gaps[1]})


# ---------------------------------------------------------------- the gap certifies


@experiment(
    name="gap-certificate",
    title=T("The gap bounds the error it cannot see", "间隙给看不见的误差设了上界"),
    description=T(
        "Minimises a least-squares objective over the probability simplex with open-loop "
        "Frank–Wolfe and compares the gap gₜ at every iterate with the true error "
        "f(xₜ) − f*, f* from the KKT conditions solved exactly on the optimum's support.",
        "用开环步长的 Frank–Wolfe 在概率单纯形上最小化最小二乘目标，"
        "把每个迭代点的间隙 gₜ 与真实误差 f(xₜ) − f* 对比；"
        "f* 由在最优解支撑集上精确求解的 KKT 条件给出。",
    ),
    params=[
        _dimension_param(30, 3, 100),
        _steps_param(300, 2000, minimum=10),
        SEED,
    ],
    controls=[
        Control("stale-vertex",
                T("the gap is computed with the previous step's vertex sₜ₋₁ instead of "
                  "this step's oracle answer", "间隙用上一步的顶点 sₜ₋₁ 计算，而不是本步线性"
                  "最小化的结果"),
                breaks=("gap-bounds-error",)),
        SUPPORT_CONTROL,
        Control("f-star-from-a-short-run",
                T("f* is taken from a 20-step Frank–Wolfe run instead of the KKT solve",
                  "f* 取自一次只有 20 步的 Frank–Wolfe 运行，而不是解 KKT 条件"),
                breaks=("error-nonnegative",)),
    ],
    metrics=[
        Metric("f_star", T("f* (KKT on the support)", "f*（在支撑集上解 KKT）")),
        Metric(
            "min_gap_minus_error",
            T(
                "smallest gₜ − hₜ (≥ 0: the gap bounds the error)",
                "gₜ − hₜ 的最小值（≥ 0：间隙是误差的上界）",
            ),
        ),
    ],
)
def gap_certificate(n: int, steps: int, seed: int) -> Result:
    problem = simplex_least_squares(n, seed)
    simplex = C.Simplex()
    optimum = trusted_simplex_optimum(problem)
    run = frank_wolfe(problem.f_and_grad, simplex.lmo(np.zeros(n)), simplex, steps,
                      keep_iterates=True)
    gaps = np.array(run.gaps)
    if control_active("stale-vertex"):
        gaps = np.array([float(np.vdot(problem.gradient(x), x - s)) for x, s in
                         zip(run.iterates[1:steps], run.vertices[:steps - 1], strict=True)])
        gaps = np.concatenate([run.gaps[:1], gaps])
    f_star = optimum.value
    if control_active("f-star-from-a-short-run"):
        f_star = frank_wolfe(problem.f_and_grad, simplex.lmo(np.zeros(n)), simplex, 20).values[-1]
    errors = np.array(run.values[:steps]) - f_star
    slack = CERTIFICATE_SLACK * (1 + abs(f_star))
    margin = float(np.min(gaps - errors))
    checks = [
        kkt_check(optimum),
        Check(T("No iterate beats f*: f(xₜ) − f* ≥ 0 at every t",
                "没有迭代点优于 f*：每个 t 都有 f(xₜ) − f* ≥ 0"),
              float(np.min(errors)) >= -slack,
              f"min (f(xₜ) − f*) = {np.min(errors):.2e}", f"≥ −{slack:.0e}",
              id="error-nonnegative"),
        Check(T(f"The gap bounds the error at every iterate: gₜ ≥ f(xₜ) − f* for t < {steps}",
                f"每个迭代点上间隙都是误差的上界：t < {steps} 时 gₜ ≥ f(xₜ) − f*"),
              margin >= -slack,
              f"min (gₜ − hₜ) = {margin:.2e}", f"≥ −{slack:.0e}", id="gap-bounds-error"),
    ]
    t = np.arange(steps)
    figure = LineChart(
        title=T("Gap gₜ and true error hₜ = f(xₜ) − f*",
                "间隙 gₜ 与真实误差 hₜ = f(xₜ) − f*"),
        x_label=T("step t", "迭代步 t"),
        y_label=T("value (log scale)", "数值（对数坐标）"),
        series=[Series(T("gap gₜ", "间隙 gₜ"), _thin(t), _thin(gaps)),
                Series(T("error hₜ", "误差 hₜ"), _thin(t), _thin(errors))],
        log_y=True,
    )
    support = np.flatnonzero(optimum.x)
    table = Table(
        title=T("The reference optimum", "参照最优解"),
        columns=[T("quantity", "量"), T("value", "数值")],
        rows=[[T("f* (KKT solve on the support)", "f*（在支撑集上解 KKT）"),
               f"{optimum.value:.12g}"],
              [T("support size", "支撑集大小"), int(support.shape[0])],
              [T("largest KKT violation", "KKT 最大偏差"), f"{optimum.violation:.1e}"],
              [T("smallest gₜ / hₜ", "gₜ / hₜ 的最小值"),
               f"{np.min(gaps[errors > 0] / errors[errors > 0]):.3g}"
               if np.any(errors > 0) else "—"]],
    )
    return Result(checks=checks, figures=[figure], tables=[table],
                  metrics={"f_star": optimum.value, "min_gap_minus_error": margin})


# ---------------------------------------------------------------- Jaggi's rate


def fitted_slope(t: np.ndarray, values: np.ndarray) -> float:
    """Least-squares slope of log(values) against log(t) (positive values only)."""
    keep = values > 0
    slope, _ = np.polyfit(np.log(t[keep]), np.log(values[keep]), 1)
    return float(slope)


@experiment(
    name="jaggi-rate",
    title=T("The O(1/t) rate, with its constant", "O(1/t) 收敛速度及其常数"),
    description=T(
        "Runs Frank–Wolfe with γₜ = 2/(t+2) on a least-squares objective over the simplex "
        "and compares the error with Jaggi's bound 2C_f/(t+2), C_f computed exactly for this "
        "quadratic, and fits the slopes of the error and the gap on log-log axes.",
        "在单纯形上的最小二乘目标上以 γₜ = 2/(t+2) 运行 Frank–Wolfe，"
        "把误差与 Jaggi 的上界 2C_f/(t+2) 比较（C_f 对这个二次函数精确算出），"
        "并在双对数坐标下拟合误差与间隙的斜率。",
    ),
    params=[
        _dimension_param(30, 3, 100),
        _steps_param(500, 3000, minimum=50),
        SEED,
    ],
    controls=[
        Control("step-decays-too-fast",
                T("the step size is γₜ = 1/(t+2)², whose sum is finite, so the iterate "
                  "stalls", "步长取 γₜ = 1/(t+2)²，其总和有限，迭代点会停滞"),
                breaks=("rate-bound", "error-slope")),
        Control("smallest-eigenvalue-as-l",
                T("L is taken as the smallest eigenvalue of the Hessian (the strong-convexity "
                  "constant) instead of the largest", "把黑塞矩阵的最小特征值（强凸常数）当成 "
                  "L，而不是最大特征值"),
                breaks=("curvature-bound",)),
        SUPPORT_CONTROL,
    ],
    metrics=[
        Metric("curvature", T("curvature constant C_f", "曲率常数 C_f")),
        Metric(
            "error_slope",
            T("slope of log hₜ against log t (late steps)", "log hₜ 对 log t 的斜率（后期各步）"),
        ),
        Metric(
            "gap_slope",
            T("slope of log gₜ against log t (late steps)", "log gₜ 对 log t 的斜率（后期各步）"),
        ),
        Metric(
            "worst_error_over_bound",
            T("largest hₜ / Jaggi's bound 2C_f/(t+2)", "hₜ / Jaggi 上界 2C_f/(t+2) 的最大值"),
        ),
    ],
)
def jaggi_rate(n: int, steps: int, seed: int) -> Result:
    problem = simplex_least_squares(n, seed)
    simplex = C.Simplex()
    optimum = trusted_simplex_optimum(problem)
    curvature = problem.simplex_curvature(1.0)
    eigenvalues = np.linalg.eigvalsh(problem.Q)
    smoothness = eigenvalues[0] if control_active("smallest-eigenvalue-as-l") else eigenvalues[-1]
    l_diam2 = float(smoothness * simplex.diameter() ** 2)
    step_rule = (lambda t: 1.0 / (t + 2) ** 2) if control_active("step-decays-too-fast") \
        else "open_loop"
    run = frank_wolfe(problem.f_and_grad, simplex.lmo(np.zeros(n)), simplex, steps,
                      step=step_rule)
    t = np.arange(1, steps + 1)
    errors = np.array(run.values[1:]) - optimum.value
    gaps = np.array(run.gaps[1:] + [_gap_at(simplex, run.x, problem.gradient(run.x))])
    bound = 2 * curvature / (t + 2)
    slack = CERTIFICATE_SLACK * (1 + abs(optimum.value))
    worst_ratio = float(np.max(errors / bound))
    late = t >= max(2, steps // 10)
    error_slope = fitted_slope(t[late], errors[late])
    gap_slope = fitted_slope(t[late], gaps[late])
    checks = [
        kkt_check(optimum),
        Check(T("C_f ≤ L·diam²: the exact curvature constant is below the smoothness bound",
                "C_f ≤ L·diam²：精确的曲率常数不超过由光滑性给出的上界"),
              curvature <= l_diam2 * (1 + 1e-12),
              T(f"C_f = {curvature:.4g}, L·diam² = {l_diam2:.4g}",
                f"C_f = {curvature:.4g}，L·直径² = {l_diam2:.4g}"),
              T("C_f ≤ L·diam²", "C_f ≤ L·直径²"),
              id="curvature-bound"),
        Check(T(f"Jaggi's Theorem 1: f(xₜ) − f* ≤ 2C_f/(t+2) for every t = 1…{steps}",
                f"Jaggi 定理 1：对每个 t = 1…{steps} 都有 f(xₜ) − f* ≤ 2C_f/(t+2)"),
              bool(np.all(errors <= bound + slack)),
              T(f"largest hₜ / bound = {worst_ratio:.3f}",
                f"hₜ 与上界之比最大为 {worst_ratio:.3f}"),
              "≤ 1", id="rate-bound"),
        Check(T(f"The error falls at least like 1/t: fitted log-log slope ≤ {SLOPE_AT_MOST}",
                f"误差至少按 1/t 下降：双对数拟合斜率 ≤ {SLOPE_AT_MOST}"),
              error_slope <= SLOPE_AT_MOST,
              T(f"slope {error_slope:.2f}", f"斜率 {error_slope:.2f}"), f"≤ {SLOPE_AT_MOST}",
              id="error-slope"),
    ]
    figure = LineChart(
        title=T("Error hₜ, gap gₜ and Jaggi's bound (log-log)",
                "误差 hₜ、间隙 gₜ 与 Jaggi 上界（双对数）"),
        x_label=T("step t", "迭代步 t"),
        y_label=T("value", "数值"),
        series=[Series(T("bound 2C_f/(t+2)", "上界 2C_f/(t+2)"), _thin(t), _thin(bound)),
                Series(T(f"gap gₜ (slope {gap_slope:.2f})", f"间隙 gₜ（斜率 {gap_slope:.2f}）"),
                       _thin(t), _thin(gaps)),
                Series(T(f"error hₜ (slope {error_slope:.2f})",
                         f"误差 hₜ（斜率 {error_slope:.2f}）"), _thin(t), _thin(errors))],
        log_x=True, log_y=True,
    )
    table = Table(
        title=T("Constants of this instance", "本例中的常数"),
        columns=[T("quantity", "量"), T("value", "数值")],
        rows=[[T("C_f (exact, max over vertex pairs)", "C_f（精确值，对顶点对取最大）"),
               f"{curvature:.4g}"],
              [T("L (largest eigenvalue of AᵀA)", "L（AᵀA 的最大特征值）"), f"{smoothness:.4g}"],
              [T("diam² of the simplex", "单纯形直径的平方"), f"{simplex.diameter() ** 2:.4g}"],
              [T(f"fitted slope of hₜ over t = {t[late][0]}…{steps}",
                 f"t = {t[late][0]}…{steps} 上 hₜ 的拟合斜率"), f"{error_slope:.3f}"],
              [T(f"fitted slope of gₜ over t = {t[late][0]}…{steps}",
                 f"t = {t[late][0]}…{steps} 上 gₜ 的拟合斜率"), f"{gap_slope:.3f}"]],
    )
    return Result(checks=checks, figures=[figure], tables=[table],
                  metrics={"curvature": curvature, "error_slope": error_slope,
                           "gap_slope": gap_slope, "worst_error_over_bound": worst_ratio})


# ---------------------------------------------------------------- Jaggi's Lemma 3


@experiment(
    name="lower-bound",
    title=T("The instance no method of sparse steps can beat", "稀疏步方法都无法更快的例子"),
    description=T(
        "f(x) = ‖x‖² on the unit simplex in ℝⁿ, from a vertex, with exact line search: "
        "compares the error after t steps with 1/(t+1) − 1/n, the smallest error any point "
        "with t+1 nonzeros can have.",
        "在 ℝⁿ 的单位单纯形上最小化 f(x) = ‖x‖²，从一个顶点出发并使用精确线搜索，"
        "把 t 步后的误差与 1/(t+1) − 1/n 比较——这是任何只有 t+1 个非零元的点所能达到的最小误差。",
    ),
    params=[_dimension_param(50, 2, 200)],
    controls=[
        Control("open-loop-step",
                T("the step size is the open-loop 2/(t+2) instead of the exact line search",
                  "步长用开环的 2/(t+2)，而不是精确线搜索"),
                breaks=("error-equals-formula", "support-grows-by-one")),
        Control("dense-start",
                T("the run starts from the centre of the simplex instead of a vertex",
                  "从单纯形的中心而不是顶点出发"),
                breaks=("error-equals-formula", "support-grows-by-one")),
    ],
    metrics=[
        Metric(
            "max_deviation",
            T("largest |hₜ − (1/(t+1) − 1/n)|", "最大偏差 |hₜ − (1/(t+1) − 1/n)|"),
        ),
    ],
)
def lower_bound(n: int) -> Result:
    start = np.full(n, 1.0 / n) if control_active("dense-start") else np.eye(n)[0]
    rule = "open_loop" if control_active("open-loop-step") else "line_search"
    run = frank_wolfe(lambda x: (float(x @ x), 2 * x), start, C.Simplex(), n - 1, step=rule,
                      quadratic=True, keep_iterates=True)
    t = np.arange(n)
    errors = np.array(run.values) - 1.0 / n
    formula = 1.0 / (t + 1) - 1.0 / n
    worst = float(np.max(np.abs(errors - formula)))
    nonzeros = np.array([np.count_nonzero(x) for x in run.iterates])
    rounding = 4 * np.finfo(float).eps
    checks = [
        Check(T(f"hₜ = 1/(t+1) − 1/n exactly, for every t = 0…{n - 1}",
                f"对每个 t = 0…{n - 1}，hₜ 恰好等于 1/(t+1) − 1/n"),
              worst <= rounding, f"max |hₜ − (1/(t+1) − 1/n)| = {worst:.1e}",
              f"≤ {rounding:.1e} (4 ulp)", id="error-equals-formula"),
        Check(T("Each step adds exactly one nonzero: xₜ has t+1 of them",
                "每一步恰好增加一个非零元：xₜ 有 t+1 个"),
              bool(np.all(nonzeros == t + 1)),
              T(f"nonzeros at t = 0, 1, 2: {nonzeros[:3].tolist()}",
                f"t = 0, 1, 2 时的非零元个数：{nonzeros[:3].tolist()}"),
              "t + 1", id="support-grows-by-one"),
    ]
    figure = LineChart(
        title=T("Error after t steps against 1/(t+1) − 1/n", "t 步后的误差与 1/(t+1) − 1/n"),
        x_label=T("step t + 1", "迭代步 t + 1"),
        y_label=T("hₜ", "hₜ"),
        series=[Series(T("1/(t+1) − 1/n", "1/(t+1) − 1/n"), _thin(t[:-1] + 1),
                       _thin(formula[:-1])),
                Series(T("Frank–Wolfe, exact line search", "Frank–Wolfe，精确线搜索"),
                       _thin(t[:-1] + 1), _thin(errors[:-1]))],
        log_x=True, log_y=True,
    )
    return Result(checks=checks, figures=[figure], metrics={"max_deviation": worst})


# ---------------------------------------------------------------- variants


def face_quadratic(n: int, seed: int) -> Quadratic:
    """A strongly convex quadratic (Hessian eigenvalues >= 1) over the simplex.

    Its unconstrained minimum lies outside, so the constrained optimum sits on a face
    (near the first four coordinates).
    """
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M @ M.T / n + np.eye(n)
    centre = np.zeros(n)
    centre[:4] = rng.dirichlet(np.ones(4))
    centre[4:] = -0.3
    return Quadratic(Q, -(Q @ centre), 0.5 * float(centre @ Q @ centre))


def iterations_to(gaps, target: float) -> int | None:
    return next((t for t, gap in enumerate(gaps) if gap <= target), None)


def _shown(count: int | None, budget: int) -> str:
    return f"{count}" if count is not None else f"> {budget}"


def _steps_past_gamma_max():
    """Under the control ``pairwise-past-gamma-max``: FrankWolfe with every pairwise step's
    bound γ_max doubled (the optimizer's own code, one bound loosened)."""
    if not control_active("pairwise-past-gamma-max"):
        return contextlib.nullcontext()
    original = FrankWolfe._step_size

    def loosened(self, moves, loss, closure):
        moves = [dataclasses.replace(m, gamma_max=2 * m.gamma_max) if m.kind == "pairwise"
                 else m for m in moves]
        return original(self, moves, loss, closure)

    return mock.patch.object(FrankWolfe, "_step_size", loosened)


@experiment(
    name="variants",
    title=T("Away steps and pairwise steps stop the zig-zag", "远离步与成对步消除了之字形"),
    description=T(
        "A strongly convex quadratic over the simplex whose optimum lies on a face, started "
        "from a vertex off that face. Counts the iterations vanilla, away-step and pairwise "
        "Frank–Wolfe (each with exact line search) need to bring the gap below 1e-8.",
        "单纯形上的一个强凸二次函数，最优解位于单纯形的一个面上，从该面之外的一个顶点出发。"
        "统计普通、远离步与成对 Frank–Wolfe（都用精确线搜索）把间隙降到 1e-8 以下所需的迭代次数。",
    ),
    params=[
        _dimension_param(12, 5, 60),
        Param("max_steps", "int", 1000, T("step budget", "迭代步数上限"), minimum=500,
              maximum=5000, step=100),
        SEED,
    ],
    controls=[
        Control("active-set-ignored",
                T("the away and pairwise runs drop their active set and take vanilla steps",
                  "远离步与成对步的运行丢掉活动集，只走普通步"),
                breaks=("away-linear", "pairwise-linear", "vanilla-zigzags")),
        Control("pairwise-past-gamma-max",
                T("a pairwise step may move up to twice the weight its away vertex holds "
                  "(past γₘₐₓ)",
                  "成对步可以挪走的权重最多达到远离顶点所持权重的两倍（越过 γₘₐₓ）"),
                breaks=("iterates-feasible",)),
        SUPPORT_CONTROL,
    ],
    metrics=[
        Metric(
            "iterations_vanilla",
            T(
                f"steps to a gap of {TARGET_GAP:.0e}: plain Frank–Wolfe",
                f"把间隙降到 {TARGET_GAP:.0e} 的步数：普通 Frank–Wolfe",
            ),
        ),
        Metric(
            "iterations_away",
            T(
                f"steps to a gap of {TARGET_GAP:.0e}: away-step FW",
                f"把间隙降到 {TARGET_GAP:.0e} 的步数：远离步 FW",
            ),
        ),
        Metric(
            "iterations_pairwise",
            T(
                f"steps to a gap of {TARGET_GAP:.0e}: pairwise FW",
                f"把间隙降到 {TARGET_GAP:.0e} 的步数：成对 FW",
            ),
        ),
    ],
)
def variants(n: int, max_steps: int, seed: int) -> Result:
    problem = face_quadratic(n, seed)
    simplex = C.Simplex()
    optimum = trusted_simplex_optimum(problem)
    off_face = np.flatnonzero(optimum.x == 0)
    # Start at the vertex off the optimal face that the optimum most clearly rejects (the
    # largest reduced gradient): its weight has to be taken away again.
    reduced = problem.gradient(optimum.x)
    start_index = int(off_face[np.argmax(reduced[off_face])]) if off_face.size else 0
    start = np.eye(n)[start_index]
    ignore_active_set = control_active("active-set-ignored")
    gaps, needed, final, worst_outside = {}, {}, {}, {}
    for variant in ("vanilla", "away", "pairwise"):
        with _steps_past_gamma_max():
            run = frank_wolfe(problem.f_and_grad, start, simplex, max_steps, step="line_search",
                              variant="vanilla" if ignore_active_set else variant,
                              quadratic=True, gap_tol=TARGET_GAP, keep_iterates=True)
        # how far any iterate left the simplex: a negative entry, or a sum other than 1
        worst_outside[variant] = max(max(-float(np.min(x)), abs(float(np.sum(x)) - 1.0))
                                     for x in run.iterates)
        gaps[variant] = run.gaps
        needed[variant] = iterations_to(run.gaps, TARGET_GAP)
        final[variant] = run.x
    fast = [needed[v] for v in ("away", "pairwise")]
    slowest_variant = max(fast) if None not in fast else None
    zigzags = slowest_variant is not None and (
        needed["vanilla"] is None or needed["vanilla"] >= ZIGZAG_FACTOR * slowest_variant)
    linear_budget = max_steps // ZIGZAG_FACTOR
    wrong_weight = float(np.sum(final["vanilla"][off_face]))

    def linear_check(variant: str, label: Text) -> Check:
        count = needed[variant]
        return Check(label, count is not None and count <= linear_budget,
                     T(f"{_shown(count, max_steps)} iterations",
                       f"{_shown(count, max_steps)} 次迭代"),
                     f"≤ {linear_budget}", id=f"{variant}-linear")

    zigzag_name = T(f"Vanilla FW, still holding weight off the optimal face, needs at least "
                    f"{ZIGZAG_FACTOR}× as many iterations (or never gets there within the "
                    "budget)",
                    f"普通 FW 仍把权重留在最优面之外的顶点上，于是至少需要 {ZIGZAG_FACTOR} "
                    "倍的迭代次数（或在上限内达不到）")
    if off_face.size and wrong_weight > 0:
        zigzag = Check(
            zigzag_name, zigzags,
            T(f"vanilla {_shown(needed['vanilla'], max_steps)}, slower variant "
              f"{_shown(slowest_variant, max_steps)}; weight off the face {wrong_weight:.1e}",
              f"普通 {_shown(needed['vanilla'], max_steps)}，两个变体中较慢者 "
              f"{_shown(slowest_variant, max_steps)}；面外权重 {wrong_weight:.1e}"),
            f"≥ {ZIGZAG_FACTOR}×", id="vanilla-zigzags")
    else:
        zigzag = Check.not_applicable(
            id="vanilla-zigzags", name=zigzag_name, expected=f"≥ {ZIGZAG_FACTOR}×",
            why=T("vanilla's line search stepped all the way (γ = 1) onto a vertex of the "
                  "optimal face, which drops every wrong vertex at once, or the optimum is "
                  "interior; try another seed",
                  "普通 FW 的线搜索一步走到底（γ = 1）落在最优面的顶点上，一次就丢掉了所有"
                  "错误的顶点，或者最优解在内部；请换一个随机种子"))
    checks = [
        kkt_check(optimum),
        linear_check("away", T(f"Away-step FW reaches a gap of {TARGET_GAP:.0e} within "
                               f"max_steps/{ZIGZAG_FACTOR}",
                               f"远离步 FW 在 max_steps/{ZIGZAG_FACTOR} 步内把间隙降到 "
                               f"{TARGET_GAP:.0e}")),
        linear_check("pairwise", T(f"Pairwise FW reaches a gap of {TARGET_GAP:.0e} within "
                                   f"max_steps/{ZIGZAG_FACTOR}",
                                   f"成对 FW 在 max_steps/{ZIGZAG_FACTOR} 步内把间隙降到 "
                                   f"{TARGET_GAP:.0e}")),
        zigzag,
        Check(T("Every iterate of every variant stays in the simplex (entries ≥ 0, sum 1): "
                "away and pairwise steps never move more weight than a vertex holds",
                "每个变体的每个迭代点都留在单纯形内（各分量 ≥ 0，和为 1）："
                "远离步与成对步挪走的权重从不超过顶点所持的权重"),
              max(worst_outside.values()) <= FEASIBILITY_TOL,
              T("largest step outside: " + ", ".join(
                  f"{v} {worst_outside[v]:.1e}" for v in ("vanilla", "away", "pairwise")),
                "越出单纯形最多：" + "，".join(
                  f"{label} {worst_outside[v]:.1e}"
                  for v, label in (("vanilla", "普通"), ("away", "远离步"),
                                   ("pairwise", "成对步")))),
              f"≤ {FEASIBILITY_TOL:.0e}", id="iterates-feasible"),
    ]
    names = {"vanilla": T("vanilla", "普通"), "away": T("away steps", "远离步"),
             "pairwise": T("pairwise", "成对步")}
    figure = LineChart(
        title=T("Frank–Wolfe gap per iteration", "每次迭代的 Frank–Wolfe 间隙"),
        x_label=T("iteration t + 1", "迭代次数 t + 1"),
        y_label=T("gap gₜ", "间隙 gₜ"),
        series=[Series(names[v], _thin(range(1, len(gaps[v]) + 1)),
                       _thin(np.maximum(gaps[v], 1e-16))) for v in names],
        log_x=True, log_y=True,
    )
    table = Table(
        title=T(f"Iterations to reach a gap of {TARGET_GAP:.0e}",
                f"间隙降到 {TARGET_GAP:.0e} 所需的迭代次数"),
        columns=[T("variant", "变体"), T("iterations", "迭代次数")],
        rows=[[names[v], _shown(needed[v], max_steps)] for v in names],
    )
    return Result(checks=checks, figures=[figure], tables=[table],
                  metrics={f"iterations_{v}": _shown(needed[v], max_steps) for v in names})



# ---------------------------------------------------------------- sparsity


def projected_gradient_path(f_and_grad, x0, steps, lr, project) -> list[np.ndarray]:
    """Projected gradient descent: the method that needs a projection every step."""
    path = [x0.copy()]
    for _ in range(steps):
        path.append(project(path[-1] - lr * f_and_grad(path[-1])[1]))
    return path


@experiment(
    name="sparsity",
    title=T("One vertex per step: sparse iterates", "每步一个顶点：稀疏的迭代点"),
    description=T(
        "Least squares with more unknowns than equations, constrained to the simplex and to "
        "the L1 ball. Counts the nonzeros of each Frank–Wolfe iterate, and of projected "
        "gradient descent's for comparison.",
        "未知数多于方程的最小二乘问题，分别约束在单纯形和 L1 球上。"
        "统计每个 Frank–Wolfe 迭代点的非零元个数，并以投影梯度下降作对照。",
    ),
    params=[
        _dimension_param(100, 10, 300),
        _steps_param(40, 200),
        SEED,
    ],
    controls=[
        Control("projected-gradient",
                T("the iterates come from projected gradient descent instead of Frank–Wolfe",
                  "迭代点来自投影梯度下降，而不是 Frank–Wolfe"),
                breaks=("simplex-sparse", "l1-sparse")),
    ],
    metrics=[
        Metric(
            "nonzeros_simplex",
            T("nonzeros of the last iterate: simplex", "最后一个迭代点的非零元个数：单纯形"),
        ),
        Metric(
            "nonzeros_l1",
            T("nonzeros of the last iterate: L1 ball", "最后一个迭代点的非零元个数：L1 球"),
        ),
    ],
)
def sparsity(n: int, steps: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n // 2, n)) / math.sqrt(n // 2)
    b = rng.standard_normal(n // 2)
    problem = Quadratic.least_squares(A, b)
    lr = 1.0 / problem.smoothness
    sets = {"simplex": (C.Simplex(1.0), project_simplex),
            "l1": (C.L1Ball(1.0), lambda y: project_l1_ball(y, 1.0))}
    counts, projected_counts, checks = {}, {}, []
    names = {"simplex": T("simplex", "单纯形"), "l1": T("L1 ball", "L1 球")}
    for kind, (feasible_set, project) in sets.items():
        start = feasible_set.lmo(rng.standard_normal(n))
        projected = projected_gradient_path(problem.f_and_grad, start, steps, lr, project)
        if control_active("projected-gradient"):
            path = projected
        else:
            path = frank_wolfe(problem.f_and_grad, start, feasible_set, steps,
                               keep_iterates=True).iterates
        counts[kind] = np.array([np.count_nonzero(x) for x in path])
        projected_counts[kind] = np.array([np.count_nonzero(x) for x in projected])
        over = np.flatnonzero(counts[kind] > np.arange(steps + 1) + 1)
        checks.append(Check(
            T(f"On the {names[kind].en}, xₜ has at most t+1 nonzeros for every t ≤ {steps}",
              f"在{names[kind].zh}上，对每个 t ≤ {steps}，xₜ 至多有 t+1 个非零元"),
            over.shape[0] == 0,
            T(f"{counts[kind][-1]} nonzeros at t = {steps}" if over.shape[0] == 0 else
              f"{counts[kind][over[0]]} nonzeros at t = {over[0]}",
              f"t = {steps} 时 {counts[kind][-1]} 个非零元" if over.shape[0] == 0 else
              f"t = {over[0]} 时 {counts[kind][over[0]]} 个非零元"),
            "≤ t + 1", id=f"{kind}-sparse"))
    t = list(range(steps + 1))
    figure = LineChart(
        title=T("Nonzeros of the iterate", "迭代点的非零元个数"),
        x_label=T("step t", "迭代步 t"),
        y_label=T("nonzeros", "非零元个数"),
        series=[Series(T("t + 1", "t + 1"), t, [s + 1 for s in t])]
        + [Series(T(f"Frank–Wolfe, {names[k].en}", f"Frank–Wolfe，{names[k].zh}"), t,
                  counts[k].tolist()) for k in sets]
        + [Series(T(f"projected gradient, {names[k].en}", f"投影梯度，{names[k].zh}"), t,
                  projected_counts[k].tolist()) for k in sets],
    )
    return Result(checks=checks, figures=[figure],
                  metrics={f"nonzeros_{k}": int(counts[k][-1]) for k in sets})


# ---------------------------------------------------------------- matrix completion


def project_nuclear_ball(X: np.ndarray, radius: float) -> np.ndarray:
    """Projection onto the nuclear-norm ball: a full SVD, singular values onto the L1 ball."""
    u, sigma, vt = np.linalg.svd(X, full_matrices=False)
    return (u * project_l1_ball(sigma, radius)) @ vt


@experiment(
    name="matrix-completion",
    title=T("Low rank one step at a time: matrix completion", "每步只升一阶：矩阵补全"),
    description=T(
        "Fills in a low-rank matrix from a random part of its entries by Frank–Wolfe over a "
        "nuclear-norm ball, measuring the rank of each iterate and the error on the entries "
        "it never saw.",
        "用核范数球上的 Frank–Wolfe 从一个低秩矩阵的部分随机元素把它补全，"
        "测量每个迭代点的秩，以及在从未见过的元素上的误差。",
    ),
    params=[
        Param("rows", "int", 40, T("rows (columns = 3/4 of rows)", "行数（列数为行数的 3/4）"),
              minimum=8, maximum=80, step=1),
        Param("rank", "int", 2, T("true rank", "真实秩"), minimum=1, maximum=5, step=1),
        Param("observed", "float", 0.5, T("fraction of entries observed", "观测到的元素比例"),
              minimum=0.2, maximum=0.9, step=0.05),
        _steps_param(40, 150, minimum=20),
        SEED,
    ],
    controls=[
        Control("full-svd-step",
                T("each step is a projected gradient step, which needs a full SVD and "
                  "keeps every singular value", "每一步换成投影梯度步：需要完整的 SVD，"
                  "并保留全部奇异值"),
                breaks=("rank-grows-by-one",)),
        Control("shuffled-observations",
                T("the observed values are shuffled among the observed positions",
                  "观测值在观测位置之间被打乱"),
                breaks=("heldout-beats-baseline",)),
    ],
    metrics=[
        Metric("final_rank", T("rank of the last iterate", "最后一个迭代点的秩")),
        Metric(
            "final_large_singular_values",
            T("singular values above 1% of the largest", "大于最大奇异值 1% 的奇异值个数"),
        ),
        Metric("heldout_rmse", T("RMSE on held-out entries", "留出元素上的均方根误差")),
        Metric("baseline_rmse", T("RMSE of filling with zeros", "补零的均方根误差")),
    ],
)
def matrix_completion(rows: int, rank: int, observed: float, steps: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    cols = max(2, 3 * rows // 4)
    truth = rng.standard_normal((rows, rank)) @ rng.standard_normal((rank, cols)) / math.sqrt(
        rank)
    mask = rng.random((rows, cols)) < observed
    seen = truth + 0.01 * rng.standard_normal((rows, cols))
    if control_active("shuffled-observations"):
        seen[mask] = rng.permutation(seen[mask])
    radius = float(np.sum(np.linalg.svd(truth, compute_uv=False)))  # a tuned radius

    def f_and_grad(X):
        residual = np.where(mask, X - seen, 0.0)
        return 0.5 * float(np.sum(residual**2)), residual

    ball = C.NuclearBall(radius)
    start = np.zeros((rows, cols))
    if control_active("full-svd-step"):
        path = projected_gradient_path(f_and_grad, start, steps, 1.0,
                                       lambda Y: project_nuclear_ball(Y, radius))
    else:
        path = frank_wolfe(f_and_grad, start, ball, steps, step="line_search", quadratic=True,
                           keep_iterates=True).iterates
    ranks = np.array([np.linalg.matrix_rank(X, tol=1e-9 * max(1.0, radius)) for X in path])
    singular_values = [np.linalg.svd(X, compute_uv=False) for X in path]
    large = [int(np.sum(sigma > 0.01 * sigma[0])) if sigma[0] > 0 else 0
             for sigma in singular_values]
    held_out = ~mask

    def rmse(X):
        return float(np.sqrt(np.mean((X[held_out] - truth[held_out]) ** 2)))

    errors = [rmse(X) for X in path]
    baseline = rmse(np.zeros_like(truth))
    jumps = np.diff(ranks)
    degrees_of_freedom = rank * (rows + cols - rank)
    heldout_name = T(f"Held-out error is at most {HELDOUT_RATIO:g}× that of filling with zeros",
                     f"未见元素上的误差不超过补零误差的 {HELDOUT_RATIO:g} 倍")
    if int(mask.sum()) >= 3 * degrees_of_freedom:
        heldout = Check(heldout_name, errors[-1] <= HELDOUT_RATIO * baseline,
                        T(f"RMSE {errors[-1]:.3g} against {baseline:.3g}",
                          f"均方根误差 {errors[-1]:.3g}，对照 {baseline:.3g}"),
                        f"≤ {HELDOUT_RATIO:g}×", id="heldout-beats-baseline")
    else:
        heldout = Check.not_applicable(
            id="heldout-beats-baseline", name=heldout_name, expected=f"≤ {HELDOUT_RATIO:g}×",
            measured=T(f"{int(mask.sum())} entries seen, {degrees_of_freedom} degrees of "
                       "freedom", f"观测到 {int(mask.sum())} 个元素，自由度 {degrees_of_freedom}"),
            why=T("needs at least 3× as many observed entries as the rank-r matrix has degrees "
                  "of freedom, r(m + n − r): observe more, or lower the rank",
                  "观测到的元素至少要是秩 r 矩阵自由度 r(m + n − r) 的 3 倍："
                  "请增加观测比例或降低秩"))
    checks = [
        Check(T("The rank grows by at most one per step (from rank 0)",
                "秩每步至多增加一（从秩 0 开始）"),
              bool(ranks[0] == 0 and np.all(jumps <= 1)),
              T(f"ranks at t = 0…3: {ranks[:4].tolist()}, largest jump {int(np.max(jumps))}",
                f"t = 0…3 时的秩：{ranks[:4].tolist()}，最大增量 {int(np.max(jumps))}"),
              "≤ 1", id="rank-grows-by-one"),
        heldout,
    ]
    t = list(range(len(path)))
    figures = [
        LineChart(title=T("Rank of the iterate", "迭代点的秩"),
                  x_label=T("step t", "迭代步 t"), y_label=T("rank", "秩"),
                  series=[Series(T("rank of Xₜ", "Xₜ 的秩"), t, ranks.tolist()),
                          Series(T("singular values above 1% of the largest",
                                   "大于最大奇异值 1% 的奇异值个数"), t, large),
                          Series(T("true rank", "真实秩"), t, [rank] * len(t))]),
        LineChart(title=T("Error on the entries never seen", "从未见过的元素上的误差"),
                  x_label=T("step t", "迭代步 t"), y_label=T("RMSE", "均方根误差"),
                  series=[Series(T("Frank–Wolfe completion", "Frank–Wolfe 补全"), t, errors),
                          Series(T("fill with zeros", "补零"), t, [baseline] * len(t))]),
    ]
    return Result(checks=checks, figures=figures,
                  metrics={"final_rank": int(ranks[-1]), "final_large_singular_values": large[-1],
                           "heldout_rmse": errors[-1],
                           "baseline_rmse": baseline},
                  notes=[T(f"The radius of the ball is the true matrix's nuclear norm "
                           f"({radius:.4g}), as a well-tuned hyper-parameter would be.",
                           f"球的半径取真实矩阵的核范数（{radius:.4g}），"
                           "相当于一个调得很好的超参数。")])


# ---------------------------------------------------------------- the path on a triangle

CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2]])


def to_plane(x: np.ndarray) -> np.ndarray:
    """Barycentric coordinates on the 2-simplex to a point of the equilateral triangle."""
    return x @ CORNERS


@experiment(
    name="simplex-path",
    title=T("The path on a triangle", "三角形上的路径"),
    description=T(
        "Frank–Wolfe on the probability simplex in ℝ³, drawn in the plane: the triangle, the "
        "iterates, and the vertices the oracle returned. The optimum lies on an edge.",
        "ℝ³ 中概率单纯形上的 Frank–Wolfe，画在平面上：三角形、迭代点，以及线性最小化"
        "返回的顶点。最优解位于一条边上。",
    ),
    params=[
        Param("variant", "choice", "vanilla", T("variant", "变体"),
              choices=("vanilla", "away", "pairwise"),
              choice_labels=(T("vanilla", "普通"), T("away steps", "远离步"),
                             T("pairwise", "成对步"))),
        Param("step", "choice", "line_search", T("step size", "步长"),
              choices=("line_search", "open_loop"),
              choice_labels=(T("exact line search", "精确线搜索"),
                             T("2/(t+2)", "2/(t+2)"))),
        _steps_param(25, 60, minimum=3),
    ],
    controls=[
        Control("unconstrained-gradient-step",
                T("each step is the unconstrained gradient step instead of the convex "
                  "combination", "每一步换成无约束的梯度步，而不是凸组合"),
                breaks=("path-in-triangle", "steps-toward-vertex")),
    ],
    metrics=[
        Metric("final_gap", T("gap after the last step", "最后一步之后的间隙")),
        Metric(
            "max_breach",
            T("largest breach of the simplex by an iterate", "迭代点越出单纯形的最大距离"),
        ),
    ],
)
def simplex_path(variant: str, step: str, steps: int) -> Result:
    Q = np.array([[1.5, 0.3, 0.0], [0.3, 1.0, 0.0], [0.0, 0.0, 1.0]])
    centre = np.array([0.6, 0.5, -0.05])  # outside: the optimum is on the edge x3 = 0
    problem = Quadratic(Q, -(Q @ centre), 0.5 * float(centre @ Q @ centre))
    simplex = C.Simplex()
    start = np.array([0.0, 0.0, 1.0])
    run = frank_wolfe(problem.f_and_grad, start, simplex, steps, step=step, variant=variant,
                      quadratic=True, keep_iterates=True)
    path = run.iterates
    if control_active("unconstrained-gradient-step"):
        path = gradient_descent_path(problem.f_and_grad, start, steps, 1.0 / problem.smoothness)
    worst = max(simplex.violation(x) for x in path)
    checks = [Check(T("Every iterate is inside the triangle: coordinates ≥ 0 and summing to 1",
                      "每个迭代点都在三角形内：坐标非负且和为 1"),
                    worst <= FEASIBILITY_TOL, T(f"largest breach {worst:.1e}",
                                                f"最大越界 {worst:.1e}"),
                    f"≤ {FEASIBILITY_TOL:.0e}", id="path-in-triangle")]
    off_segment = max(_distance_to_segment(b, a, s)
                      for a, b, s in zip(path[:-1], path[1:], run.vertices, strict=True))
    if variant == "vanilla":
        checks.append(Check(
            T("Each step lands on the segment from xₜ to the oracle's vertex sₜ",
              "每一步都落在从 xₜ 到线性最小化顶点 sₜ 的线段上"),
            off_segment <= 1e-12, T(f"largest distance from the segment {off_segment:.1e}",
                                    f"离线段的最大距离 {off_segment:.1e}"),
            "≤ 1e-12", id="steps-toward-vertex"))
    else:
        checks.append(Check.not_applicable(
            id="steps-toward-vertex",
            name=T("Each step lands on the segment from xₜ to the oracle's vertex sₜ",
                   "每一步都落在从 xₜ 到线性最小化顶点 sₜ 的线段上"),
            expected="≤ 1e-12",
            why=T("away and pairwise steps move along other directions; needs variant = "
                  "vanilla", "远离步和成对步沿别的方向移动；需要 variant = vanilla")))
    # drawn round from the right-hand corner back to it, so the triangle's name at its
    # line's end stands beside the triangle
    triangle = to_plane(np.eye(3)[[1, 2, 0, 1]])
    points = np.array([to_plane(x) for x in path])
    vertices = np.array([to_plane(s) for s in run.vertices[:40]])
    figure = LineChart(
        title=T("Iterates on the simplex (barycentric coordinates in the plane)",
                "单纯形上的迭代点（平面上的重心坐标）"),
        x_label=T("horizontal position", "水平位置"),
        y_label=T("vertical position", "竖直位置"),
        series=[Series(T("simplex", "单纯形"), triangle[:, 0].tolist(), triangle[:, 1].tolist()),
                Series(T("iterates xₜ", "迭代点 xₜ"), points[:, 0].tolist(),
                       points[:, 1].tolist()),
                Series(T("oracle vertices sₜ", "线性最小化顶点 sₜ"), vertices[:, 0].tolist(),
                       vertices[:, 1].tolist(), draw="points")],
        equal_aspect=True,
    )
    table = Table(
        title=T("The first steps", "前几步"),
        columns=[T("t", "t"), T("xₜ", "xₜ"), T("sₜ", "sₜ"), T("gap gₜ", "间隙 gₜ"),
                 T("γₜ", "γₜ")],
        rows=[[t, format_vector(path[t], 3), format_vector(run.vertices[t], 3),
               format_number(run.gaps[t], 3), format_number(run.gammas[t], 3)]
              for t in range(min(6, run.steps))],
    )
    return Result(checks=checks, figures=[figure], tables=[table],
                  metrics={"final_gap": run.gaps[-1], "max_breach": worst})


def _distance_to_segment(point, start, end) -> float:
    direction = end - start
    length2 = float(direction @ direction)
    if length2 == 0:
        return float(np.linalg.norm(point - start))
    along = np.clip(float((point - start) @ direction) / length2, 0.0, 1.0)
    return float(np.linalg.norm(point - (start + along * direction)))


EXPERIMENTS = [feasibility, set_oracles, linear_objective, optimum_fixed_point, short_step,
               line_search, running_mean, full_step, gap_stop, gap_certificate, jaggi_rate,
               lower_bound, variants, variant_steps, sparsity, matrix_completion, simplex_path,
               refusals]
