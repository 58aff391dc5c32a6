"""The frank-wolfe experiment "every set's oracle": what Frank–Wolfe asks of a feasible set.

Frank–Wolfe touches its set only through four answers: the linear minimisation oracle
(a point minimising <g, s>), how far a point breaks the set (``violation`` and
``contains``), the diameter (in the rate's constant), and, for the away and pairwise
variants, a point as a mixture of vertices. The other experiments run mostly on the
simplex; this one puts every set of :mod:`whylab.optim.constraints` -- simplex, l1 and
l2 balls, boxes with uneven bounds (one flat in a direction, one not), the nuclear-norm
ball -- through all four against closed forms written here: the support function min
over the set of <g, s> (r·min g, −r·max|g|, −r‖g‖, Σ min(l g, u g), −r·σ₁(G) from NumPy's
SVD), the violation of a vertex pushed out by half the radius, the distance between the
oracle's answers to g and −g, and the mixture summed back.
"""

from __future__ import annotations

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
from whylab.optim import constraints as C
from whylab.optim import frank_wolfe
from whylab.topics.frank_wolfe.mechanics import SEED

GRADIENTS = 6  # random gradients per set, plus the zero gradient
TOL = 1e-10  # relative to the set's scale: rounding only

MAXIMISING = "maximising-oracle"
NORM_AS_VIOLATION = "size-as-violation"
RADIUS_AS_DIAMETER = "radius-as-diameter"
EQUAL_WEIGHTS = "equal-weights"


def _sets(n: int, rng: np.random.Generator):
    """(name, set, support function g -> min over the set of <g, s>, scale) for every set."""
    lower = -rng.uniform(0.5, 2.0, n)
    upper = rng.uniform(0.5, 2.0, n)
    open_upper = upper.copy()  # a box with no flat direction: every corner has weight
    upper[-1] = lower[-1]  # one coordinate pinned: a box may be flat in some direction
    radius = 1.5
    return [
        ("simplex", C.Simplex(radius), lambda g: radius * g.min(), radius, (n,)),
        ("l1-ball", C.L1Ball(radius), lambda g: -radius * np.abs(g).max(), radius, (n,)),
        ("l2-ball", C.L2Ball(radius), lambda g: -radius * np.linalg.norm(g), radius, (n,)),
        ("box", C.Box(lower, upper), lambda g: float(np.minimum(lower * g, upper * g).sum()),
         float(np.abs(upper - lower).max()), (n,)),
        ("box, no flat side", C.Box(lower, open_upper),
         lambda g: float(np.minimum(lower * g, open_upper * g).sum()),
         float(np.abs(open_upper - lower).max()), (n,)),
        ("nuclear-ball", C.NuclearBall(radius),
         lambda g: -radius * np.linalg.svd(g, compute_uv=False)[0], radius, (n, n - 1)),
        ("nuclear-ball, one column", C.NuclearBall(radius),
         lambda g: -radius * np.linalg.norm(g), radius, (n, 1)),
    ]


def _mixture_error(feasible: C.Polytope, point: np.ndarray, scale: float) -> float:
    """How far ``point``'s vertex decomposition is from one: rebuilt point, weights summing
    to 1, every weight above 0 (an active set holds no vertex of weight 0), vertices of the
    set (1 when a weight or a vertex is wrong)."""
    pieces = feasible.vertex_decomposition(point)
    if control_active(EQUAL_WEIGHTS):
        pieces = [(v, 1.0 / len(pieces)) for v, _ in pieces]
    total = sum(w for _, w in pieces)
    rebuilt = sum(w * v for v, w in pieces)
    error = max(float(np.abs(rebuilt - point).max()), abs(total - 1.0)) / scale
    vertices_ok = all(w > 0 for _, w in pieces) and all(feasible.contains(v) for v, _ in pieces)
    if isinstance(feasible, C.Box):  # a corner: every coordinate at a bound
        vertices_ok &= all(bool(np.all((v == feasible.lower) | (v == feasible.upper)))
                           for v, _ in pieces)
    else:  # r·e_i (simplex) or ±r·e_i (l1 ball): one nonzero, of size r
        vertices_ok &= all(np.count_nonzero(v) == 1 and float(np.abs(v).max()) == feasible.radius
                           for v, _ in pieces)
    return error if vertices_ok else max(error, 1.0)


