"""The frank-wolfe experiments on how a run ends: on a vertex after a full step, or at gap_tol.

"full-step" runs away-step Frank–Wolfe on a linear objective from the simplex's centre,
where the Frank–Wolfe direction is the steeper one: the first step goes all the way
(γ = 1) onto the best vertex, which must then be the whole active set, so every later
step has nothing to move away from and takes γ = 0.

"gap-stop" runs pairwise FW with ``gap_tol`` and checks that the run ends at the first iterate whose
gap, recomputed from the gradient as ⟨∇f, x⟩ − min_i ∇f_i (the simplex's closed form),
is at most the tolerance, and not before.
"""

from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.optim import FrankWolfe, frank_wolfe
from whylab.optim import constraints as C
from whylab.topics.frank_wolfe.mechanics import RULE_LABELS, SEED, strongly_convex_quadratic

FULL_RULES = (("open_loop", False), ("short_step", False), ("line_search", True),
              ("line_search", False))
FULL_STEPS = 5
STALE = "stale-active-set"


def _stale_active_set():
    """Under the control: after a full step the old vertices stay in the active set, weight 0."""
    if not control_active(STALE):
        return contextlib.nullcontext()
    original = FrankWolfe._apply

    def keeping(self, move, gamma):
        active = self.state[move.param].get("active_set")
        before = dict(active.vertices) if active is not None else {}
        original(self, move, gamma)
        if active is not None and move.kind == "fw" and gamma >= 1.0:
            for vertex in before.values():
                active.add(vertex, 0.0)

    return mock.patch.object(FrankWolfe, "_apply", keeping)


