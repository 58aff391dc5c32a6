"""The frank-wolfe experiments on what one step does: at the optimum, and to the weights.

"optimum-fixed-point" starts Frank–Wolfe exactly at the optimum of a quadratic over the
simplex -- on an edge, and at a vertex -- where the gap is exactly 0, so no direction
descends: every step rule and variant must take γ = 0 and stand still (the textbook
open-loop loop, γ₀ = 2/(0 + 2) = 1 whatever the gap, walks off to a vertex).

"short-step" recovers each short step from the iterates and compares it with the closed
form min(g / (L‖d‖²), 1), the minimiser of the quadratic upper bound.

"line-search" drives the torch-style optimizer by autograd on a non-quadratic objective
(a sum of exponentials) and compares each line-search step with the root of the
derivative along the segment, found by SciPy's brentq.

"running-mean" passes the schedule γ_t = 1/(t+1) as a function: each iterate is then the
mean of the oracle's vertices so far, which pins down the t the schedule is called with.

"variant-steps" reads the away-step and pairwise moves off the iterates (Lacoste-Julien
& Jaggi, NeurIPS 2015, Algorithms 1 and 2): a pairwise step moves weight from one vertex
to another, so x changes in two coordinates; an away-step run's step rescales every
other weight by one factor, 1 − γ (towards the oracle's vertex) or 1 + γ (away from an
active vertex). Both rebuild x from their vertices, so a start that a box accepts a
rounding error outside is snapped into the box, where vanilla steps carry the breach on.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

import whylab
from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
    subscript,
)
from whylab.optim import FrankWolfe, frank_wolfe
from whylab.optim import constraints as C
from whylab.topics.frank_wolfe.reference import Quadratic, simplex_kkt_optimum

RULES = (("open_loop", False), ("short_step", False), ("line_search", True))
VARIANTS = ("vanilla", "away", "pairwise")
FIXED_STEPS = 3
TEXTBOOK = "textbook-open-loop"
#: The random seed of every seeded experiment of this topic.
SEED = Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
             seed=True)

RULE_LABELS = {"open_loop": T("open loop 2/(t+2)", "开环步长 2/(t+2)"),
               "short_step": T("short step", "短步长"),
               "line_search": T("line search (quadratic)", "线搜索（二次）")}
VARIANT_LABELS = {"vanilla": T("vanilla", "普通"), "away": T("away steps", "远离步"),
                  "pairwise": T("pairwise", "成对步")}


def _distance_problem(y: np.ndarray) -> Quadratic:
    """f(x) = ½‖x − y‖²: its minimum over the simplex is the projection of y."""
    return Quadratic(np.eye(y.size), -y, 0.5 * float(y @ y))


def _optima(n: int):
    """(name, y, support): the projection of y is x* = (½, ½, 0, …) or e₀, in exact binary.

    Every number is a dyadic fraction, so the gradient x* − y ties exactly on the support
    and the gap at x* is exactly 0 in floating point, not merely to rounding.
    """
    edge = np.full(n, -1.0)
    edge[:2] = 0.75  # threshold ¼: x* = (½, ½, 0, …), gradient (−¼, −¼, 1, …)
    vertex = np.full(n, -1.0)
    vertex[0] = 2.0  # x* = e₀, gradient (−1, 1, …)
    return [(T("on an edge, x* = (½, ½, 0, …)", "在一条棱上，x* = (½, ½, 0, …)"), edge, (0, 1)),
            (T("at a vertex, x* = e₀", "在顶点上，x* = e₀"), vertex, (0,))]


def _textbook_open_loop(problem: Quadratic, start: np.ndarray, steps: int):
    """x ← x + 2/(t + 2)·(s − x), whatever the gap: the loop as textbooks print it."""
    x, iterates, gammas = start.copy(), [start.copy()], []
    for t in range(steps):
        s = C.Simplex().lmo(problem.gradient(x))
        gamma = 2.0 / (t + 2.0)
        x = (1.0 - gamma) * x + gamma * s
        iterates.append(x.copy())
        gammas.append(gamma)
    return iterates, gammas


@experiment(
    name="optimum-fixed-point",
    title=T("Started at the optimum, Frank–Wolfe stands still",
            "从最优点出发，Frank–Wolfe 原地不动"),
    description=T(
        "Minimises ½‖x − y‖² over the simplex starting exactly at its minimiser x* (the "
        "projection of y, verified by its KKT conditions), once on an edge and once at a "
        "vertex. The gap there is exactly 0, so no direction descends: every step rule and "
        "variant must take γ = 0 and leave x* where it is.",
        "从最小点 x*（y 在单纯形上的投影，已由 KKT 条件验证）恰好出发，在单纯形上最小化 "
        "½‖x − y‖²：一次 x* 在棱上，一次在顶点上。那里的间隙恰好为 0，没有任何下降方向，"
        "所以每一种步长规则、每一种变体都必须取 γ = 0，让 x* 留在原地。",
    ),
    params=[Param("n", "int", 6, T("dimension n", "维数 n"), minimum=3, maximum=40, step=1)],
    controls=[
        Control(TEXTBOOK, T("the open-loop runs are the textbook loop x + 2/(t+2)·(s − x), "
                            "which steps whatever the gap",
                            "开环运行换成教科书上的循环 x + 2/(t+2)·(s − x)，不管间隙是多少都照走"),
                breaks=("optimum-stays",)),
    ],
)
def optimum_fixed_point(n: int) -> Result:
    rows, stayed, worst_kkt, runs = [], True, 0.0, 0
    for where, y, support in _optima(n):
        problem = _distance_problem(y)
        optimum = simplex_kkt_optimum(problem, 1.0, support)
        worst_kkt = max(worst_kkt, optimum.violation)
        start = optimum.x
        for variant in VARIANTS:
            for rule, quadratic in RULES:
                if control_active(TEXTBOOK) and variant == "vanilla" and rule == "open_loop":
                    iterates, gammas = _textbook_open_loop(problem, start, FIXED_STEPS)
                else:
                    run = frank_wolfe(problem.f_and_grad, start, C.Simplex(), FIXED_STEPS,
                                      step=rule, variant=variant, quadratic=quadratic,
                                      smoothness=1.0, keep_iterates=True)
                    iterates, gammas = run.iterates, run.gammas
                still = all(np.array_equal(x, start) for x in iterates)
                zero = all(gamma == 0.0 for gamma in gammas)
                stayed &= still and zero
                runs += 1
                moved = max(float(np.abs(x - start).max()) for x in iterates)
                rows.append([where, VARIANT_LABELS[variant], RULE_LABELS[rule],
                             ", ".join(f"{g:g}" for g in gammas), f"{moved:.2g}"])
    name = T(f"Started at x*, all {runs} runs ({len(VARIANTS)} variants × {len(RULES)} step "
             f"rules × 2 optima) take γ = 0 at each of {FIXED_STEPS} steps and never move",
             f"从 x* 出发的全部 {runs} 次运行（{len(VARIANTS)} 种变体 × {len(RULES)} 种步长规则 × "
             f"2 个最优点）在 {FIXED_STEPS} 步中每一步都取 γ = 0，从不移动")
    if worst_kkt > 0.0:  # the premise: x* is the optimum and its gap is exactly 0
        check = Check.not_applicable(
            id="optimum-stays", name=name, expected=T("all", "全部"),
            why=T(f"the start is not an exact KKT point (violation {worst_kkt:.1e})",
                  f"起点不是精确的 KKT 点（违反量 {worst_kkt:.1e}）"))
    else:
        check = Check(name, stayed, T("all" if stayed else "not all", "全部" if stayed else
                                      "并非全部"), T("all", "全部"), id="optimum-stays")
    table = Table(T("Each run started at the optimum", "从最优点出发的每次运行"),
                  [T("optimum", "最优点"), T("variant", "变体"), T("step rule", "步长规则"),
                   T("γ per step", "每步的 γ"), T("largest move", "最大移动")], rows)
    return Result(checks=[check], tables=[table])


# ---------------------------------------------------------------- the moves of the variants

SHAPE_STEPS = 40
RESCALE_TOL = 1e-14  # relative: one rounding of w·(1 ± γ)
SNAP_TOL = 1e-14  # how far an iterate may break the box after the first step: rounding
PAIRWISE_AS_FW = "pairwise-as-fw-step"
AWAY_AS_PAIRWISE = "away-as-pairwise"


def strongly_convex_quadratic(n: int, seed: int, lower=None, upper=None) -> Quadratic:
    """A strongly convex quadratic (Hessian ⪰ I) whose minimum lies outside the set: on the
    simplex, beyond the face of the first three coordinates; on a box, past its corner."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    Q = M @ M.T / n + np.eye(n)
    if lower is None:
        centre = np.full(n, -0.3)
        centre[:3] = rng.dirichlet(np.ones(3))
    else:
        centre = rng.uniform(lower, upper)
        centre[0] = lower[0] - 1.0  # pulled below the box in the coordinate the start breaks
    return Quadratic(Q, -(Q @ centre), 0.5 * float(centre @ Q @ centre))


