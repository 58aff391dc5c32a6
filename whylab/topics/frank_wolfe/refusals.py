"""The frank-wolfe experiment "what Frank–Wolfe refuses": inputs it cannot honour.

Frank–Wolfe never projects, so three inputs would go silently wrong if accepted: a start
outside the set (every iterate would stay outside), a set that is not bounded (a box with
an infinite bound: the oracle's vertex would be at infinity), and a negative step count.
The experiment feeds each, and a few options that do not fit together, to
:mod:`whylab.optim.frank_wolfe` and :mod:`whylab.optim.constraints`, and checks that each
is refused with an error naming the argument, the set and the bound, while the legal
extremes (0 steps; a start 0.9 × tol outside, which rounding can produce) are accepted.
Its control runs the same inputs through code that trusts them.
"""

from __future__ import annotations

import contextlib
import math
from unittest import mock

import numpy as np

import whylab
from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    Table,
    Text,
    control_active,
    experiment,
)
from whylab.optim import FrankWolfe, frank_wolfe
from whylab.optim import constraints as C
from whylab.optim.optimizer import Optimizer

TRUSTING = "trusting-inputs"


def _refusal(call, errors=ValueError) -> str:
    """The message of the error (of ``errors``) ``call()`` raises, or "" when it accepts."""
    try:
        call()
    except errors as error:
        return str(error)
    return ""


def _trusting_optimizer_init(self, params, constraint, step="open_loop", variant="vanilla", *,
                             smoothness=None, quadratic=False, tol=C.DEFAULT_TOL):
    """FrankWolfe's constructor without a question asked of its arguments."""
    self.step_rule, self.variant, self.smoothness = step, variant, smoothness
    self.quadratic, self.tol, self.gap, self.gamma = quadratic, tol, math.nan, math.nan
    Optimizer.__init__(self, params, dict(constraint=constraint))


def _trusting_box_init(self, lower, upper):
    """Box's constructor keeping whatever bounds it is given."""
    lower, upper = np.broadcast_arrays(np.asarray(lower, float), np.asarray(upper, float))
    self.lower, self.upper = lower.copy(), upper.copy()


def _trusting():
    if not control_active(TRUSTING):
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch.object(FrankWolfe, "__init__", _trusting_optimizer_init))
    stack.enter_context(mock.patch.object(C.Box, "__init__", _trusting_box_init))
    return stack


