"""FrankWolfe against cvxpy, with whylab's autograd gradients, Jaggi's rate and lower
bound, the variants' linear convergence, sparsity, and bad input."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

import whylab
from whylab.optim import FrankWolfe, frank_wolfe
from whylab.optim import constraints as C

CVXPY_TOL = 1e-6  # |f_cvxpy - f*| allowed, relative to 1 + |f*| (Clarabel's defaults reach ~1e-8)
SETS = ["simplex", "l1", "l2", "box", "nuclear"]
POLYTOPES = ["simplex", "l1", "box"]


class Problem:
    """f(x) = 0.5 ||A x - b||^2 + 0.5 mu ||x||^2 over one of the sets, with its cvxpy twin."""

    def __init__(self, kind: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.kind = kind
        self.shape = (4, 3) if kind == "nuclear" else (6,)
        size = int(np.prod(self.shape))
        self.A = rng.standard_normal((size + 2, size))
        self.b = 3.0 * rng.standard_normal(size + 2)  # far outside the set: the bound is active
        self.mu = 0.1
        self.L = float(np.linalg.eigvalsh(self.A.T @ self.A)[-1]) + self.mu
        radius = float(rng.uniform(0.5, 2.0))
        self.constraint = {
            "simplex": lambda: C.Simplex(radius),
            "l1": lambda: C.L1Ball(radius),
            "l2": lambda: C.L2Ball(radius),
            "box": lambda: C.Box(-radius / 2, radius),
            "nuclear": lambda: C.NuclearBall(radius),
        }[kind]()
        self.start = self.constraint.lmo(rng.standard_normal(self.shape))

    def f_and_grad(self, x):
        flat = x.ravel()
        residual = self.A @ flat - self.b
        value = 0.5 * residual @ residual + 0.5 * self.mu * flat @ flat
        return float(value), (self.A.T @ residual + self.mu * flat).reshape(self.shape)

    def cvxpy_minimum(self) -> float:
        x = cp.Variable(self.shape)
        flat = cp.vec(x, order="C") if self.kind == "nuclear" else x
        objective = 0.5 * cp.sum_squares(self.A @ flat - self.b) + 0.5 * self.mu * cp.sum_squares(
            flat)
        r = getattr(self.constraint, "radius", None)
        constraints = {
            "simplex": lambda: [x >= 0, cp.sum(x) == r],
            "l1": lambda: [cp.norm1(x) <= r],
            "l2": lambda: [cp.norm2(x) <= r],
            "box": lambda: [x >= self.constraint.lower, x <= self.constraint.upper],
            "nuclear": lambda: [cp.normNuc(x) <= r],
        }[self.kind]()
        problem = cp.Problem(cp.Minimize(objective), constraints)
        problem.solve(solver=cp.CLARABEL if self.kind != "nuclear" else cp.SCS,
                      **({} if self.kind != "nuclear" else {"eps": 1e-10, "max_iters": 100000}))
        assert problem.status == "optimal", problem.status
        return float(problem.value)


def variants_for(kind):
    return ["vanilla", "away", "pairwise"] if kind in POLYTOPES else ["vanilla"]


CASES = [(kind, variant, seed) for kind in SETS for variant in variants_for(kind)
         for seed in (0, 1)]


@pytest.mark.parametrize(("kind", "variant", "seed"), CASES)
def test_frank_wolfe_reaches_the_cvxpy_minimum_and_its_gap_certifies(kind, variant, seed):
    problem = Problem(kind, seed)
    f_star = problem.cvxpy_minimum()
    steps = 3000 if variant == "vanilla" else 600
    run = frank_wolfe(problem.f_and_grad, problem.start, problem.constraint, steps,
                      step="line_search", variant=variant, quadratic=True, keep_iterates=True)
    slack = CVXPY_TOL * (1 + abs(f_star))
    errors = np.array(run.values[:-1]) - f_star
    assert np.all(errors >= -slack), "an iterate beat the optimum: f* or f is wrong"
    assert np.all(np.array(run.gaps) >= errors - slack), "the gap failed to bound f(x_t) - f*"
    assert all(problem.constraint.contains(x, 1e-9) for x in run.iterates)
    final_error = run.values[-1] - f_star
    # away/pairwise converge linearly here; vanilla only as O(1/t) on polytope faces
    target = 1e-3 if variant == "vanilla" and kind in POLYTOPES else 1e-5
    assert final_error <= target * (1 + abs(f_star))


@pytest.mark.parametrize("kind", SETS)
def test_open_loop_obeys_jaggis_bound(kind):
    """Jaggi (ICML 2013) Thm 1: f(x_t) - f* <= 2 C_f / (t + 2), and C_f <= L diam^2."""
    problem = Problem(kind, 3)
    f_star = problem.cvxpy_minimum()
    run = frank_wolfe(problem.f_and_grad, problem.start, problem.constraint, 300)
    bound_constant = 2 * problem.L * problem.constraint.diameter() ** 2
    for t in range(1, len(run.values)):
        assert run.values[t] - f_star <= bound_constant / (t + 2) + 1e-7


@pytest.mark.parametrize("kind", SETS)
def test_short_step_never_increases_f(kind):
    """The short step minimises the L-smooth upper bound, so f cannot go up."""
    problem = Problem(kind, 4)
    for variant in variants_for(kind):
        run = frank_wolfe(problem.f_and_grad, problem.start, problem.constraint, 200,
                          step="short_step", variant=variant, smoothness=problem.L)
        assert np.all(np.diff(run.values) <= 1e-12), variant


def test_general_line_search_matches_the_exact_quadratic_one():
    problem = Problem("simplex", 5)
    exact = frank_wolfe(problem.f_and_grad, problem.start, problem.constraint, 30,
                        step="line_search", quadratic=True)
    brent = frank_wolfe(problem.f_and_grad, problem.start, problem.constraint, 30,
                        step="line_search")
    # scipy's bounded Brent stops within sqrt(machine eps) * gamma of the minimiser
    np.testing.assert_allclose(brent.gammas, exact.gammas, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- whylab autograd


def test_autograd_gradient_equals_the_hand_written_one_and_drives_the_same_run():
    problem = Problem("l1", 6)
    A, b = whylab.tensor(problem.A), whylab.tensor(problem.b)
    x = whylab.tensor(problem.start.copy(), requires_grad=True)

    def loss_of(param):
        residual = A @ param - b
        return 0.5 * (residual * residual).sum() + 0.5 * problem.mu * (param * param).sum()

    loss = loss_of(x)
    loss.backward()
    value, hand_grad = problem.f_and_grad(problem.start)
    assert loss.item() == pytest.approx(value, rel=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), hand_grad, rtol=1e-13, atol=1e-13)

    optimizer = FrankWolfe([x], problem.constraint, step="line_search", variant="pairwise",
                           quadratic=True)

    def closure():
        optimizer.zero_grad()
        loss = loss_of(x)
        loss.backward()
        return loss

    gaps = []
    for _ in range(40):
        optimizer.step(closure)
        gaps.append(optimizer.gap)
    reference = frank_wolfe(problem.f_and_grad, problem.start, problem.constraint, 40,
                            step="line_search", variant="pairwise", quadratic=True)
    np.testing.assert_allclose(x.detach().numpy(), reference.x, atol=1e-12)
    np.testing.assert_allclose(gaps, reference.gaps, atol=1e-12)


def test_several_parameters_are_one_product_set():
    """Two parameters in two groups move with one gamma; the gap is the sum of theirs."""
    p = whylab.tensor(np.array([1.0, 0.0, 0.0]), requires_grad=True)
    q = whylab.tensor(np.zeros(2), requires_grad=True)
    target_p, target_q = np.array([0.2, 0.5, 0.3]), np.array([3.0, -1.0])
    optimizer = FrankWolfe([{"params": [p], "constraint": C.Simplex()},
                            {"params": [q], "constraint": C.L2Ball(1.0)}],
                           constraint=C.Simplex(), step="open_loop")
    for _ in range(200):
        optimizer.zero_grad()
        loss = ((p - whylab.tensor(target_p)) ** 2).sum() + ((q - whylab.tensor(target_q)) ** 2
                                                            ).sum()
        loss.backward()
        optimizer.step()
        gaps = optimizer.state[p]["gap"] + optimizer.state[q]["gap"]
        assert optimizer.gap == pytest.approx(gaps)
    np.testing.assert_allclose(p.detach().numpy(), target_p, atol=0.02)
    np.testing.assert_allclose(q.detach().numpy(), target_q / np.linalg.norm(target_q), atol=0.02)


# ---------------------------------------------------------------- Jaggi's Lemma 3 instance


@pytest.mark.parametrize("n", [2, 5, 40])
@pytest.mark.parametrize("rule", ["line_search", "short_step"])
def test_lower_bound_instance_is_exact(n, rule):
    """f = ||x||^2 on the unit simplex from a vertex: h_t = 1/(t+1) - 1/n for t < n.

    With L = 2 the short step is the exact line search (f is exactly quadratic).
    """
    run = frank_wolfe(lambda x: (float(x @ x), 2 * x), np.eye(n)[0], C.Simplex(), n - 1,
                      step=rule, quadratic=True, smoothness=2.0)
    h = np.array(run.values) - 1.0 / n
    expected = 1.0 / (np.arange(n) + 1) - 1.0 / n
    np.testing.assert_allclose(h, expected, rtol=0, atol=4e-16)
    assert np.count_nonzero(run.x) == n


# ---------------------------------------------------------------- variants and sparsity


def iterations_to_gap(run, target):
    return next((t for t, gap in enumerate(run.gaps) if gap <= target), math.inf)


def test_away_and_pairwise_converge_linearly_where_vanilla_zig_zags():
    """Optimum on a face of the simplex (Lacoste-Julien & Jaggi 2015): vanilla stalls."""
    rng = np.random.default_rng(7)
    n = 12
    M = rng.standard_normal((n, n))
    Q = M @ M.T / n + np.eye(n)
    target = rng.dirichlet(np.ones(4))
    centre = np.concatenate([target, np.zeros(n - 4)]) - 0.3 * np.concatenate(
        [np.zeros(4), np.ones(n - 4)])

    def f_and_grad(x):
        d = x - centre
        return float(0.5 * d @ Q @ d), Q @ d

    needed = {}
    for variant in ["vanilla", "away", "pairwise"]:
        run = frank_wolfe(f_and_grad, np.eye(n)[0], C.Simplex(), 3000, step="line_search",
                          variant=variant, quadratic=True, gap_tol=1e-8)
        needed[variant] = iterations_to_gap(run, 1e-8)
    assert needed["away"] < 500 and needed["pairwise"] < 500, needed
    assert needed["vanilla"] > 5 * max(needed["away"], needed["pairwise"]), needed


def test_simplex_and_l1_iterates_stay_sparse_and_nuclear_ranks_grow_by_one():
    rng = np.random.default_rng(8)
    n = 30
    target = rng.standard_normal(n)
    for constraint in [C.Simplex(), C.L1Ball(2.0)]:
        run = frank_wolfe(lambda x: (float(0.5 * (x - target) @ (x - target)), x - target),
                          constraint.lmo(rng.standard_normal(n)), constraint, 25,
                          keep_iterates=True)
        for t, x in enumerate(run.iterates):
            assert np.count_nonzero(x) <= t + 1
    M = rng.standard_normal((8, 6))
    run = frank_wolfe(lambda X: (float(0.5 * np.sum((X - M) ** 2)), X - M), np.zeros((8, 6)),
                      C.NuclearBall(3.0), 5, keep_iterates=True)
    ranks = [int(np.linalg.matrix_rank(X, tol=1e-10)) for X in run.iterates]
    # from 0, each step mixes in one rank-one atom (an atom met again adds no rank)
    assert ranks[:2] == [0, 1]
    assert all(b - a <= 1 for a, b in zip(ranks, ranks[1:], strict=False))


# ---------------------------------------------------------------- bad input


def test_bad_input_gets_clear_errors():
    x = whylab.tensor(np.array([0.7, 0.7]), requires_grad=True)
    with pytest.raises(ValueError, match=r"parameter 0 \(shape \(2,\)\) is not in "
                                         r"Simplex\(radius=1\).*must start feasible"):
        FrankWolfe([x], C.Simplex())
    for bad in (np.nan, np.inf):
        start = whylab.tensor(np.array([bad, 0.0]), requires_grad=True)
        with pytest.raises(ValueError, match=r"parameter 0 \(shape \(2,\)\) holds NaN or "
                                             r"infinity, so it lies in no set"):
            FrankWolfe([start], C.Simplex())
    inside = whylab.tensor(np.array([0.5, 0.5]), requires_grad=True)
    with pytest.raises(ValueError, match="step must be one of open_loop, line_search, short_step"):
        FrankWolfe([inside], C.Simplex(), step="armijo")
    with pytest.raises(ValueError, match="variant must be one of vanilla, away, pairwise"):
        FrankWolfe([inside], C.Simplex(), variant="fully_corrective")
    with pytest.raises(ValueError, match="step='short_step' needs smoothness=L"):
        FrankWolfe([inside], C.Simplex(), step="short_step")
    with pytest.raises(ValueError, match="smoothness must be a finite number > 0"):
        FrankWolfe([inside], C.Simplex(), step="short_step", smoothness=-1.0)
    for ball in [C.L2Ball(1.0), C.NuclearBall(1.0)]:
        param = whylab.tensor(np.zeros((2, 2)), requires_grad=True)
        with pytest.raises(ValueError, match="variant='away' keeps an active set.*needs a "
                                             "polytope"):
            FrankWolfe([param], ball, variant="away")
    with pytest.raises(TypeError, match="constraint must be a ConstraintSet"):
        FrankWolfe([inside], "simplex")
    with pytest.raises(ValueError, match=r"NuclearBall: parameters must be matrices"):
        FrankWolfe([inside], C.NuclearBall(1.0))

    optimizer = FrankWolfe([inside], C.Simplex(), step="line_search")
    inside.grad = whylab.tensor(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"step='line_search' needs the objective.*closure"):
        optimizer.step()
    optimizer = FrankWolfe([inside], C.Simplex())
    inside.grad = whylab.tensor(np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"gradient of parameter 0 has NaN or infinite entries"):
        optimizer.step()

    def quadratic(v):
        return float(v @ v), 2 * v

    with pytest.raises(ValueError, match="frank_wolfe: steps must be an int >= 0"):
        frank_wolfe(quadratic, [1.0, 0.0], C.Simplex(), -1)
    with pytest.raises(ValueError, match="frank_wolfe: x0 has NaN"):
        frank_wolfe(quadratic, [np.nan, 0.0], C.Simplex(), 3)
    with pytest.raises(ValueError, match=r"gradient of shape \(3,\) for x of shape \(2,\)"):
        frank_wolfe(lambda v: (0.0, np.zeros(3)), [1.0, 0.0], C.Simplex(), 3)


def test_parameters_without_gradients_are_left_alone():
    x = whylab.tensor(np.array([0.5, 0.5]), requires_grad=True)
    optimizer = FrankWolfe([x], C.Simplex())
    assert optimizer.step() is None
    np.testing.assert_array_equal(x.detach().numpy(), [0.5, 0.5])
    assert math.isnan(optimizer.gap)


def test_autograd_drives_matrix_completion_on_the_nuclear_ball():
    """A masked matrix loss through whylab autograd: same gradient, same run as by hand."""
    rng = np.random.default_rng(9)
    M = rng.standard_normal((6, 5))
    mask = (rng.random((6, 5)) < 0.6).astype(float)
    X = whylab.tensor(np.zeros((6, 5)), requires_grad=True)
    target, weights = whylab.tensor(M), whylab.tensor(mask)
    optimizer = FrankWolfe([X], C.NuclearBall(2.0), step="line_search", quadratic=True)

    def closure():
        optimizer.zero_grad()
        loss = 0.5 * (((X - target) ** 2) * weights).sum()
        loss.backward()
        return loss

    def by_hand(Y):
        residual = mask * (Y - M)
        return 0.5 * float(np.sum(residual * (Y - M))), residual

    closure()
    np.testing.assert_allclose(X.grad.numpy(), by_hand(np.zeros((6, 5)))[1], atol=1e-15)
    for _ in range(15):
        optimizer.step(closure)
    reference = frank_wolfe(by_hand, np.zeros((6, 5)), C.NuclearBall(2.0), 15,
                            step="line_search", quadratic=True)
    np.testing.assert_allclose(X.detach().numpy(), reference.x, atol=1e-10)
    assert C.NuclearBall(2.0).contains(X.detach().numpy())


def test_state_dict_carries_the_active_set_and_step_count_into_a_fresh_optimizer():
    problem = Problem("box", 10)

    def make(values):
        param = whylab.tensor(values.copy(), requires_grad=True)
        return param, FrankWolfe([param], problem.constraint, step="open_loop",
                                 variant="away")

    def advance(param, optimizer, steps):
        for _ in range(steps):
            param.grad = whylab.tensor(problem.f_and_grad(param.detach().numpy())[1])
            optimizer.step()

    first, first_optimizer = make(problem.start)
    advance(first, first_optimizer, 5)
    second, second_optimizer = make(first.detach().numpy())
    second_optimizer.load_state_dict(first_optimizer.state_dict())
    advance(first, first_optimizer, 5)
    advance(second, second_optimizer, 5)
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