def _run(problem, start, feasible, variant, steps=SHAPE_STEPS):
    return frank_wolfe(problem.f_and_grad, start, feasible, steps, step="line_search",
                       variant=variant, quadratic=True, keep_iterates=True)


def _pairwise_moves(run) -> tuple[int, int, float]:
    """(steps that moved, steps that changed more than two coordinates, largest |ΣΔx|)."""
    moved, wider, imbalance = 0, 0, 0.0
    for before, after in zip(run.iterates[:-1], run.iterates[1:], strict=True):
        changed = np.flatnonzero(after != before)
        if changed.size:
            moved += 1
            wider += changed.size > 2
            imbalance = max(imbalance, abs(float(np.sum(after - before))))
    return moved, wider, imbalance


def _rescale_factor(before: np.ndarray, after: np.ndarray, gamma: float):
    """"fw" or "away" when every weight but one is multiplied by 1 − γ or 1 + γ, else None."""
    for kind, factor in (("fw", 1.0 - gamma), ("away", 1.0 + gamma)):
        off = np.abs(after - factor * before) > RESCALE_TOL * np.maximum(np.abs(after), 1e-300)
        if np.count_nonzero(off) <= 1:
            return kind
    return None


TEXTBOOK_TOL = 1e-9  # how far an iterate may sit from the textbook step's (rounding)
SUPPORT_TOL = 1e-12  # a weight this small is a vertex the step dropped (rounding left it)
TIE_TOL = 1e-12  # relative: gradient entries this close are a tie (an exact line search
# along s - v ends where g_s = g_v, so the next step's s or v often ties)


