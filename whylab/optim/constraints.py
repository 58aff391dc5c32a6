"""Convex feasible sets for :class:`whylab.optim.FrankWolfe`, each known by its linear oracle.

Frank–Wolfe never projects. All it asks of a feasible set ``D`` is its *linear
minimisation oracle* (LMO): given a gradient ``g``, a point ``s`` of ``D`` minimising
``<g, s>``. For the sets here that point is a vertex (an extreme point) found in
closed form:

=================  ======================================  ==============================
set                points                                  LMO(g)
=================  ======================================  ==============================
``Simplex(r)``     x >= 0, sum(x) = r                      r * e_i, i = argmin g_i
``L1Ball(r)``      sum |x_i| <= r                          -r * sign(g_i) * e_i, i = argmax |g_i|
``L2Ball(r)``      ||x||_2 <= r                            -r * g / ||g||
``Box(l, u)``      l <= x <= u                             l_i where g_i > 0, else u_i
``NuclearBall(r)`` sum of singular values of X <= r        -r * u1 v1^T (top singular pair of G)
=================  ======================================  ==============================

Every set works on NumPy arrays of any shape (``NuclearBall`` on matrices) and offers
``lmo(grad)``, ``contains(x, tol)`` and ``diameter()`` (Euclidean, the ``diam`` in
Jaggi's bound C_f <= diam^2 * L). The three polytopes (:class:`Polytope`: simplex,
L1 ball, box) have finitely many vertices, so they can also write a point as a convex
combination of vertices (:meth:`Polytope.vertex_decomposition`); the away-step and
pairwise variants of Frank–Wolfe need that "active set".
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse.linalg import svds

DEFAULT_TOL = 1e-9


def _check_radius(owner: str, radius: float) -> float:
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"{owner}: radius must be a finite number > 0, got {radius!r}")
    return radius


class ConstraintSet:
    """A compact convex set, described by its linear minimisation oracle."""

    def lmo(self, grad) -> np.ndarray:
        """A point of the set minimising ``<grad, s>`` (a vertex), with ``grad``'s shape."""
        raise NotImplementedError(f"{type(self).__name__} does not implement lmo")

    def contains(self, x, tol: float = DEFAULT_TOL) -> bool:
        """Whether ``x`` lies in the set, allowing a violation of ``tol`` (rounding)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement contains")

    def violation(self, x) -> float:
        """How far ``x`` breaks the set's defining inequalities (0 inside)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement violation")

    def diameter(self) -> float:
        """The largest Euclidean (Frobenius) distance between two points of the set."""
        raise NotImplementedError(f"{type(self).__name__} does not implement diameter")

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ValueError when a parameter of this shape cannot live in the set."""


class _ViolationContains(ConstraintSet):
    """``contains`` as ``violation(x) <= tol``, shared by every set here."""

    def contains(self, x, tol: float = DEFAULT_TOL) -> bool:
        x = np.asarray(x, dtype=float)
        if not np.all(np.isfinite(x)):
            return False
        return self.violation(x) <= tol


class Polytope(_ViolationContains):
    """A set with finitely many vertices; any point is a convex combination of a few."""

    def vertex_decomposition(self, x) -> list[tuple[np.ndarray, float]]:
        """Vertices ``v_j`` and weights ``a_j >= 0`` summing to 1 with ``x = sum a_j v_j``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement vertex_decomposition")


class Simplex(Polytope):
    """The scaled probability simplex ``{x : x >= 0, sum(x) = radius}``.

    Its vertices are ``radius * e_i``; every iterate Frank–Wolfe builds from a vertex is
    a mixture of the vertices the oracle has returned, hence sparse.
    """

    def __init__(self, radius: float = 1.0) -> None:
        self.radius = _check_radius("Simplex", radius)

    def __repr__(self) -> str:
        return f"Simplex(radius={self.radius:g})"

    def lmo(self, grad) -> np.ndarray:
        grad = np.asarray(grad, dtype=float)
        vertex = np.zeros_like(grad)
        vertex.flat[int(np.argmin(grad))] = self.radius
        return vertex

    def violation(self, x) -> float:
        x = np.asarray(x, dtype=float)
        negative = float(max(0.0, -float(np.min(x, initial=0.0))))
        return max(negative, abs(float(np.sum(x)) - self.radius))

    def diameter(self) -> float:
        return self.radius * math.sqrt(2.0)

    def vertex_decomposition(self, x) -> list[tuple[np.ndarray, float]]:
        x = np.asarray(x, dtype=float)
        pieces = []
        for index in np.flatnonzero(x):
            vertex = np.zeros_like(x)
            vertex.flat[index] = self.radius
            pieces.append((vertex, float(x.flat[index]) / self.radius))
        return pieces


