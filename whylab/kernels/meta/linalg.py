"""Meta kernels of the matrix products (the checks are the CPU kernels' own)."""

from __future__ import annotations

from whylab.kernels.cpu import linalg as checks
from whylab.kernels.meta.common import meta_empty


def mm(self, mat2):
    checks.check_mm(self, mat2)
    return meta_empty((self._sizes[0], mat2._sizes[1]), self.dtype)


def addmm(self, mat1, mat2, beta=1, alpha=1):
    return meta_empty(checks.check_addmm(self, mat1, mat2), mat1.dtype)


def bmm(self, mat2):
    checks.check_bmm(self, mat2)
    return meta_empty((self._sizes[0], self._sizes[1], mat2._sizes[2]), self.dtype)


def mv(self, vec):
    checks.check_mv(self, vec)
    return meta_empty((self._sizes[0],), self.dtype)


def dot(self, other):
    checks.check_dot(self, other)
    return meta_empty((), self.dtype)
