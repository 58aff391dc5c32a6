"""Frank–Wolfe (conditional gradient): constrained minimisation without projections.

Each step minimises the *linear* model of f over the feasible set D and moves towards
the answer by a convex combination, so the iterate never leaves D::

    s   = argmin_{s in D} <grad f(x), s>        (the set's linear minimisation oracle)
    gap = <grad f(x), x - s>                    (the Frank–Wolfe gap, >= f(x) - f*)
    x  <- x + gamma * d,  d = s - x,  gamma in [0, 1]

The gap costs nothing extra and certifies the error: by convexity
f* >= f(x) + <grad f(x), x* - x> >= f(x) - gap. The step size gamma comes from one of

* ``"open_loop"``  -- gamma_t = 2 / (t + 2) (Jaggi 2013, Thm 1: f(x_t) - f* <= 2 C_f / (t + 2));
* ``"short_step"`` -- gamma = min(-<g, d> / (L ||d||^2), gamma_max), the minimiser of the
  quadratic upper bound given by the smoothness constant L;
* ``"line_search"`` -- gamma minimising f(x + gamma d) on [0, gamma_max], evaluated through
  the closure passed to ``step`` (as ``torch.optim.LBFGS`` does). With ``quadratic=True``
  the objective is taken to be quadratic and the step is exact: the parabola through
  f(x), its slope <g, d> and f(x + gamma_max d) is minimised in closed form.

and the direction d from one of the variants (Lacoste-Julien & Jaggi, NeurIPS 2015):

* ``"vanilla"``  -- towards the oracle's vertex s (gamma_max = 1);
* ``"away"``     -- towards s, or away from the worst vertex v of the *active set* (the
  vertices x is currently a mixture of) when that descends faster: d = x - v,
  gamma_max = a_v / (1 - a_v);
* ``"pairwise"`` -- moves weight from v to s: d = s - v, gamma_max = a_v.

The away and pairwise variants keep the active set, so they need a set with finitely
many vertices (:class:`~whylab.optim.constraints.Polytope`: simplex, L1 ball, box).

All parameters move with one gamma: several parameters (or groups, each with its own
``constraint``) are Frank–Wolfe on the product of their sets, and the reported gap is
the sum of their gaps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize_scalar

import whylab

from .constraints import DEFAULT_TOL, ConstraintSet, Polytope
from .optimizer import Optimizer

STEP_RULES = ("open_loop", "line_search", "short_step")
VARIANTS = ("vanilla", "away", "pairwise")
LINE_SEARCH_XATOL = 1e-12  # bounded Brent search: tolerance on gamma (general objectives)


@dataclass
class ActiveSet:
    """The vertices an iterate is a convex combination of, with their weights.

    Vertices are keyed by their bytes: the oracles return exact vertices (entries 0,
    ±r, a bound), so a vertex met twice has the same key.
    """

    vertices: dict[bytes, np.ndarray] = field(default_factory=dict)
    weights: dict[bytes, float] = field(default_factory=dict)

    @classmethod
    def of(cls, constraint: Polytope, x: np.ndarray) -> ActiveSet:
        active = cls()
        for vertex, weight in constraint.vertex_decomposition(x):
            active.add(vertex, weight)
        return active

    def add(self, vertex: np.ndarray, weight: float) -> None:
        key = vertex.tobytes()
        self.vertices.setdefault(key, vertex)
        self.weights[key] = self.weights.get(key, 0.0) + weight

    def point(self) -> np.ndarray:
        """sum of weight * vertex: the iterate, rebuilt so dropped vertices leave no residue."""
        keys = list(self.weights)
        total = np.zeros_like(self.vertices[keys[0]])
        for key in keys:
            total += self.weights[key] * self.vertices[key]
        return total

    def away_vertex(self, grad: np.ndarray) -> tuple[bytes, np.ndarray, float]:
        """The active vertex with the largest <grad, v> (the one to move away from)."""
        key = max(self.weights, key=lambda k: float(np.vdot(grad, self.vertices[k])))
        return key, self.vertices[key], self.weights[key]

    def drop(self, key: bytes) -> None:
        del self.weights[key]
        del self.vertices[key]


@dataclass
class _Move:
    """One parameter's planned move: x <- x + gamma * direction for gamma in [0, gamma_max]."""

    param: object
    x: np.ndarray
    grad: np.ndarray
    vertex: np.ndarray  # the oracle's answer s
    gap: float
    direction: np.ndarray
    gamma_max: float
    kind: str  # "fw", "away" or "pairwise"
    away_key: bytes | None = None