@experiment(
    name="refusals",
    title=T("What Frank–Wolfe refuses", "Frank–Wolfe 拒收什么"),
    description=T(
        "Feeds Frank–Wolfe a negative step count, a box with an infinite or crossed bound, "
        "starts outside a box and a simplex, and options that do not fit together, and "
        "checks that each is refused with an error naming the argument, the set and the "
        "bound, while 0 steps and a start 0.9 × tol outside are accepted.",
        "把负的迭代步数、某个界为无穷或上下界交错的盒子、位于盒子或单纯形之外的起点，以及"
        "互不相容的选项交给 Frank–Wolfe，检查每一种都被拒收，且报错指明了参数、集合与界限；"
        "而 0 步和越界 0.9 × tol 的起点都被接受。",
    ),
    params=[Param("n", "int", 3, T("dimension n", "维数 n"), minimum=2, maximum=20, step=1)],
    controls=[
        Control(TRUSTING, T("the optimizer and the box trust their arguments, and the step "
                            "count is a plain range(steps)",
                            "优化器和盒子都不检查参数，迭代步数就是普通的 range(steps)"),
                breaks=("steps-bound", "bounded-box", "start-checked", "options-checked")),
    ],
)
def refusals(n: int) -> Result:
    trusting = control_active(TRUSTING)
    target = np.full(n, 0.25)

    def f_and_grad(x):
        return 0.5 * float((x - target) @ (x - target)), x - target

    centre = np.full(n, 1.0 / n)

    def run(x0=centre, feasible=None, steps=2, **options):
        if trusting and isinstance(steps, int):
            steps = int(max(steps, 0))  # range(steps): no step for a negative count
        return frank_wolfe(f_and_grad, x0, feasible or C.Simplex(), steps, **options)

    with _trusting():
        negative = _refusal(lambda: run(steps=-1))
        boolean = _refusal(lambda: run(steps=True))
        kept = []  # the run of 0 steps, if it is accepted
        zero_refused = _refusal(lambda: kept.append(run(steps=0)))
        zero_ok = (not zero_refused and kept[0].steps == 0 and np.array_equal(kept[0].x, centre)
                   and kept[0].values == [f_and_grad(centre)[0]])

        upper_inf = _refusal(lambda: C.Box(0.0, np.inf))
        lower_inf = _refusal(lambda: C.Box(-np.inf, np.zeros(n)))
        crossed_upper = np.ones(n)
        crossed_upper[0] = 0.0  # pinned (lower = upper): legal, and no crossing to name
        crossed_upper[n - 1] = -1.0
        crossed = _refusal(lambda: C.Box(np.zeros(n), crossed_upper))
        flat_ok = not _refusal(lambda: C.Box(np.zeros(n), np.zeros(n)))
        no_radius = _refusal(lambda: C.L1Ball(0.0))
        unmatched = _refusal(lambda: C.Box(np.zeros(n), np.ones(n + 1)))

        outside = np.full(n, 0.5)
        outside[n - 1] = 1.5
        scalar_box = _refusal(lambda: run(outside, C.Box(0.0, 1.0)))
        array_box = _refusal(lambda: run(outside, C.Box(np.zeros(n), np.ones(n))))
        off_simplex = _refusal(lambda: run(2.0 * centre))
        near = centre.copy()
        near[0] += 0.9 * C.DEFAULT_TOL
        near_ok = not _refusal(lambda: run(near, steps=1))
        far = centre.copy()
        far[0] += 1.1 * C.DEFAULT_TOL
        too_far = _refusal(lambda: run(far, steps=1))
        broken = centre.copy()
        broken[0] = np.nan  # not a point of any set: FrankWolfe itself must say so
        not_a_point = _refusal(lambda: FrankWolfe([whylab.tensor(broken)], C.Simplex()))
        sets = (C.Simplex(), C.L1Ball(1.0), C.L2Ball(1.0), C.Box(-np.ones(n), np.ones(n)))
        holding_nan = [type(s).__name__ for s in sets if s.contains(broken)]
        if C.NuclearBall(1.0).contains(broken.reshape(1, n)):
            holding_nan.append("NuclearBall")

        round_ball = _refusal(lambda: run(np.zeros(n), C.L2Ball(1.0), variant="away", steps=0))
        no_smoothness = _refusal(lambda: run(step="short_step", steps=0))
        flat_smoothness = _refusal(lambda: run(step="short_step", smoothness=0.0, steps=0))
        unknown = _refusal(lambda: run(step="open-loop", steps=0))
        # the options are keyword-only: a step rule passed by position is refused by Python
        positional = _refusal(lambda: frank_wolfe(f_and_grad, centre, C.Simplex(), 0,
                                                  "short_step"), (ValueError, TypeError))

    steps_ok = (zero_ok and "steps must be an int >= 0, got -1" in negative
                and "got True" in boolean)
    bounded_ok = (flat_ok and "must be finite" in upper_inf and "must be finite" in lower_inf
                  and f"lower[{n - 1}] = 0 > upper[{n - 1}] = -1" in crossed
                  and "radius must be a finite number > 0, got 0.0" in no_radius
                  and f"lower ({n},) and upper ({n + 1},) do not broadcast" in unmatched)
    start_ok = (near_ok and "is not in Box(lower=0, upper=1): it breaks the set by 0.5"
                in scalar_box and f"Box(lower=<({n},)>, upper=<({n},)>)" in array_box
                and "is not in Simplex(radius=1): it breaks the set by 1" in off_simplex
                and "(tol 1e-09)" in too_far
                and f"(shape ({n},)) holds NaN or infinity" in not_a_point and not holding_nan)
    options_ok = ("needs a polytope" in round_ball and "needs smoothness=L" in no_smoothness
                  and "must be a finite number > 0, got 0.0" in flat_smoothness
                  and "step must be one of open_loop, line_search, short_step, got 'open-loop'"
                  in unknown and "takes 4 positional arguments but 5 were given" in positional)

    def shown(message: str) -> Text:
        """The refusal quoted as the code raised it (its words are the program's, in English)."""
        return T(f"“{message}”", f"“{message}”") if message else T("accepted", "被接受")

    def joined(*messages: str) -> Text:
        quoted = [shown(m) for m in messages]
        return T(" / ".join(q.en for q in quoted), " / ".join(q.zh for q in quoted))

    checks = [
        Check(T("A step count of −1 or True is refused, naming the bound; 0 steps return the "
                "start and f(x₀) alone", "迭代步数 −1 或 True 被拒收，报错指明界限；0 步则原样"
                "返回起点，只带 f(x₀)"),
              steps_ok, joined(negative, boolean, zero_refused),
              T("errors naming >= 0 and True; the start returned",
                "指明 >= 0 与 True 的报错；起点被原样返回"), id="steps-bound"),
        Check(T("A box with an infinite upper or lower bound is refused (Frank–Wolfe needs a "
                f"bounded set), one with lower > upper names the entry [{n - 1}] (not the "
                "entry [0] it pins, lower = upper), bounds of shapes that do not broadcast and "
                "a ball of radius 0 are refused; a flat box (lower = upper) is accepted",
                "某个上界或下界为无穷的盒子被拒收（Frank–Wolfe 需要有界集合），下界大于上界的"
                f"盒子被拒收并点名分量 [{n - 1}]（而不是上下界相等、被固定住的分量 [0]），"
                "形状无法广播的上下界与半径为 0 的球都被拒收；上下界相等的扁盒子被接受"),
              bounded_ok, joined(upper_inf, lower_inf, crossed, unmatched, no_radius),
              T(f"errors naming finiteness, lower[{n - 1}] > upper[{n - 1}] and radius > 0",
                f"指明有限性、lower[{n - 1}] > upper[{n - 1}] 与半径 > 0 的报错"),
              id="bounded-box"),
        Check(T("A start outside the set is refused, naming the set (a scalar box by its "
                "bounds, an array box by their shape, the simplex by its radius), the breach "
                "and the tolerance, and so is a parameter holding NaN, which no set's "
                "contains() admits; 0.9 × tol outside is accepted",
                "位于集合之外的起点被拒收，报错指明集合（标量盒子给出上下界，数组盒子给出形状，"
                "单纯形给出半径）、越界量与容差，含 NaN 的参数同样被拒收，且任何集合的 "
                "contains() 都不接纳它；越界 0.9 × tol 的起点被接受"),
              start_ok, joined(scalar_box, array_box, off_simplex, too_far, not_a_point),
              T("errors naming Box(lower=0, upper=1), the bounds' shape, Simplex(radius=1) and "
                "tol 1e-09", "指明 Box(lower=0, upper=1)、界的形状、Simplex(radius=1) 与 tol "
                "1e-09 的报错"), id="start-checked"),
        Check(T("Options that do not fit are refused: away steps on the l2 ball (no finite "
                "vertex set), the short step without L or with L = 0, an unknown step rule, a "
                "step rule passed by position (the options are keyword-only)",
                "互不相容的选项被拒收：ℓ2 球上的远离步（没有有限的顶点集）、没有给 L 或 L = 0 "
                "的短步长、未知的步长规则、按位置传入的步长规则（选项只能按关键字传入）"),
              options_ok, joined(round_ball, no_smoothness, flat_smoothness, unknown,
                                 positional),
              T("five errors naming the polytope, L, the step rules and the positional count",
                "五条报错，指明多面体、L、步长规则与位置参数的个数"), id="options-checked"),
    ]
    table = Table(
        T("What was fed, and the answer", "输入了什么，得到什么回答"),
        [T("input", "输入"), T("answer", "回答")],
        [[T("steps = −1", "迭代步数 −1"), shown(negative)],
         [T("steps = True", "迭代步数为 “True”"), shown(boolean)],
         [T("steps = 0", "迭代步数 0"), T("start returned" if zero_ok else "wrong result",
                                         "原样返回起点" if zero_ok else "结果有误")],
         [T("Box(0, ∞)", "Box(0, ∞)"), shown(upper_inf)],
         [T("Box(−∞, 0)", "Box(−∞, 0)"), shown(lower_inf)],
         [T(f"Box with lower[0] = upper[0] = 0 and lower[{n - 1}] = 0 > upper[{n - 1}] = −1",
            f"下界与上界第 0 个分量都为 0、下界第 {n - 1} 个分量 0 大于上界的 −1 的盒子"),
          shown(crossed)],
         [T(f"Box with bounds of shapes ({n},) and ({n + 1},)",
            f"上下界形状分别为 ({n},) 与 ({n + 1},) 的盒子"), shown(unmatched)],
         [T("L1Ball(0)", "半径为 0 的 ℓ1 球"), shown(no_radius)],
         [T("a start outside Box(0, 1)", "Box(0, 1) 之外的起点"), shown(scalar_box)],
         [T(f"a start outside a box with bounds of shape ({n},)",
            f"界的形状为 ({n},) 的盒子之外的起点"), shown(array_box)],
         [T("a start summing to 2 on the simplex", "单纯形上和为 2 的起点"), shown(off_simplex)],
         [T("a start 0.9 × tol outside the simplex", "越出单纯形 0.9 × tol 的起点"),
          T("accepted" if near_ok else "refused", "被接受" if near_ok else "被拒收")],
         [T("a start 1.1 × tol outside the simplex", "越出单纯形 1.1 × tol 的起点"),
          shown(too_far)],
         [T("a FrankWolfe parameter holding NaN", "含 NaN 的 FrankWolfe 参数"),
          shown(not_a_point)],
         [T("a point holding NaN, asked of each set's contains()",
            "含 NaN 的点，逐一交给各集合的 contains()"),
          T("in " + ", ".join(holding_nan) if holding_nan else "in no set",
            "属于 " + "、".join(holding_nan) if holding_nan else "不属于任何集合")],
         [T("away steps on the l2 ball", "ℓ2 球上的远离步"), shown(round_ball)],
         [T("short step without L", "没有给 L 的短步长"), shown(no_smoothness)],
         [T("short step with L = 0", "L = 0 的短步长"), shown(flat_smoothness)],
         [T("step = 'open-loop'", "步长规则写成 “open-loop”"), shown(unknown)],
         [T("the step rule as a fifth positional argument", "步长规则作为第五个位置参数传入"),
          shown(positional)]],
    )
    return Result(checks=checks, tables=[table])
