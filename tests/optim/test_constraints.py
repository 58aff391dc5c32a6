"""Constraint sets of Frank–Wolfe: oracles against LP solvers and brute force, membership,
vertex decompositions, diameters and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from whylab.optim import constraints as C


def random_gradient(rng, n):
    return rng.standard_normal(n)


def linprog_minimum(grad, constraint) -> float:
    """min <grad, s> over the set by scipy's LP solver (HiGHS), an independent reference."""
    n = grad.shape[0]
    if isinstance(constraint, C.Simplex):
        found = linprog(grad, A_eq=np.ones((1, n)), b_eq=[constraint.radius],
                        bounds=[(0, None)] * n, method="highs")
    elif isinstance(constraint, C.Box):
        found = linprog(grad, bounds=list(zip(constraint.lower, constraint.upper, strict=True)),
                        method="highs")
    else:  # L1 ball as x = p - q, p, q >= 0, sum(p + q) <= r
        found = linprog(np.concatenate([grad, -grad]), A_ub=np.ones((1, 2 * n)),
                        b_ub=[constraint.radius], bounds=[(0, None)] * (2 * n), method="highs")
    assert found.status == 0
    return float(found.fun)


def polytopes(rng, n):
    lower = rng.uniform(-2, 0, n)
    return [C.Simplex(rng.uniform(0.5, 3)), C.L1Ball(rng.uniform(0.5, 3)),
            C.Box(lower, lower + rng.uniform(0.1, 2, n))]