class FrankWolfe(Optimizer):
    """Frank–Wolfe over a convex set, driven by the gradients autograd leaves in ``.grad``.

    Args:
        params: parameters or parameter groups; each must start inside its set (Frank–Wolfe
            never projects). A group may carry its own ``constraint``.
        constraint: a :class:`~whylab.optim.constraints.ConstraintSet` (Simplex, L1Ball,
            L2Ball, Box, NuclearBall).
        step: ``"open_loop"`` (2 / (t + 2)), ``"short_step"`` (needs ``smoothness``),
            ``"line_search"`` (needs a closure in :meth:`step`), or a function of the step
            count t = 0, 1, ... giving gamma_t (another open-loop schedule).
        variant: ``"vanilla"``, ``"away"`` or ``"pairwise"`` (the last two on polytopes).
        smoothness: the constant L with grad f L-Lipschitz (Euclidean), for ``short_step``.
        quadratic: the objective is quadratic, so ``line_search`` can take the exact step.
        tol: feasibility tolerance for the starting point.

    After every :meth:`step`, ``optimizer.gap`` holds the Frank–Wolfe gap
    ``<grad f(x), x - s>`` at the point the step started from (summed over parameters),
    ``optimizer.gamma`` the step size taken, and ``optimizer.state[p]`` each parameter's
    ``"gap"``, ``"vertex"`` (the oracle's s) and ``"step"`` count. ``step`` itself returns
    the closure's loss, as every torch optimizer does.
    """

    def __init__(
        self,
        params,
        constraint: ConstraintSet,
        step: str | Callable[[int], float] = "open_loop",
        variant: str = "vanilla",
        *,
        smoothness: float | None = None,
        quadratic: bool = False,
        tol: float = DEFAULT_TOL,
    ) -> None:
        if not callable(step) and step not in STEP_RULES:
            raise ValueError(f"FrankWolfe: step must be one of {', '.join(STEP_RULES)}, "
                             f"got {step!r}")
        if variant not in VARIANTS:
            raise ValueError(f"FrankWolfe: variant must be one of {', '.join(VARIANTS)}, "
                             f"got {variant!r}")
        if step == "short_step":
            if smoothness is None:
                raise ValueError("FrankWolfe: step='short_step' needs smoothness=L, the "
                                 "Lipschitz constant of the gradient")
            if not (math.isfinite(smoothness) and smoothness > 0):
                raise ValueError(f"FrankWolfe: smoothness must be a finite number > 0, got "
                                 f"{smoothness!r}")
        self.step_rule = step
        self.variant = variant
        self.smoothness = smoothness
        self.quadratic = quadratic
        self.tol = tol
        self.gap = math.nan
        self.gamma = math.nan
        super().__init__(params, dict(constraint=constraint))
        for index, (param, group) in enumerate(self._params_with_groups()):
            self._check_start(index, param, group["constraint"])

    def _params_with_groups(self):
        for group in self.param_groups:
            for param in group["params"]:
                yield param, group

    def _check_start(self, index: int, param, constraint) -> None:
        if not isinstance(constraint, ConstraintSet):
            raise TypeError(f"FrankWolfe: constraint must be a ConstraintSet (Simplex, L1Ball, "
                            f"L2Ball, Box, NuclearBall), got {type(constraint).__name__}")
        if self.variant != "vanilla" and not isinstance(constraint, Polytope):
            raise ValueError(
                f"FrankWolfe: variant={self.variant!r} keeps an active set of vertices, so it "
                f"needs a polytope (Simplex, L1Ball, Box); {constraint!r} has infinitely many "
                "extreme points -- use variant='vanilla'")
        x = _as_array(param)
        constraint.check_shape(x.shape)
        if not np.isfinite(x).all():
            raise ValueError(
                f"FrankWolfe: parameter {index} (shape {tuple(x.shape)}) holds NaN or "
                "infinity, so it lies in no set; Frank–Wolfe must start from a finite, "
                "feasible point")
        if not constraint.contains(x, self.tol):
            raise ValueError(
                f"FrankWolfe: parameter {index} (shape {tuple(x.shape)}) is not in "
                f"{constraint!r}: it breaks the set by {constraint.violation(x):.3g} "
                f"(tol {self.tol:g}); Frank–Wolfe never projects, so it must start feasible")

    # ------------------------------------------------------------ the step

    def step(self, closure: Callable[[], object] | None = None):
        """One Frank–Wolfe step of every parameter; return the closure's loss, if any.

        Without a closure, the gradients must already be in ``.grad`` (call ``backward``
        first). ``line_search`` re-evaluates the loss through the closure at trial points,
        which leaves ``.grad`` holding the gradient of the last trial point (as LBFGS does).
        """
        if self.step_rule == "line_search" and closure is None:
            raise ValueError("FrankWolfe: step='line_search' needs the objective: call "
                             "optimizer.step(closure) with a closure that returns the loss")
        loss = self._run_closure(closure)
        moves = []
        with whylab.no_grad():
            for index, (param, group) in enumerate(self._params_with_groups()):
                if param.grad is None:
                    continue
                moves.append(self._plan(index, param, group["constraint"]))
        if not moves:
            return loss
        gamma = self._step_size(moves, loss, closure)
        with whylab.no_grad():
            for move in moves:
                self._apply(move, gamma)
        self.gap = float(sum(move.gap for move in moves))
        self.gamma = gamma
        return loss

    def _plan(self, index: int, param, constraint: ConstraintSet) -> _Move:
        x = _as_array(param)
        grad = _as_array(param.grad)
        if not np.all(np.isfinite(grad)):
            raise ValueError(f"FrankWolfe: the gradient of parameter {index} has NaN or "
                             "infinite entries (param.grad); the oracle needs a finite one")
        vertex = constraint.lmo(grad)
        gap = float(np.vdot(grad, x - vertex))
        state = self.state[param]
        if self.variant == "vanilla":
            return _Move(param, x, grad, vertex, gap, vertex - x, 1.0, "fw")
        active = state.get("active_set")
        if active is None:
            active = state["active_set"] = ActiveSet.of(constraint, x)
        away_key, away, away_weight = active.away_vertex(grad)
        if self.variant == "pairwise":
            return _Move(param, x, grad, vertex, gap, vertex - away, away_weight, "pairwise",
                         away_key)
        away_gap = float(np.vdot(grad, away - x))
        if gap >= away_gap:
            return _Move(param, x, grad, vertex, gap, vertex - x, 1.0, "fw")
        gamma_max = away_weight / (1.0 - away_weight) if away_weight < 1.0 else math.inf
        return _Move(param, x, grad, vertex, gap, x - away, gamma_max, "away", away_key)

    def _step_size(self, moves: list[_Move], loss, closure) -> float:
        gamma_max = min(move.gamma_max for move in moves)
        # t counts this optimizer's steps; it lives in the per-parameter state (as torch's
        # step counters do), so a loaded state_dict resumes the open-loop schedule.
        t = max(self.state[move.param].get("step", 0) for move in moves)
        slope = sum(float(np.vdot(move.grad, move.direction)) for move in moves)
        if slope >= 0:
            return 0.0  # no descent along d: x is optimal to the oracle's precision
        if callable(self.step_rule):
            return min(float(self.step_rule(t)), gamma_max)
        if self.step_rule == "open_loop":
            return min(2.0 / (t + 2.0), gamma_max)
        squared_length = sum(float(np.vdot(move.direction, move.direction)) for move in moves)
        if self.step_rule == "short_step":
            return min(-slope / (self.smoothness * squared_length), gamma_max)
        return self._line_search(moves, float(loss), slope, gamma_max, closure)

    def _line_search(self, moves, value_at_zero, slope, gamma_max, closure) -> float:
        def value_at(gamma: float) -> float:
            with whylab.no_grad():
                for move in moves:
                    _write(move.param, move.x + gamma * move.direction)
            with whylab.enable_grad():
                value = float(closure())
            return value

        if self.quadratic:
            # phi(g) = phi(0) + slope * g + curvature * g^2 / 2, exact for a quadratic.
            curvature = 2.0 * (value_at(gamma_max) - value_at_zero - slope * gamma_max)
            curvature /= gamma_max**2
            gamma = gamma_max if curvature <= 0 else min(-slope / curvature, gamma_max)
        else:
            found = minimize_scalar(value_at, bounds=(0.0, gamma_max), method="bounded",
                                    options={"xatol": LINE_SEARCH_XATOL})
            gamma = float(found.x)
            if value_at(gamma_max) <= found.fun:
                gamma = gamma_max
        with whylab.no_grad():
            for move in moves:
                _write(move.param, move.x)
        return gamma

    def _apply(self, move: _Move, gamma: float) -> None:
        state = self.state[move.param]
        state["step"] = state.get("step", 0) + 1
        state["gap"] = move.gap
        state["vertex"] = move.vertex
        if self.variant == "vanilla":
            # (1 - gamma) x + gamma s: a convex combination, so zeros of x and s stay zero.
            _write(move.param, (1.0 - gamma) * move.x + gamma * move.vertex)
            return
        active: ActiveSet = state["active_set"]
        if move.kind == "fw":
            if gamma >= 1.0:
                active.vertices.clear()
                active.weights.clear()
                active.add(move.vertex, 1.0)
            else:
                for key in active.weights:
                    active.weights[key] *= 1.0 - gamma
                active.add(move.vertex, gamma)
        elif move.kind == "away":
            for key in active.weights:
                active.weights[key] *= 1.0 + gamma
            active.weights[move.away_key] -= gamma
            if gamma >= move.gamma_max:
                active.drop(move.away_key)  # a drop step: the vertex leaves the active set
        else:
            active.weights[move.away_key] -= gamma
            if gamma >= move.gamma_max:
                active.drop(move.away_key)
            active.add(move.vertex, gamma)
        _write(move.param, active.point())