@experiment(
    name="full-step",
    title=T("A full step onto a vertex empties the active set of the rest",
            "一步走到顶点，活动集里就只剩这个顶点"),
    description=T(
        "Minimises <c, x> over the simplex from its centre with away-step Frank–Wolfe and each "
        "step rule, for a c whose best entry is so low that the Frank–Wolfe direction beats the "
        "away direction at the centre. The first step must go all the way onto the best vertex "
        "and the run stay there with γ = 0: the other vertices left the active set.",
        "从单纯形的中心出发，用远离步 Frank–Wolfe 和每一种步长规则最小化 <c, x>；c 的最小分量"
        "足够低，使中心处朝向 s 的方向比远离方向更陡。第一步必须一直走到最好的顶点上，"
        "之后运行停在那里、γ = 0：其余顶点都已离开活动集。",
    ),
    params=[Param("n", "int", 8, T("dimension n", "维数 n"), minimum=3, maximum=200, step=1),
            SEED],
    controls=[
        Control(STALE, T("a full step keeps the old vertices in the active set with weight 0",
                         "走满一步之后，旧顶点仍以权重 0 留在活动集里"),
                breaks=("full-step-then-still",)),
    ],
)
def full_step(n: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    c = rng.uniform(1.0, 1.5, n)
    best_index = int(rng.integers(n))
    c[best_index] = -1.0  # FW gap mean(c) + 1 >= 4/3 beats the away gap max(c) - mean(c) <= 7/6
    best = np.eye(n)[best_index]
    centre = np.full(n, 1.0 / n)

    def f_and_grad(x):
        return float(c @ x), c.copy()

    rows, held = [], True
    for rule, quadratic in FULL_RULES:
        label = RULE_LABELS[rule] if rule != "line_search" or quadratic else T(
            "line search (bounded)", "线搜索（有界）")
        try:
            with _stale_active_set():
                run = frank_wolfe(f_and_grad, centre, C.Simplex(), FULL_STEPS, step=rule,
                                  variant="away", quadratic=quadratic, smoothness=1e-12,
                                  keep_iterates=True)
        except ZeroDivisionError as error:  # a step bounded by a weight of 0
            held = False
            rows.append([label, T(f"raised {error!r}", f"抛出了 {error!r}"), "—"])
            continue
        landed = all(np.array_equal(x, best) for x in run.iterates[1:])
        ok = landed and run.gammas[0] == 1.0 and all(g == 0.0 for g in run.gammas[1:])
        held &= ok
        rows.append([label, T("yes" if landed else "no", "是" if landed else "否"),
                     ", ".join(f"{g:g}" for g in run.gammas)])
    check = Check(T(f"With every step rule ({len(FULL_RULES)}), away-step FW takes γ₀ = 1 onto "
                    f"the best vertex and then γ = 0 for {FULL_STEPS - 1} steps, never moving",
                    f"每一种步长规则（共 {len(FULL_RULES)} 种）下，远离步 FW 都以 γ₀ = 1 走到最好的"
                    f"顶点，之后 {FULL_STEPS - 1} 步都取 γ = 0，不再移动"),
                  held, T("all" if held else "not all", "全部" if held else "并非全部"),
                  T("all", "全部"), id="full-step-then-still")
    table = Table(T("Away-step FW on <c, x> from the centre", "远离步 FW 从中心出发最小化 <c, x>"),
                  [T("step rule", "步长规则"), T("on the best vertex", "停在最好的顶点上"),
                   T("γ per step", "每步的 γ")], rows)
    return Result(checks=[check], tables=[table])


# ---------------------------------------------------------------- gap_tol

STOP_BUDGET = 400
IGNORED = "gap-tol-ignored"


@experiment(
    name="gap-stop",
    title=T("gap_tol ends the run at the first small enough gap",
            "gap_tol 让运行停在第一个足够小的间隙处"),
    description=T(
        "Runs pairwise FW (exact line search) on a strongly convex quadratic over the simplex "
        "with gap_tol, and "
        "recomputes every gap from the gradient, ⟨∇f(xₜ), xₜ⟩ − minᵢ ∇f(xₜ)ᵢ: the run must "
        "end right after the first step that starts from a gap ≤ gap_tol, and not before.",
        "在单纯形上的一个强凸二次函数上运行成对 FW（精确线搜索），并设 gap_tol；"
        "每个间隙都由梯度重新计算：⟨∇f(xₜ), xₜ⟩ − minᵢ ∇f(xₜ)ᵢ。"
        "运行必须在第一个从间隙 ≤ gap_tol 出发的步之后立即结束，也不能更早结束。",
    ),
    params=[Param("gap_tol", "float", 1e-3, T("gap tolerance", "间隙容差"), minimum=1e-6,
                  maximum=0.1),
            SEED],
    controls=[
        Control(IGNORED, T("the gap_tol option is ignored: every step of the budget is taken",
                           "gap_tol 选项被忽略：用满步数上限"),
                breaks=("stops-at-first-small-gap",)),
    ],
)
def gap_stop(gap_tol: float, seed: int) -> Result:
    n = 10
    problem = strongly_convex_quadratic(n, seed)
    run = frank_wolfe(problem.f_and_grad, np.eye(n)[n - 1], C.Simplex(), STOP_BUDGET,
                      step="line_search", variant="pairwise", quadratic=True,
                      keep_iterates=True,
                      gap_tol=None if control_active(IGNORED) else gap_tol)
    gaps = []
    for x in run.iterates[:-1]:
        grad = problem.gradient(x)
        gaps.append(float(grad @ x - grad.min()))
    first = next((t for t, gap in enumerate(gaps) if gap <= gap_tol), None)
    shown = "t" if first is None else str(first)
    name = T(f"The run ends with step t = {shown}, the first that starts from a gap ≤ gap_tol "
             "(gaps recomputed from ∇f)",
             f"运行在 t = {shown} 这一步之后结束，它是第一个从间隙 ≤ gap_tol 出发的步"
             "（间隙由 ∇f 重新计算）")
    if first is None:
        check = Check.not_applicable(
            id="stops-at-first-small-gap", name=name, expected=str(STOP_BUDGET),
            why=T(f"no gap fell to gap_tol within {STOP_BUDGET} steps; choose a larger gap_tol",
                  f"{STOP_BUDGET} 步内间隙没有降到 gap_tol；请把 gap_tol 调大"))
    else:
        check = Check(name, run.steps == first + 1,
                      T(f"{run.steps} steps taken", f"走了 {run.steps} 步"),
                      T(f"{first + 1} steps", f"{first + 1} 步"), id="stops-at-first-small-gap")
    return Result(checks=[check])