class L1Ball(Polytope):
    """The l1 ball ``{x : sum |x_i| <= radius}``; vertices ``±radius * e_i``."""

    def __init__(self, radius: float) -> None:
        self.radius = _check_radius("L1Ball", radius)

    def __repr__(self) -> str:
        return f"L1Ball(radius={self.radius:g})"

    def lmo(self, grad) -> np.ndarray:
        grad = np.asarray(grad, dtype=float)
        index = int(np.argmax(np.abs(grad)))
        vertex = np.zeros_like(grad)
        # grad_i == 0 (the whole gradient is zero): any vertex minimises; take +radius.
        vertex.flat[index] = -self.radius if grad.flat[index] > 0 else self.radius
        return vertex

    def violation(self, x) -> float:
        return max(0.0, float(np.sum(np.abs(np.asarray(x, dtype=float)))) - self.radius)

    def diameter(self) -> float:
        return 2.0 * self.radius

    def vertex_decomposition(self, x) -> list[tuple[np.ndarray, float]]:
        x = np.asarray(x, dtype=float)
        pieces = []
        for index in np.flatnonzero(x):
            vertex = np.zeros_like(x)
            vertex.flat[index] = self.radius * np.sign(x.flat[index])
            pieces.append((vertex, abs(float(x.flat[index])) / self.radius))
        slack = 1.0 - sum(weight for _, weight in pieces)
        if slack > 0:
            # An interior point: the missing weight sits half on +r*e_0, half on -r*e_0,
            # whose mean is the origin, so x is unchanged.
            for sign in (1.0, -1.0):
                vertex = np.zeros_like(x)
                vertex.flat[0] = sign * self.radius
                pieces.append((vertex, slack / 2))
        return pieces


class L2Ball(_ViolationContains):
    """The Euclidean ball ``{x : ||x||_2 <= radius}``: every boundary point is extreme."""

    def __init__(self, radius: float) -> None:
        self.radius = _check_radius("L2Ball", radius)

    def __repr__(self) -> str:
        return f"L2Ball(radius={self.radius:g})"

    def lmo(self, grad) -> np.ndarray:
        grad = np.asarray(grad, dtype=float)
        norm = float(np.linalg.norm(grad))
        if norm == 0.0:
            return np.zeros_like(grad)  # every point minimises <0, s>; the centre is one
        return -self.radius * grad / norm

    def violation(self, x) -> float:
        return max(0.0, float(np.linalg.norm(np.asarray(x, dtype=float))) - self.radius)

    def diameter(self) -> float:
        return 2.0 * self.radius