def textbook_steps(problem: Quadratic, x: np.ndarray, variant: str) -> list[np.ndarray]:
    """Where one away-step or pairwise step on the unit simplex goes, as Lacoste-Julien &
    Jaggi (2015, Algorithms 1 and 2) write it, with the exact line search of a quadratic,
    from x alone: on the simplex vertex e_i has weight x_i, so the active set is x's
    support. One point per choice of s and v the algorithm leaves open (ties)."""
    g = problem.gradient(x)
    tie = TIE_TOL * max(1.0, float(np.max(np.abs(g))))
    support = np.flatnonzero(x > SUPPORT_TOL)
    lowest = np.flatnonzero(g <= np.min(g) + tie)
    highest = support[g[support] >= np.max(g[support]) - tie]
    eye = np.eye(x.size)
    steps = []
    for s, v_index in ((eye[i], j) for i in lowest for j in highest):
        v, alpha = eye[v_index], float(x[v_index])
        if variant == "pairwise":
            d, gamma_max = s - v, alpha
        elif float(g @ (x - s)) >= float(g @ (v - x)):
            d, gamma_max = s - x, 1.0  # the Frank–Wolfe direction
        else:
            d, gamma_max = x - v, alpha / (1.0 - alpha)  # away from v, up to dropping it
        curvature = float(d @ problem.Q @ d)
        gamma = min(-float(g @ d) / curvature, gamma_max) if curvature > 0 else 0.0
        steps.append(x + gamma * d)
    return steps