@pytest.mark.parametrize("seed", range(6))
def test_polytope_oracles_match_linear_programming(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    for constraint in polytopes(rng, n):
        grad = random_gradient(rng, n)
        vertex = constraint.lmo(grad)
        assert constraint.contains(vertex)
        assert np.dot(grad, vertex) == pytest.approx(linprog_minimum(grad, constraint), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_ball_oracles_match_their_closed_forms(seed):
    rng = np.random.default_rng(seed)
    radius = rng.uniform(0.5, 3)
    grad = rng.standard_normal(7)
    # Cauchy–Schwarz: min over ||s|| <= r of <g, s> is -r ||g||.
    s = C.L2Ball(radius).lmo(grad)
    assert np.dot(grad, s) == pytest.approx(-radius * np.linalg.norm(grad), rel=1e-12)
    # Duality of the nuclear and spectral norms: min <G, S> is -r * sigma_max(G).
    for shape in [(5, 4), (1, 6), (6, 1), (3, 3)]:
        matrix = rng.standard_normal(shape)
        vertex = C.NuclearBall(radius).lmo(matrix)
        sigma_max = np.linalg.svd(matrix, compute_uv=False)[0]
        assert np.sum(matrix * vertex) == pytest.approx(-radius * sigma_max, rel=1e-9)
        assert np.linalg.matrix_rank(vertex) == 1
        assert C.nuclear_norm(vertex) == pytest.approx(radius, rel=1e-9)


def test_oracles_keep_the_gradient_shape_and_handle_a_zero_gradient():
    grad = np.zeros((2, 3))
    for constraint in [C.Simplex(), C.L1Ball(1), C.L2Ball(1), C.Box(-1, 1), C.NuclearBall(1)]:
        vertex = constraint.lmo(grad)
        assert vertex.shape == (2, 3) and constraint.contains(vertex)


def test_contains_accepts_the_set_and_rejects_points_outside():
    assert C.Simplex(2).contains([0.5, 1.5]) and not C.Simplex(2).contains([0.5, 1.4])
    assert not C.Simplex(1).contains([1.2, -0.2])
    assert C.L1Ball(1).contains([0.5, -0.5]) and not C.L1Ball(1).contains([0.5, -0.6])
    assert C.L2Ball(1).contains([0.6, 0.8]) and not C.L2Ball(1).contains([0.6, 0.81])
    assert C.Box(0, [1, 2]).contains([1, 2]) and not C.Box(0, [1, 2]).contains([1.01, 0])
    assert C.NuclearBall(2).contains(np.eye(2)) and not C.NuclearBall(1.9).contains(np.eye(2))
    assert not C.L2Ball(1).contains([np.nan, 0])
    # tol is the violation allowed
    assert C.L2Ball(1).contains([1 + 1e-10, 0]) and not C.L2Ball(1).contains([1 + 1e-6, 0])
    assert C.L2Ball(1).contains([1 + 1e-6, 0], tol=1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_vertex_decompositions_rebuild_the_point(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    for constraint in polytopes(rng, n):
        # a random point of the set: a random mixture of oracle vertices
        vertices = [constraint.lmo(rng.standard_normal(n)) for _ in range(4)]
        weights = rng.dirichlet(np.ones(4))
        x = sum(w * v for w, v in zip(weights, vertices, strict=True))
        pieces = constraint.vertex_decomposition(x)
        rebuilt = sum(weight * vertex for vertex, weight in pieces)
        np.testing.assert_allclose(rebuilt, x, atol=1e-12)
        assert all(weight > 0 for _, weight in pieces)
        assert sum(weight for _, weight in pieces) == pytest.approx(1.0, abs=1e-12)
        assert all(is_vertex(constraint, vertex) for vertex, _ in pieces)


def is_vertex(constraint, point) -> bool:
    """Extreme points: r*e_i (simplex), ±r*e_i (L1 ball), every coordinate at a bound (box)."""
    if isinstance(constraint, C.Box):
        return bool(np.all((point == constraint.lower) | (point == constraint.upper)))
    nonzero = np.flatnonzero(point)
    if len(nonzero) != 1:
        return False
    value = point[nonzero[0]]
    return value == constraint.radius or (isinstance(constraint, C.L1Ball)
                                          and value == -constraint.radius)


def test_box_decomposition_uses_at_most_n_plus_one_corners():
    box = C.Box(np.zeros(5), np.ones(5))
    pieces = box.vertex_decomposition(np.array([0.1, 0.9, 0.5, 0.3, 0.7]))
    assert len(pieces) <= 6


def test_diameters_equal_the_farthest_pair_of_vertices():
    rng = np.random.default_rng(3)
    n = 4
    for constraint in polytopes(rng, n):
        if isinstance(constraint, C.Box):
            vertices = [np.where(bits, constraint.upper, constraint.lower)
                        for bits in itertools.product([False, True], repeat=n)]
        else:
            vertices = [constraint.lmo(g) for g in np.vstack([np.eye(n), -np.eye(n)])]
        farthest = max(np.linalg.norm(a - b) for a in vertices for b in vertices)
        assert constraint.diameter() == pytest.approx(farthest)
    assert C.L2Ball(1.5).diameter() == 3.0
    assert C.NuclearBall(1.5).diameter() == pytest.approx(
        np.linalg.norm(np.diag([1.5, 0]) - np.diag([-1.5, 0])))


@pytest.mark.parametrize("make", [C.Simplex, C.L1Ball, C.L2Ball, C.NuclearBall])
@pytest.mark.parametrize("radius", [0, -1, float("nan"), float("inf")])
def test_bad_radius_is_named(make, radius):
    with pytest.raises(ValueError, match=rf"{make.__name__}: radius must be a finite number > 0"):
        make(radius)


def test_bad_box_bounds_are_named():
    with pytest.raises(ValueError, match=r"lower must be <= upper, but lower\[1\] = 3 > "
                                         r"upper\[1\] = 2"):
        C.Box([0, 3], [1, 2])
    with pytest.raises(ValueError, match="lower and upper must be finite"):
        C.Box(0, np.inf)
    with pytest.raises(ValueError, match="do not broadcast"):
        C.Box(np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match=r"bounds of shape \(2,\) do not match"):
        C.Box(np.zeros(2), np.ones(2)).check_shape((3,))


def test_nuclear_ball_needs_matrices():
    with pytest.raises(ValueError, match=r"NuclearBall: parameters must be matrices \(2-D\)"):
        C.NuclearBall(1).lmo(np.ones(3))
