"""The frank-wolfe topic: every experiment's controls, its references, and its extremes."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from whylab.explorer.experiment import LineChart, ParamError
from whylab.topics.frank_wolfe import experiments as fw_topic
from whylab.topics.frank_wolfe import mechanics, refusals
from whylab.topics.frank_wolfe.reference import (
    Quadratic,
    project_l1_ball,
    project_simplex,
    simplex_kkt_optimum,
)

BY_NAME = {e.name: e for e in fw_topic.EXPERIMENTS}


def failed(result):
    return [(c.id, c.measured_in("en")) for c in result.checks if c.applicable and not c.passed]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_extreme_parameters_keep_every_applicable_check(name):
    exp = BY_NAME[name]
    for bound in ("minimum", "maximum"):
        raw = {p.name: getattr(p, bound) for p in exp.params
               if p.kind in ("int", "float") and not p.seed}
        if name == "feasibility":
            raw["constraint"] = "l1"
        if bound == "maximum":  # the largest runs are slow; the largest sizes matter here
            raw = {key: value for key, value in raw.items() if key not in ("steps", "max_steps")}
        result = exp.run(**exp.parse_params(raw))
        assert not failed(result), (bound, failed(result))


@pytest.mark.parametrize("constraint", fw_topic.SET_CHOICES)
def test_feasibility_holds_on_every_set(constraint):
    result = fw_topic.feasibility.run(**fw_topic.feasibility.parse_params(
        {"constraint": constraint, "n": 8, "steps": 60, "seed": 3}))
    assert result.passed, failed(result)


@pytest.mark.parametrize("variant", ["vanilla", "away", "pairwise"])
def test_simplex_path_figure_is_drawn_from_the_run(variant):
    result = fw_topic.simplex_path.run(variant=variant, step="line_search", steps=10)
    assert not failed(result)
    chart = result.figures[0]
    assert isinstance(chart, LineChart)
    triangle, iterates = chart.series[0], chart.series[1]
    assert len(triangle.x) == 4 and triangle.x[0] == triangle.x[-1]
    assert len(iterates.x) == 11
    applicable = result.check("steps-toward-vertex").applicable
    assert applicable == (variant == "vanilla")


def test_parameters_out_of_range_are_refused():
    with pytest.raises(ParamError, match="n: must be <= 200"):
        fw_topic.lower_bound.parse_params({"n": 201})
    with pytest.raises(ParamError, match="constraint: must be one of"):
        fw_topic.feasibility.parse_params({"constraint": "sphere"})
    with pytest.raises(ParamError, match="max_steps: must be >= 500"):
        fw_topic.variants.parse_params({"max_steps": 100})


def test_matrix_completion_says_when_too_few_entries_are_seen():
    result = fw_topic.matrix_completion.run(rows=8, rank=5, observed=0.2, steps=20, seed=0)
    check = result.check("heldout-beats-baseline")
    assert not check.applicable and check.when_applicable is not None


# ---------------------------------------------------------------- the references


@pytest.mark.parametrize("seed", range(4))
def test_kkt_optimum_matches_cvxpy(seed):
    problem = fw_topic.simplex_least_squares(15, seed)
    optimum = fw_topic.trusted_simplex_optimum(problem)
    assert optimum.verified
    x = cp.Variable(15)
    solved = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(problem.Q))
                                    + problem.c @ x + problem.const),
                        [x >= 0, cp.sum(x) == 1])
    solved.solve(solver=cp.CLARABEL)
    assert optimum.value == pytest.approx(solved.value, abs=1e-6 * (1 + abs(solved.value)))
    np.testing.assert_allclose(optimum.x, x.value, atol=1e-4)


def test_kkt_check_rejects_a_wrong_support():
    problem = fw_topic.simplex_least_squares(15, 0)
    optimum = fw_topic.trusted_simplex_optimum(problem)
    support = np.flatnonzero(optimum.x)
    wrong = simplex_kkt_optimum(problem, 1.0, support[1:])
    assert not wrong.verified


def test_exact_curvature_constant_bounds_sampled_curvature():
    """C_f is a supremum: every sampled (x, s, γ) stays below it, and vertex pairs reach it."""
    rng = np.random.default_rng(0)
    problem = fw_topic.simplex_least_squares(6, 1)
    exact = problem.simplex_curvature(1.0)
    sampled = 0.0
    for _ in range(2000):
        x, s = rng.dirichlet(np.ones(6) * 0.3), rng.dirichlet(np.ones(6) * 0.3)
        gamma = rng.uniform(0.01, 1.0)
        y = x + gamma * (s - x)
        bracket = problem.value(y) - problem.value(x) - problem.gradient(x) @ (y - x)
        sampled = max(sampled, 2 / gamma**2 * bracket)
    assert sampled <= exact * (1 + 1e-12)
    i, j = np.unravel_index(np.argmax(np.diag(problem.Q)[:, None] + np.diag(problem.Q)[None]
                                      - 2 * problem.Q), problem.Q.shape)
    d = np.eye(6)[i] - np.eye(6)[j]
    assert d @ problem.Q @ d == pytest.approx(exact)


@pytest.mark.parametrize("seed", range(5))
def test_projections_match_cvxpy(seed):
    rng = np.random.default_rng(seed)
    y = 2 * rng.standard_normal(9)
    for project, constraint in [(project_simplex, lambda v: [v >= 0, cp.sum(v) == 1.5]),
                                (lambda v: project_l1_ball(v, 1.5),
                                 lambda v: [cp.norm1(v) <= 1.5])]:
        v = cp.Variable(9)
        cp.Problem(cp.Minimize(cp.sum_squares(v - y)), constraint(v)).solve(solver=cp.CLARABEL)
        if project is project_simplex:
            np.testing.assert_allclose(project(y, 1.5), v.value, atol=1e-6)
        else:
            np.testing.assert_allclose(project(y), v.value, atol=1e-6)


def test_quadratic_least_squares_matches_its_definition():
    rng = np.random.default_rng(2)
    A, b, x = rng.standard_normal((5, 3)), rng.standard_normal(5), rng.standard_normal(3)
    problem = Quadratic.least_squares(A, b)
    assert problem.value(x) == pytest.approx(0.5 * np.sum((A @ x - b) ** 2))
    np.testing.assert_allclose(problem.gradient(x), A.T @ (A @ x - b))


# ---------------------------------------------------------------- the steps' mechanics


@pytest.mark.parametrize("n", [3, 7])
def test_fixed_point_starts_are_the_optima_cvxpy_finds(n):
    """The starts of optimum-fixed-point are the minimisers of ½‖x − y‖² over the simplex."""
    for _, y, support in mechanics._optima(n):
        x = cp.Variable(n)
        cp.Problem(cp.Minimize(cp.sum_squares(x - y)), [x >= 0, cp.sum(x) == 1]).solve(
            solver=cp.CLARABEL)
        expected = np.zeros(n)
        expected[list(support)] = 1.0 / len(support)
        np.testing.assert_allclose(x.value, expected, atol=1e-6)
        np.testing.assert_array_equal(project_simplex(y), expected)


def test_textbook_open_loop_leaves_the_edge_optimum():
    """The control's loop is what the check is up against: γ₀ = 1 jumps to a vertex."""
    _, y, _ = mechanics._optima(5)[0]
    problem = mechanics._distance_problem(y)
    iterates, gammas = mechanics._textbook_open_loop(problem, project_simplex(y), 2)
    assert gammas == [1.0, 2.0 / 3.0]
    assert problem.value(iterates[1]) > problem.value(iterates[0])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_variant_steps_hold_at_other_seeds(seed):
    result = mechanics.variant_steps.run(n=12, seed=seed)
    assert not failed(result)
    assert all(c.applicable for c in result.checks), [c.id for c in result.checks]


def test_refusals_hold_at_every_dimension():
    for n in (2, 5, 20):
        assert refusals.refusals.run(n=n).passed