def _as_array(tensor) -> np.ndarray:
    return np.array(tensor.detach().numpy(), dtype=float)


def _write(param, values: np.ndarray) -> None:
    param.copy_(whylab.tensor(np.asarray(values), dtype=param.dtype))


# ---------------------------------------------------------------- NumPy front end


@dataclass
class FrankWolfeResult:
    """What :func:`frank_wolfe` returns: the last iterate and the whole run.

    ``values[t]`` is f(x_t) for t = 0..steps (x_0 the start); ``gaps[t]``, ``gammas[t]``
    and ``vertices[t]`` belong to step t (the gap and oracle vertex at x_t, the step size
    taken from it). ``iterates`` holds x_0..x_steps when ``keep_iterates`` was set.
    """

    x: np.ndarray
    values: list[float]
    gaps: list[float]
    gammas: list[float]
    vertices: list[np.ndarray]
    iterates: list[np.ndarray]

    @property
    def steps(self) -> int:
        return len(self.gaps)


def frank_wolfe(
    f_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0,
    constraint: ConstraintSet,
    steps: int,
    *,
    step: str = "open_loop",
    variant: str = "vanilla",
    smoothness: float | None = None,
    quadratic: bool = False,
    gap_tol: float | None = None,
    keep_iterates: bool = False,
) -> FrankWolfeResult:
    """Run Frank–Wolfe from ``x0`` for NumPy users: ``f_and_grad(x)`` returns (f(x), grad).

    Stops after ``steps`` steps, or earlier once a step starts from a gap of ``gap_tol``
    or less (with ``gap_tol=None``, the default, it always takes every step).
    The same :class:`FrankWolfe` does the work, fed the gradients ``f_and_grad`` gives.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"frank_wolfe: steps must be an int >= 0, got {steps!r}")
    start = np.array(x0, dtype=float)
    if not np.all(np.isfinite(start)):
        raise ValueError("frank_wolfe: x0 has NaN or infinite entries")
    param = whylab.tensor(start.copy(), requires_grad=True)
    optimizer = FrankWolfe([param], constraint, step=step, variant=variant,
                           smoothness=smoothness, quadratic=quadratic)

    def closure() -> float:
        value, grad = f_and_grad(param.detach().numpy().copy())
        grad = np.asarray(grad, dtype=float)
        if grad.shape != start.shape:
            raise ValueError(f"frank_wolfe: f_and_grad returned a gradient of shape "
                             f"{grad.shape} for x of shape {start.shape}")
        param.grad = whylab.tensor(grad.copy())
        return float(value)

    result = FrankWolfeResult(start.copy(), [closure()], [], [], [],
                              [start.copy()] if keep_iterates else [])
    for _ in range(steps):
        optimizer.step(closure if step == "line_search" else None)
        state = optimizer.state[param]
        result.gaps.append(state["gap"])
        result.gammas.append(optimizer.gamma)
        result.vertices.append(state["vertex"])
        x = param.detach().numpy().copy()
        if keep_iterates:
            result.iterates.append(x)
        result.values.append(closure())
        if gap_tol is not None and state["gap"] <= gap_tol:
            break
    result.x = param.detach().numpy().copy()
    return result