SET_NAMES = {
    "simplex": T("simplex", "单纯形"),
    "l1-ball": T("l1 ball", "ℓ1 球"),
    "l2-ball": T("l2 ball", "ℓ2 球"),
    "box": T("box", "盒约束"),
    "box, no flat side": T("box, no flat side", "盒约束（没有扁平的方向）"),
    "nuclear-ball": T("nuclear-norm ball", "核范数球"),
    "nuclear-ball, one column": T("nuclear-norm ball, one column", "核范数球（单列）"),
}
RULE_NAMES = {
    "line search (quadratic)": T("line search (quadratic)", "线搜索（二次）"),
    "line search (bounded)": T("line search (bounded)", "线搜索（有界）"),
    "open loop 2/(t+2)": T("open loop 2/(t+2)", "开环步长 2/(t+2)"),
    "short step": T("short step", "短步长"),
}
YES_NO = {True: T("yes", "是"), False: T("no", "否")}


def _vertex_pushed_out(feasible, g: np.ndarray, scale: float):
    """A point outside the set by a known amount: a vertex moved out by half the scale."""
    vertex = feasible.lmo(g)
    if isinstance(feasible, C.Box):
        out = vertex.copy()
        out.flat[0] = feasible.upper.flat[0] + 0.5 * scale
        return out, 0.5 * scale
    if isinstance(feasible, C.Simplex):  # the right sum, one entry negative by r/2
        out = np.zeros_like(vertex)
        out.flat[0], out.flat[1] = 1.5 * feasible.radius, -0.5 * feasible.radius
        return out, 0.5 * feasible.radius
    return 1.5 * vertex, 0.5 * feasible.radius  # every other set's vertices have norm r


