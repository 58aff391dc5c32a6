"""Independent references for the Frank–Wolfe topic: exact optima and projections.

Nothing here calls the Frank–Wolfe code. The optimum of a quadratic over the simplex
comes from the KKT conditions solved exactly on a support (one dense linear solve)
and then *verified*: the KKT conditions are sufficient for a convex problem, so a
support that passes is the true one whoever guessed it. The projections onto the
simplex and the L1 ball (sort-based, as in Duchi et al., ICML 2008) serve the
projected-gradient method that a negative control runs in place of Frank–Wolfe.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KKT_TOL = 1e-10  # largest KKT violation accepted, relative to the gradient's scale


@dataclass(frozen=True)
class Quadratic:
    """f(x) = 0.5 x^T Q x + c^T x + const, with Q symmetric positive semi-definite."""

    Q: np.ndarray
    c: np.ndarray
    const: float = 0.0

    @classmethod
    def least_squares(cls, A: np.ndarray, b: np.ndarray) -> Quadratic:
        """0.5 ||A x - b||^2 written out."""
        return cls(A.T @ A, -(A.T @ b), 0.5 * float(b @ b))

    def value(self, x: np.ndarray) -> float:
        return float(0.5 * x @ self.Q @ x + self.c @ x + self.const)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self.Q @ x + self.c

    def f_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        return self.value(x), self.gradient(x)

    @property
    def smoothness(self) -> float:
        """L, the largest eigenvalue of Q: the gradient is L-Lipschitz."""
        return float(np.linalg.eigvalsh(self.Q)[-1])

    def simplex_curvature(self, radius: float) -> float:
        """Jaggi's C_f over the simplex, exactly: max over vertex pairs of (s-x)^T Q (s-x).

        For a quadratic, (2/g^2)(f(y) - f(x) - <y - x, grad f(x)>) = (s-x)^T Q (s-x), a
        convex function of (x, s), so its maximum over the simplex sits at vertices.
        """
        diagonal = np.diag(self.Q)
        pairs = diagonal[:, None] + diagonal[None, :] - 2 * self.Q
        return float(radius**2 * np.max(pairs))


@dataclass(frozen=True)
class SimplexOptimum:
    """The KKT point on a given support and how well it satisfies the KKT conditions."""

    x: np.ndarray
    value: float
    violation: float  # largest breach of primal or dual feasibility, scaled

    @property
    def verified(self) -> bool:
        return self.violation <= KKT_TOL


def simplex_kkt_optimum(problem: Quadratic, radius: float, support) -> SimplexOptimum:
    """Solve min f over {x >= 0, sum x = radius} exactly, given the optimum's support S.

    On S the gradient equals a multiplier lam: [Q_SS  -1; 1^T 0] [x_S; lam] = [-c_S; r].
    Off S, x = 0 and dual feasibility needs grad_i - lam >= 0; on S, x_S >= 0.
    """
    support = np.asarray(sorted(int(i) for i in support))
    n = problem.c.shape[0]
    k = support.shape[0]
    system = np.zeros((k + 1, k + 1))
    system[:k, :k] = problem.Q[np.ix_(support, support)]
    system[:k, k] = -1.0
    system[k, :k] = 1.0
    right = np.concatenate([-problem.c[support], [radius]])
    solution = np.linalg.solve(system, right)
    x = np.zeros(n)
    x[support] = solution[:k]
    multiplier = solution[k]
    reduced = problem.gradient(x) - multiplier  # >= 0 off the support, 0 on it
    off = np.setdiff1d(np.arange(n), support)
    scale = 1.0 + float(np.max(np.abs(problem.gradient(x))))
    violation = max(
        float(np.max(-x[support], initial=0.0)) / max(radius, 1.0),
        float(np.max(-reduced[off], initial=0.0)) / scale,
        float(np.max(np.abs(reduced[support]), initial=0.0)) / scale,
    )
    return SimplexOptimum(x, problem.value(x), violation)


def project_simplex(y: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection onto {x >= 0, sum x = radius} (sort and threshold)."""
    u = np.sort(y)[::-1]
    cumulative = np.cumsum(u) - radius
    index = np.arange(1, y.shape[0] + 1)
    last = np.flatnonzero(u - cumulative / index > 0)[-1]
    threshold = cumulative[last] / (last + 1)
    return np.maximum(y - threshold, 0.0)


def project_l1_ball(y: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto {sum |x| <= radius}: soft-thresholding by the simplex rule."""
    if np.sum(np.abs(y)) <= radius:
        return y.copy()
    return np.sign(y) * project_simplex(np.abs(y), radius)