class Box(Polytope):
    """The box ``{x : lower <= x <= upper}`` (bounds are scalars or arrays of x's shape).

    Its 2^n vertices are the corners; a point inside is a mixture of n + 1 of them
    (the corners met walking from ``lower`` to ``upper`` one coordinate at a time, in
    the order of how far along each coordinate the point is).
    """

    def __init__(self, lower, upper) -> None:
        lower = np.asarray(lower, dtype=float)
        upper = np.asarray(upper, dtype=float)
        if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
            raise ValueError("Box: lower and upper must be finite (Frank–Wolfe needs a "
                             "bounded set)")
        try:
            lower, upper = np.broadcast_arrays(lower, upper)
        except ValueError:
            raise ValueError(f"Box: lower {lower.shape} and upper {upper.shape} do not "
                             "broadcast") from None
        if np.any(lower > upper):
            index = np.unravel_index(int(np.argmax(lower > upper)), lower.shape)
            where = "[" + ", ".join(str(int(i)) for i in index) + "]"
            raise ValueError(f"Box: lower must be <= upper, but lower{where} = "
                             f"{lower[index]:g} > upper{where} = {upper[index]:g}")
        self.lower, self.upper = lower.copy(), upper.copy()

    def __repr__(self) -> str:
        if self.lower.ndim == 0:
            return f"Box(lower={float(self.lower):g}, upper={float(self.upper):g})"
        return f"Box(lower=<{self.lower.shape}>, upper=<{self.upper.shape}>)"

    def check_shape(self, shape: tuple[int, ...]) -> None:
        if self.lower.ndim and self.lower.shape != tuple(shape):
            raise ValueError(f"Box: bounds of shape {self.lower.shape} do not match a "
                             f"parameter of shape {tuple(shape)}")

    def _bounds(self, shape) -> tuple[np.ndarray, np.ndarray]:
        return np.broadcast_to(self.lower, shape), np.broadcast_to(self.upper, shape)

    def lmo(self, grad) -> np.ndarray:
        grad = np.asarray(grad, dtype=float)
        lower, upper = self._bounds(grad.shape)
        return np.where(grad > 0, lower, upper).astype(float)

    def violation(self, x) -> float:
        x = np.asarray(x, dtype=float)
        lower, upper = self._bounds(x.shape)
        below = np.max(lower - x, initial=0.0)
        above = np.max(x - upper, initial=0.0)
        return float(max(below, above, 0.0))

    def diameter(self) -> float:
        return float(np.linalg.norm(self.upper - self.lower))

    def vertex_decomposition(self, x) -> list[tuple[np.ndarray, float]]:
        x = np.asarray(x, dtype=float)
        lower, upper = self._bounds(x.shape)
        width = upper - lower
        fraction = np.divide(x - lower, width, out=np.zeros_like(x), where=width > 0)
        fraction = np.clip(fraction, 0.0, 1.0).ravel()
        order = np.argsort(-fraction, kind="stable")  # coordinates furthest along first
        corner = lower.astype(float).ravel().copy()
        upper_flat = upper.ravel()
        pieces = []
        previous = 1.0
        for index in order:
            weight = previous - fraction[index]
            if weight > 0:
                pieces.append((corner.reshape(x.shape).copy(), float(weight)))
            corner[index] = upper_flat[index]
            previous = fraction[index]
        if previous > 0:
            pieces.append((corner.reshape(x.shape).copy(), float(previous)))
        return pieces


class NuclearBall(_ViolationContains):
    """The nuclear-norm ball ``{X : sum of singular values of X <= radius}`` of matrices.

    Its extreme points are the rank-one matrices ``radius * u v^T`` with unit u, v, so
    each Frank–Wolfe step raises the rank of the iterate by at most one. The LMO needs
    only the top singular pair of the gradient: ``scipy.sparse.linalg.svds(k=1)``,
    started from a fixed vector so that runs repeat exactly.
    """

    def __init__(self, radius: float) -> None:
        self.radius = _check_radius("NuclearBall", radius)

    def __repr__(self) -> str:
        return f"NuclearBall(radius={self.radius:g})"

    def check_shape(self, shape: tuple[int, ...]) -> None:
        if len(shape) != 2:
            raise ValueError(f"NuclearBall: parameters must be matrices (2-D), got shape "
                             f"{tuple(shape)}")

    def lmo(self, grad) -> np.ndarray:
        grad = np.asarray(grad, dtype=float)
        self.check_shape(grad.shape)
        if not np.any(grad):
            return np.zeros_like(grad)  # every point minimises <0, S>; the origin is one
        u, v = top_singular_pair(grad)
        return -self.radius * np.outer(u, v)

    def violation(self, x) -> float:
        x = np.asarray(x, dtype=float)
        self.check_shape(x.shape)
        return max(0.0, nuclear_norm(x) - self.radius)

    def diameter(self) -> float:
        return 2.0 * self.radius


def top_singular_pair(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors u, v with ``u^T M v`` the largest singular value of ``M``.

    ARPACK (behind ``svds``) needs k < min(M.shape); a matrix with one row or column
    has its only singular pair in closed form.
    """
    rows, cols = matrix.shape
    if min(rows, cols) == 1:
        vector = matrix.ravel() / np.linalg.norm(matrix)
        return (vector, np.ones(1)) if cols == 1 else (np.ones(1), vector)
    start = np.ones(min(rows, cols)) / math.sqrt(min(rows, cols))
    u, _, vt = svds(matrix, k=1, v0=start)
    return u[:, 0], vt[0]


def nuclear_norm(matrix: np.ndarray) -> float:
    """The sum of the singular values (the trace norm)."""
    return float(np.sum(np.linalg.svd(np.asarray(matrix, dtype=float), compute_uv=False)))