@experiment(
    name="set-oracles",
    title=T("What Frank–Wolfe asks of a set, asked of every set",
            "Frank–Wolfe 对可行集的要求，逐个集合来问"),
    description=T(
        "Puts the simplex, the l1 and l2 balls, a box with uneven bounds and the nuclear-norm "
        "ball through the four answers Frank–Wolfe needs -- the linear minimisation oracle, "
        "the violation of a point, the diameter, a point as a mixture of vertices -- and "
        "compares each with a closed form.",
        "让单纯形、l1 球、l2 球、上下界不对称的盒子和核范数球逐一给出 Frank–Wolfe 需要的四个"
        "回答：线性最小化预言机、点的越界量、直径、把点写成顶点的混合，并逐一与闭式解对照。",
    ),
    params=[
        Param("n", "int", 6, T("dimension n (rows for matrices)", "维数 n（矩阵为行数）"),
              minimum=3, maximum=40, step=1),
        SEED,
    ],
    controls=[
        Control(MAXIMISING, T("the oracle returns the maximiser of <g, s>, the sign slip",
                              "预言机返回的是 <g, s> 的最大点：符号弄反了"),
                breaks=("oracle-attains-support",)),
        Control(NORM_AS_VIOLATION, T("the violation is reported as the size of the point, "
                                     "not how far it breaks the set",
                                     "越界量报告成点本身的大小，而不是它越出集合多远"),
                breaks=("violation-exact",)),
        Control(RADIUS_AS_DIAMETER, T("the diameter is taken to be the radius (a factor-2 slip)",
                                      "把半径当成直径（差了一个因子 2）"),
                breaks=("diameter-measured",)),
        Control(EQUAL_WEIGHTS, T("the mixture gives every vertex the same weight",
                                 "混合中每个顶点的权重都一样"),
                breaks=("mixture-sums-back",)),
    ],
)
def set_oracles(n: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    edge_rng = np.random.default_rng([seed, 1])  # the l1 surface point's own draws
    rows, worst = [], {"support": 0.0, "violation": 0.0, "diameter": 0.0, "mixture": 0.0}
    feasible_all = True
    for name, feasible, support, scale, shape in _sets(n, rng):
        # Scales from 1/10 to 10: an oracle must not care how large the gradient is.
        small = 0.05 * rng.standard_normal(shape)  # and both signs of a small one
        gradients = [rng.standard_normal(shape) * 10.0 ** rng.uniform(-1, 1)
                     for _ in range(GRADIENTS - 2)] + [small, -small, np.zeros(shape)]

        def oracle(g, feasible=feasible):
            return feasible.lmo(-g) if control_active(MAXIMISING) else feasible.lmo(g)

        support_error, answers = 0.0, []
        for g in gradients:
            s = oracle(g)
            answers.append(s)
            feasible_all &= bool(feasible.contains(s))
            size = max(1.0, float(np.abs(g).max()))
            support_error = max(support_error,
                                abs(float(np.sum(g * s)) - support(g)) / (scale * size))

        def violation(x, feasible=feasible):
            return (float(np.linalg.norm(x)) if control_active(NORM_AS_VIOLATION)
                    else feasible.violation(x))

        out, breach = _vertex_pushed_out(feasible, gradients[0], scale)
        inside = 0.5 * (answers[0] + answers[1])  # the midpoint of two points of the set
        violation_error = max(abs(violation(out) - breach), abs(violation(inside))) / scale
        # contains allows a breach of exactly tol, and no more
        stated_breach = feasible.violation(out)
        violation_ok = (feasible.contains(out, tol=stated_breach) and
                        not feasible.contains(out, tol=0.99 * stated_breach))

        measured_diameter = max(float(np.linalg.norm(oracle(g) - oracle(-g)))
                                for g in gradients[:-1])
        if name == "simplex":  # r·e_i − r·e_j: the oracle's answers to two unit gradients
            e0, e1 = np.zeros(shape), np.zeros(shape)
            e0[0], e1[1] = 1.0, 1.0
            measured_diameter = float(np.linalg.norm(oracle(-e0) - oracle(-e1)))
        if isinstance(feasible, C.Box):
            measured_diameter = float(np.linalg.norm(oracle(np.ones(shape))
                                                     - oracle(-np.ones(shape))))
        stated = feasible.radius if control_active(RADIUS_AS_DIAMETER) and hasattr(
            feasible, "radius") else feasible.diameter()
        if control_active(RADIUS_AS_DIAMETER) and isinstance(feasible, C.Box):
            stated = 0.5 * feasible.diameter()
        diameter_error = abs(stated - measured_diameter) / scale

        mixture_error = 0.0
        if isinstance(feasible, C.Polytope):
            # every answer mixed in, so the point lies strictly inside in (nearly) every
            # coordinate the set is not flat in
            weights = rng.dirichlet(np.ones(len(answers)))
            point = sum(w * a for w, a in zip(weights, answers, strict=True))
            mixture_error = _mixture_error(feasible, point, scale)
        if isinstance(feasible, C.L1Ball):
            # and a point on its surface: distinct axes with one sign each, nothing cancels,
            # and weights 1/2, 1/4, 1/4 sum to 1 exactly, so no weight is left over (not even
            # a rounding's worth) for the decomposition to place
            axes = edge_rng.choice(n, size=3, replace=False)
            point = np.zeros(n)
            point[axes] = (feasible.radius * edge_rng.choice([-1.0, 1.0], size=3)
                           * edge_rng.permutation([0.5, 0.25, 0.25]))
            mixture_error = max(mixture_error, _mixture_error(feasible, point, scale))
        worst["support"] = max(worst["support"], support_error)
        worst["violation"] = max(worst["violation"], violation_error,
                                 0.0 if violation_ok else 1.0)
        worst["diameter"] = max(worst["diameter"], diameter_error)
        worst["mixture"] = max(worst["mixture"], mixture_error)
        rows.append([SET_NAMES[name], f"{support_error:.1e}", f"{violation_error:.1e}",
                     f"{stated:.6g} / {measured_diameter:.6g}",
                     f"{mixture_error:.1e}" if isinstance(feasible, C.Polytope) else "—"])

    checks = [
        Check(T(f"On every set, the oracle's answer to {GRADIENTS} random gradients and to 0 is "
                "in the set and attains the support function min <g, s> (closed form)",
                f"在每个集合上，预言机对 {GRADIENTS} 个随机梯度和零梯度给出的点都在集合内，"
                "并取到支撑函数 min <g, s>（闭式解）"),
              feasible_all and worst["support"] <= TOL,
              T(f"largest error {worst['support']:.1e}" + ("" if feasible_all else
                                                         "; a point outside the set"),
                f"最大误差 {worst['support']:.1e}" + ("" if feasible_all else "；有点在集合外")),
              f"≤ {TOL:.0e}", id="oracle-attains-support"),
        Check(T("A vertex pushed out by half the radius breaks the set by exactly that, "
                "contains() allows a breach of exactly tol and no more, a midpoint breaks "
                "nothing", "把顶点向外推半个半径，越界量恰好就是这么多；contains() 恰好允许 tol 的"
                "越界、多一点都不行；两点的中点不越界"),
              worst["violation"] <= TOL, f"{worst['violation']:.1e}", f"≤ {TOL:.0e}",
              id="violation-exact"),
        Check(T("The diameter each set states equals the distance between the oracle's "
                "answers to opposite gradients", "每个集合给出的直径，"
                "等于预言机对一对相反梯度给出的两点之间的距离"),
              worst["diameter"] <= TOL, f"{worst['diameter']:.1e}", f"≤ {TOL:.0e}",
              id="diameter-measured"),
        Check(T("On the polytopes, a mixture of all the oracle's answers (and, on the l1 ball, "
                "a point of its surface) is rebuilt from its vertex decomposition: weights > 0 "
                "summing to 1, vertices in the set (corners for the box; r·eᵢ or ±r·eᵢ for the "
                "simplex and the l1 ball)",
                "在多面体上，预言机所有答案的混合（在 ℓ1 球上还有球面上的一点）可以由它的顶点分解"
                "还原：权重为正且和为 1，顶点都在集合内（盒子则是角点；单纯形与 ℓ1 球则是 r·eᵢ "
                "或 ±r·eᵢ）"),
              worst["mixture"] <= TOL, f"{worst['mixture']:.1e}", f"≤ {TOL:.0e}",
              id="mixture-sums-back"),
    ]
    table = Table(
        T("Largest error per set (relative to its scale)", "各集合的最大误差（相对于其尺度）"),
        [T("set", "集合"), T("oracle vs support", "预言机与支撑函数"),
         T("violation", "越界量"), T("diameter stated / measured", "直径：给出 / 实测"),
         T("mixture", "混合")],
        rows,
    )
    return Result(checks=checks, tables=[table])


LINEAR_RULES = (("line search (quadratic)", "line_search", True),
                ("line search (bounded)", "line_search", False),
                ("open loop 2/(t+2)", "open_loop", False),
                ("short step", "short_step", False))
STAYED = "step-past-vertex"


@experiment(
    name="linear-objective",
    title=T("A linear objective: one step to the best vertex", "线性目标：一步走到最好的顶点"),
    description=T(
        "Minimises <c, x> over the simplex from its centre with each step rule. The minimum is "
        "the vertex the oracle returns at once, so the first step must land on it exactly (a "
        "line search on a line finds γ = 1, the open-loop rule starts at 2/(0 + 2) = 1, the "
        "short step is capped at 1) and every later iterate stay there, inside the set.",
        "从单纯形的中心出发，用每一种步长规则最小化 <c, x>。最小点就是预言机一开始就返回的顶点，"
        "所以第一步必须恰好落在它上面（直线上的线搜索找到 γ = 1，开环规则从 2/(0 + 2) = 1 开始，"
        "短步长被截断为 1），之后的每个迭代点都留在那里，且不离开集合。",
    ),
    params=[
        Param("n", "int", 8, T("dimension n", "维数 n"), minimum=2, maximum=200, step=1),
        SEED,
    ],
    controls=[
        Control(STAYED, T("each step may go twice as far as the vertex (γ up to 2)",
                          "每一步最远可以走到顶点的两倍远（γ 最大为 2）"),
                breaks=("first-step-lands", "iterates-feasible")),
    ],
)
def linear_objective(n: int, seed: int) -> Result:
    c = np.random.default_rng(seed).standard_normal(n)
    best = np.zeros(n)
    best[int(np.argmin(c))] = 1.0  # argmin over the simplex of <c, x>: a vertex, closed form

    def f_and_grad(x):
        return float(c @ x), c.copy()

    start = np.full(n, 1.0 / n)
    rows, landed, feasible, worst = [], True, True, 0.0
    for label, rule, quadratic in LINEAR_RULES:
        if control_active(STAYED):  # a hand-made loop whose steps are not capped at γ = 1
            iterates = [start]
            for _ in range(5):
                iterates.append(iterates[-1] + 2.0 * (C.Simplex().lmo(c) - iterates[-1]))
        else:
            # A linear f has curvature 0, so any L > 0 bounds it; a tiny one makes the short
            # step -slope / (L |d|^2) the capped full step.
            iterates = frank_wolfe(f_and_grad, start, C.Simplex(), 5, step=rule,
                                   quadratic=quadratic, smoothness=1e-12,
                                   keep_iterates=True).iterates
        first = iterates[1]
        breach = max(C.Simplex().violation(x) for x in iterates)
        stays = all(np.array_equal(x, first) for x in iterates[1:])
        landed &= bool(np.array_equal(first, best)) and stays
        feasible &= breach <= TOL
        worst = max(worst, breach)
        rows.append([RULE_NAMES[label], YES_NO[bool(np.array_equal(first, best))],
                     YES_NO[bool(stays)], f"{breach:.1e}"])
    checks = [
        Check(T(f"With every step rule ({len(LINEAR_RULES)}), the first step lands exactly on "
                "the best vertex and the iterates stay there",
                f"每一种步长规则（共 {len(LINEAR_RULES)} 种）下，第一步都恰好落在最好的顶点上，"
                "之后的迭代点也都留在那里"),
              landed, T("all" if landed else "not all", "全部" if landed else "并非全部"),
              T("all", "全部"), id="first-step-lands"),
        Check(T("Every iterate of every run lies in the simplex",
                "每次运行的每个迭代点都在单纯形内"),
              feasible, f"{worst:.1e}", f"≤ {TOL:.0e}", id="iterates-feasible"),
    ]
    table = Table(T("Each step rule on <c, x>", "每种步长规则在 <c, x> 上的表现"),
                  [T("step rule", "步长规则"), T("first step on the vertex", "第一步落在顶点上"),
                   T("stays there", "之后留在那里"), T("largest breach", "最大越界")], rows)
    return Result(checks=checks, tables=[table])