def _textbook_distance(problem: Quadratic, run, variant: str) -> float:
    """The largest distance between an iterate and the nearest textbook step from the one
    before."""
    return max(
        min(float(np.max(np.abs(after - step))) for step in textbook_steps(problem, x, variant))
        for x, after in zip(run.iterates[:-1], run.iterates[1:], strict=True)
    )


def _away_moves(run) -> tuple[int, int, int]:
    """(FW steps, away steps, steps that are neither) among the steps with γ > 0."""
    counts = {"fw": 0, "away": 0, None: 0}
    for before, after, gamma in zip(run.iterates[:-1], run.iterates[1:], run.gammas,
                                    strict=True):
        if gamma > 0:
            counts[_rescale_factor(before, after, gamma)] += 1
    return counts["fw"], counts["away"], counts[None]


@experiment(
    name="variant-steps",
    title=T("What one away step and one pairwise step do to the weights",
            "一个远离步、一个成对步分别怎样改动权重"),
    description=T(
        "Runs away-step and pairwise Frank–Wolfe (exact line search) on a strongly convex "
        "quadratic over the simplex from a vertex off the optimal face, and reads each move "
        "off the iterates: which coordinates changed, and by what factor. Then starts both, and "
        "vanilla, on a box a rounding error outside it (0.9 × the tolerance FrankWolfe accepts).",
        "在单纯形上的一个强凸二次函数上，从最优面之外的一个顶点出发，运行远离步与成对 "
        "Frank–Wolfe（精确线搜索），从迭代点读出每一步：哪些坐标变了、乘了什么因子。"
        "然后让这两种变体和普通 FW 从盒子外一个舍入误差处出发（FrankWolfe 所容许容差的 0.9 倍）。",
    ),
    params=[Param("n", "int", 10, T("dimension n", "维数 n"), minimum=5, maximum=40, step=1),
            SEED],
    controls=[
        Control(PAIRWISE_AS_FW, T("the pairwise runs take plain Frank–Wolfe steps towards s",
                                  "成对步的运行改走朝向 s 的普通 Frank–Wolfe 步"),
                breaks=("pairwise-moves-two-weights", "start-snapped-into-box",
                        "steps-are-textbook-steps")),
        Control(AWAY_AS_PAIRWISE, T("the away-step runs move weight between two vertices, "
                                    "as pairwise steps do",
                                    "远离步的运行像成对步那样只在两个顶点之间挪动权重"),
                breaks=("away-rescales-weights", "steps-are-textbook-steps")),
    ],
)
def variant_steps(n: int, seed: int) -> Result:
    as_fw, as_pairwise = control_active(PAIRWISE_AS_FW), control_active(AWAY_AS_PAIRWISE)
    pairwise_variant = "vanilla" if as_fw else "pairwise"
    away_variant = "pairwise" if as_pairwise else "away"
    problem = strongly_convex_quadratic(n, seed)
    start = np.eye(n)[n - 1]  # a vertex off the optimal face: its weight must be taken away
    pairwise = _run(problem, start, C.Simplex(), pairwise_variant)
    moved, wider, imbalance = _pairwise_moves(pairwise)
    widest = max(int(np.count_nonzero(x)) for x in pairwise.iterates)
    away_run = _run(problem, start, C.Simplex(), away_variant)
    fw_steps, away_steps, neither = _away_moves(away_run)
    off_textbook = {"away": _textbook_distance(problem, away_run, "away"),
                    "pairwise": _textbook_distance(problem, pairwise, "pairwise")}

    rng = np.random.default_rng(seed)
    lower, upper = -rng.uniform(0.5, 2.0, n), rng.uniform(0.5, 2.0, n)
    box = C.Box(lower, upper)
    box_start = 0.5 * (lower + upper)
    box_start[0] = lower[0] - 0.9 * C.DEFAULT_TOL  # accepted: within FrankWolfe's tolerance
    box_start[1] = upper[1] + 0.9 * C.DEFAULT_TOL  # and past an upper bound as much
    box_problem = strongly_convex_quadratic(n, seed + 1, lower, upper)
    breach = {variant: max(box.violation(x) for x in _run(
        box_problem, box_start, box, pairwise_variant if variant == "pairwise" else variant,
        steps=10).iterates[1:]) for variant in VARIANTS}

    two_name = T(f"Each of the {SHAPE_STEPS} pairwise steps moves weight between two vertices: "
                 "x changes in at most two coordinates, by amounts that cancel",
                 f"{SHAPE_STEPS} 个成对步中的每一步都只在两个顶点之间挪动权重：x 至多有两个"
                 "坐标改变，改变量正负相抵")
    if widest <= 2:
        two = Check.not_applicable(
            id="pairwise-moves-two-weights", name=two_name, expected="0",
            why=T("the iterate never mixed more than two vertices, so any step changes at most "
                  "two coordinates; try a larger n", "迭代点从未混合两个以上的顶点，任何一步都"
                  "至多改变两个坐标；请把 n 调大"))
    else:
        two = Check(two_name, moved > 0 and wider == 0 and imbalance <= 1e-15,
                    T(f"{wider} of {moved} moving steps changed more than two coordinates; "
                      f"largest |ΣΔx| {imbalance:.1e}; up to {widest} vertices mixed",
                      f"{moved} 个移动的步中有 {wider} 步改变了两个以上的坐标；|ΣΔx| 最大 "
                      f"{imbalance:.1e}；最多混合了 {widest} 个顶点"),
                    T("0 steps; ≤ 1e-15", "0 步；≤ 1e-15"), id="pairwise-moves-two-weights")
    away_name = T("Each away-step run step multiplies every weight but one by 1 − γ (towards "
                  "s) or 1 + γ (away from an active vertex)",
                  "远离步运行的每一步都把除一个以外的所有权重乘以 1 − γ（朝向 s）"
                  "或 1 + γ（远离一个活动顶点）")
    if away_steps + neither == 0:  # every step went towards s: nothing an away step did
        away = Check.not_applicable(
            id="away-rescales-weights", name=away_name, expected="0",
            why=T("every step was a plain step towards s, no away step was taken; try another "
                  "seed", "每一步都是朝向 s 的普通步，没有走过远离步；请换一个随机种子"))
    else:
        away = Check(away_name, neither == 0,
                     T(f"{fw_steps} steps by 1 − γ, {away_steps} by 1 + γ, {neither} neither",
                       f"{fw_steps} 步乘 1 − γ，{away_steps} 步乘 1 + γ，{neither} 步都不是"),
                     T("0 neither", "0 步都不是"), id="away-rescales-weights")
    textbook = Check(
        T(f"Each of the {SHAPE_STEPS} away-step and pairwise steps lands where the textbook "
          "step (Lacoste-Julien & Jaggi 2015) does: the exact line-search minimiser along its "
          "direction, capped at γₘₐₓ = αᵥ/(1 − αᵥ) for an away step, αᵥ for a pairwise one",
          f"{SHAPE_STEPS} 个远离步与成对步中的每一步都落在教科书步（Lacoste-Julien 与 Jaggi，"
          "2015）所落之处：沿其方向的精确线搜索最小点，远离步以 γₘₐₓ = αᵥ/(1 − αᵥ) 为上限，"
          "成对步以 αᵥ 为上限"),
        max(off_textbook.values()) <= TEXTBOOK_TOL,
        T(f"largest distance: away {off_textbook['away']:.1e}, pairwise "
          f"{off_textbook['pairwise']:.1e}",
          f"最大距离：远离步 {off_textbook['away']:.1e}，成对步 {off_textbook['pairwise']:.1e}"),
        f"≤ {TEXTBOOK_TOL:.0e}", id="steps-are-textbook-steps")
    snapped = max(breach["away"], breach["pairwise"])
    snap = Check(T(f"Started {0.9 * C.DEFAULT_TOL:.1e} below one lower bound of a box and as "
                   "far above one upper bound, the away-step and pairwise iterates are rebuilt "
                   "from corners inside the box",
                   f"从盒子某个下界之下、另一个上界之上各 {0.9 * C.DEFAULT_TOL:.1e} 处出发，"
                   "远离步与成对步的迭代点都由盒子的角点重建，落在盒子内"),
                 snapped <= SNAP_TOL,
                 T(f"largest breach after the start {snapped:.1e} (vanilla keeps "
                   f"{breach['vanilla']:.1e})",
                   f"出发之后的最大越界 {snapped:.1e}（普通 FW 仍有 {breach['vanilla']:.1e}）"),
                 f"≤ {SNAP_TOL:.0e}", id="start-snapped-into-box")
    table = Table(T("The moves, read off the iterates", "从迭代点读出的每一步"),
                  [T("run", "运行"), T("what was counted", "统计了什么")],
                  [[VARIANT_LABELS["pairwise"],
                    T(f"{moved} moving steps, {wider} changing more than two coordinates",
                      f"{moved} 个移动的步，{wider} 步改变了两个以上的坐标")],
                   [VARIANT_LABELS["away"],
                    T(f"{fw_steps} by 1 − γ, {away_steps} by 1 + γ, {neither} neither",
                      f"{fw_steps} 步乘 1 − γ，{away_steps} 步乘 1 + γ，{neither} 步都不是")]]
                  + [[T(f"box, {VARIANT_LABELS[v].en}", f"盒子，{VARIANT_LABELS[v].zh}"),
                      T(f"largest breach after the start {breach[v]:.1e}",
                        f"出发之后的最大越界 {breach[v]:.1e}")] for v in VARIANTS])
    return Result(checks=[two, away, textbook, snap], tables=[table])


