"""Tile kernels in Triton's language, run by :mod:`whylab.gpu.tile` and by Triton itself.

These functions are kernel *source*: they name a module ``tl`` that this file
does not bind. :func:`whylab.gpu.tile.launch` runs them with ``tl`` bound to its
NumPy tile language; the Triton cross-check (:mod:`whylab.gpu.simulators`) sets
``tl`` to ``triton.language`` and decorates them with ``triton.jit``, so Triton's
interpreter runs this very text. Each counts its own stores in ``writes``
(``tl.atomic_add``), which is how a run under Triton reports its write map.
"""

from __future__ import annotations

tl = None  # bound by the executor that runs these kernels


def vector_add(x_ptr, y_ptr, out_ptr, writes_ptr, n, BLOCK: tl.constexpr):  # noqa: N803
    """``out = x + y`` over ``n`` elements, one block of ``BLOCK`` per program, masked."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
    tl.atomic_add(writes_ptr + offsets, 1, mask=mask)


def vector_add_clamped(x_ptr, y_ptr, out_ptr, writes_ptr, n, BLOCK: tl.constexpr):  # noqa: N803
    """The same with offsets clamped to ``n - 1`` instead of a mask."""
    pid = tl.program_id(0)
    offsets = tl.minimum(pid * BLOCK + tl.arange(0, BLOCK), n - 1)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y)
    tl.atomic_add(writes_ptr + offsets, 1)


def matmul(a_ptr, b_ptr, c_ptr, writes_ptr, n, k_end,  # noqa: N803
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A B (n × n, row-major): program (i, j) computes one BLOCK_M × BLOCK_N tile.

    The reduction runs over ``range(0, k_end, BLOCK_K)``; ``k_end = n`` covers every k
    (the last, partial tile masked).
    """
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, k_end, BLOCK_K):
        ks = start + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * n + ks[None, :],
                    mask=(rows[:, None] < n) & (ks[None, :] < n), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * n + cols[None, :],
                    mask=(ks[:, None] < n) & (cols[None, :] < n), other=0.0)
        acc += tl.dot(a, b)
    inside = (rows[:, None] < n) & (cols[None, :] < n)
    tl.store(c_ptr + rows[:, None] * n + cols[None, :], acc, mask=inside)
    tl.atomic_add(writes_ptr + rows[:, None] * n + cols[None, :], 1, mask=inside)