# ---------------------------------------------------------------- the short step

SHORT_STEPS = 40
SHORT_TOL = 1e-12  # relative: γ recovered from two iterates, against the closed form
SHORT_AS_OPEN_LOOP = "short-step-ignored"


@experiment(
    name="short-step",
    title=T("The short step: the minimiser of the quadratic upper bound",
            "短步长：二次上界的最小点"),
    description=T(
        "Runs Frank–Wolfe with the short step on a strongly convex quadratic over the simplex, "
        "with L the largest eigenvalue of its Hessian (NumPy's eigvalsh), and recovers each γₜ "
        "from the iterates as ‖xₜ₊₁ − xₜ‖ / ‖sₜ − xₜ‖, to compare with the closed form "
        "min(gₜ / (L‖sₜ − xₜ‖²), 1) and with the decrease the upper bound guarantees.",
        "在单纯形上的一个强凸二次函数上用短步长运行 Frank–Wolfe，L 取其黑塞矩阵的最大特征值"
        "（NumPy 的 eigvalsh），再从迭代点按 ‖xₜ₊₁ − xₜ‖ / ‖sₜ − xₜ‖ 还原每个 γₜ，"
        "与闭式 min(gₜ / (L‖sₜ − xₜ‖²), 1) 以及二次上界所保证的下降量对照。",
    ),
    params=[Param("n", "int", 10, T("dimension n", "维数 n"), minimum=5, maximum=40, step=1),
            SEED],
    controls=[
        Control(SHORT_AS_OPEN_LOOP, T("the step option is ignored: the run takes the open-loop "
                                      "steps 2/(t+2)",
                                      "步长选项被忽略：运行走的是开环步长 2/(t+2)"),
                breaks=("short-step-formula", "short-step-descends")),
    ],
)
def short_step(n: int, seed: int) -> Result:
    problem = strongly_convex_quadratic(n, seed)
    smoothness = float(np.linalg.eigvalsh(problem.Q)[-1])
    start = np.eye(n)[n - 1]
    rule = "open_loop" if control_active(SHORT_AS_OPEN_LOOP) else "short_step"
    run = frank_wolfe(problem.f_and_grad, start, C.Simplex(), SHORT_STEPS, step=rule,
                      smoothness=smoothness, keep_iterates=True)
    formula_error, capped, short_fall = 0.0, 0, 0.0
    for t in range(run.steps):
        x, after, s, gap = run.iterates[t], run.iterates[t + 1], run.vertices[t], run.gaps[t]
        length = float(np.linalg.norm(s - x))
        expected = min(gap / (smoothness * length**2), 1.0)
        capped += expected == 1.0
        recovered = float(np.linalg.norm(after - x)) / length
        formula_error = max(formula_error, abs(recovered - expected) / expected)
        # the upper bound f(x) − γ g + L γ² ‖d‖² / 2 at γ ≤ g / (L ‖d‖²) lies below f(x) − γ g / 2
        guaranteed = run.values[t] - 0.5 * expected * gap
        short_fall = max(short_fall, (run.values[t + 1] - guaranteed) / max(1.0, run.values[t]))
    checks = [
        Check(T(f"Each of the {SHORT_STEPS} steps is γₜ = min(gₜ / (L‖sₜ − xₜ‖²), 1), "
                "recovered from the iterates", f"{SHORT_STEPS} 步中的每一步都满足 "
                "γₜ = min(gₜ / (L‖sₜ − xₜ‖²), 1)，由迭代点还原得到"),
              formula_error <= SHORT_TOL,
              T(f"largest relative error {formula_error:.1e}; {capped} steps capped at 1",
                f"最大相对误差 {formula_error:.1e}；{capped} 步被截断为 1"),
              f"≤ {SHORT_TOL:.0e}", id="short-step-formula"),
        Check(T("Each step lowers f at least to f(xₜ) − γₜ gₜ / 2, the quadratic upper "
                "bound's guarantee", "每一步都至少把 f 降到 f(xₜ) − γₜ gₜ / 2，"
                "即二次上界所保证的下降"),
              short_fall <= 1e-14, T(f"largest shortfall {short_fall:.1e}",
                                     f"最大差额 {short_fall:.1e}"),
              "≤ 1e-14", id="short-step-descends"),
    ]
    return Result(checks=checks)


# ---------------------------------------------------------------- the line search, in general

LINE_STEPS = 15
LINE_TOL = 1e-6  # |γ − γ*|: a bounded Brent search is flat-limited near sqrt(eps)
PARABOLA = "parabola-on-exponentials"


@experiment(
    name="line-search",
    title=T("The line search on an objective that is not quadratic",
            "非二次目标上的线搜索"),
    description=T(
        "Minimises f(w) = Σ exp(cᵢ wᵢ) over the simplex with the torch-style FrankWolfe "
        "optimizer, gradients by autograd, step='line_search' and a closure. Each step γₜ "
        "must minimise f along the segment: the root of φ'(γ) = Σ cᵢ dᵢ exp(cᵢ (xᵢ + γ dᵢ)) "
        "on [0, 1], found by SciPy's brentq, or 1 when φ still falls there.",
        "用 torch 风格的 FrankWolfe 优化器在单纯形上最小化 f(w) = Σ exp(cᵢ wᵢ)，梯度由自动微分"
        "给出，step='line_search' 并传入闭包。每一步的 γₜ 都必须使 f 沿线段取最小：即 "
        "φ'(γ) = Σ cᵢ dᵢ exp(cᵢ (xᵢ + γ dᵢ)) 在 [0, 1] 上的根（由 SciPy 的 brentq 求得），"
        "或者在 φ 到 1 处仍在下降时取 1。",
    ),
    params=[Param("n", "int", 8, T("dimension n", "维数 n"), minimum=3, maximum=40, step=1),
            SEED],
    controls=[
        Control(PARABOLA, T("the step is the parabola's (quadratic=True), exact only for a "
                            "quadratic objective",
                            "步长取抛物线的最小点（quadratic=True），只对二次目标才精确"),
                breaks=("line-search-minimises",)),
    ],
)
def line_search(n: int, seed: int) -> Result:
    c = np.random.default_rng(seed).uniform(1.0, 4.0, n)
    weights = whylab.tensor(c)
    w = whylab.tensor(np.eye(n)[0], requires_grad=True)
    options = {"quadratic": True} if control_active(PARABOLA) else {}
    optimizer = FrankWolfe([w], C.Simplex(), step="line_search", **options)

    def closure():
        optimizer.zero_grad()
        loss = (w * weights).exp().sum()
        loss.backward()
        return loss

    worst, interior = 0.0, 0
    for _ in range(LINE_STEPS):
        x = w.detach().numpy().copy()
        d = C.Simplex().lmo(c * np.exp(c * x)) - x  # the gradient of f, written out

        def slope(gamma, x=x, d=d):
            return float(np.sum(c * d * np.exp(c * (x + gamma * d))))

        if slope(1.0) < 0:
            best = 1.0
        else:
            best = brentq(slope, 0.0, 1.0, xtol=1e-15)
            interior += 1
        optimizer.step(closure)
        worst = max(worst, abs(optimizer.gamma - best))
    name = T(f"Each of the {LINE_STEPS} line-search steps minimises f along its segment: "
             "|γₜ − γ*| with γ* the root of φ' (brentq)",
             f"{LINE_STEPS} 个线搜索步中的每一步都使 f 沿其线段取最小：|γₜ − γ*|，"
             "γ* 为 φ' 的根（brentq）")
    if interior == 0:
        check = Check.not_applicable(
            id="line-search-minimises", name=name, expected=f"≤ {LINE_TOL:.0e}",
            why=T("every step went to the end of its segment, so no minimiser inside was "
                  "tested; try another seed", "每一步都走到了线段的端点，没有检验到线段内部的"
                  "最小点；请换一个随机种子"))
    else:
        check = Check(name, worst <= LINE_TOL,
                      T(f"largest |γₜ − γ*| {worst:.1e}; {interior} minimisers inside the "
                        "segment", f"|γₜ − γ*| 最大 {worst:.1e}；{interior} 个最小点在线段内部"),
                      f"≤ {LINE_TOL:.0e}", id="line-search-minimises")
    return Result(checks=[check])


# ---------------------------------------------------------------- a schedule of one's own

SCHEDULE_STEPS = 30
LATE = "schedule-read-late"


@experiment(
    name="running-mean",
    title=T("γₜ = 1/(t+1): the iterate is the mean of the vertices so far",
            "γₜ = 1/(t+1)：迭代点就是迄今所有顶点的平均"),
    description=T(
        "Passes the schedule γₜ = 1/(t+1) to Frank–Wolfe as a function of the step count t. "
        "Then γ₀ = 1 puts x₁ on the first vertex, and each later step averages one more in: "
        "xₜ₊₁ = (s₀ + … + sₜ)/(t + 1), checked against the mean of the oracle's vertices.",
        "把步长表 γₜ = 1/(t+1) 作为步数 t 的函数交给 Frank–Wolfe。于是 γ₀ = 1 让 x₁ 落在第一个"
        "顶点上，之后每一步再平均进一个顶点：xₜ₊₁ = (s₀ + … + sₜ)/(t + 1)，"
        "与预言机所给顶点的平均值对照。",
    ),
    params=[Param("n", "int", 8, T("dimension n", "维数 n"), minimum=3, maximum=40, step=1),
            SEED],
    controls=[
        Control(LATE, T("the schedule is read one step late: γₜ = 1/(t+2)",
                        "步长表晚读了一步：γₜ = 1/(t+2)"),
                breaks=("iterate-is-running-mean",)),
    ],
)
def running_mean(n: int, seed: int) -> Result:
    problem = strongly_convex_quadratic(n, seed)
    late = 1 if control_active(LATE) else 0

    def schedule(t: int) -> float:
        return 1.0 / (t + 1 + late)

    run = frank_wolfe(problem.f_and_grad, np.full(n, 1.0 / n), C.Simplex(), SCHEDULE_STEPS,
                      step=schedule, keep_iterates=True)
    means = np.cumsum(run.vertices, axis=0) / np.arange(1, run.steps + 1)[:, None]
    worst = float(np.abs(np.array(run.iterates[1:]) - means).max())
    distinct = len({s.tobytes() for s in run.vertices})
    last = f"x{subscript(SCHEDULE_STEPS)}"
    check = Check(T(f"Each of x₁ … {last} is the mean of the vertices s₀ … sₜ the "
                    f"oracle returned ({distinct} distinct ones)",
                    f"x₁ … {last} 中的每一个都是预言机迄今返回的顶点 s₀ … sₜ 的平均"
                    f"（其中 {distinct} 个互不相同）"),
                  worst <= 1e-14, T(f"largest difference {worst:.1e}", f"最大差值 {worst:.1e}"),
                  "≤ 1e-14", id="iterate-is-running-mean")
    return Result(checks=[check])
