"""Goto / van de Geijn matrix multiplication: pack blocks into contiguous buffers.

Blocking alone (:func:`~whylab.numerics.loops.orders.matmul_blocked`) keeps a
block of each matrix in cache, but the block is still scattered: each row of a
block sits a full matrix row away from the next, so it shares cache sets and
TLB pages with its neighbours. Goto and van de Geijn ("Anatomy of
high-performance matrix multiplication", ACM TOMS 34(3), 2008) copy the blocks
first:

* a ``kc x nc`` panel of B is *packed* into ``nc/NR`` slivers, each ``kc x NR``
  and stored row after row (:func:`pack_b`);
* an ``mc x kc`` block of A is packed into ``mc/MR`` slivers, each ``MR x kc``
  and stored column after column (:func:`pack_a`);
* a *micro-kernel* multiplies one A sliver by one B sliver into an ``MR x NR``
  tile of C held in local accumulators, reading both buffers at stride 1.

Edge slivers are padded with zeros, so the micro-kernel always does a full
``MR x NR`` tile; only the valid part is added to C. The loops around the
micro-kernel are those of the paper (jc, pc, ic, jr, ir from outer to inner).
"""

from __future__ import annotations

import numpy as np

from whylab.numerics._jit import jit, jit_contracting
from whylab.numerics.loops.orders import WorkCount
from whylab.numerics.loops.validation import as_matrix, check_positive_int, product_operands

__all__ = ["MR", "NR", "matmul_packed", "pack_a", "pack_b"]

MR = 4  # rows of the C tile a micro-kernel keeps in registers
NR = 8  # columns of that tile
MAX_BLOCK = 4096


@jit
def _pack_a_into(A, i0, p0, mb, kb, buffer):
    """A[i0:i0+mb, p0:p0+kb] into MR-row slivers, each stored column by column."""
    slivers = (mb + MR - 1) // MR
    for s in range(slivers):
        base = s * kb * MR
        for p in range(kb):
            for r in range(MR):
                i = s * MR + r
                buffer[base + p * MR + r] = A[i0 + i, p0 + p] if i < mb else 0.0


@jit
def _pack_b_into(B, p0, j0, kb, nb, buffer):
    """B[p0:p0+kb, j0:j0+nb] into NR-column slivers, each stored row by row."""
    slivers = (nb + NR - 1) // NR
    for s in range(slivers):
        base = s * kb * NR
        for p in range(kb):
            for c in range(NR):
                j = s * NR + c
                buffer[base + p * NR + c] = B[p0 + p, j0 + j] if j < nb else 0.0


@jit_contracting
def _micro_kernel(kb, a_panel, a_base, b_panel, b_base, out, r0, c0):
    """out[r0:r0+4, c0:c0+8] += (4 x kb A sliver)(kb x 8 B sliver).

    The 32 entries of the C tile live in 32 named local variables, so that the
    compiler keeps them in registers for the whole k loop: each step loads 4
    numbers of A and 8 of B and does 32 multiply-adds with them. (A loop over a
    small tile array would go through memory on every step.)
    """
    c00 = c01 = c02 = c03 = c04 = c05 = c06 = c07 = 0.0
    c10 = c11 = c12 = c13 = c14 = c15 = c16 = c17 = 0.0
    c20 = c21 = c22 = c23 = c24 = c25 = c26 = c27 = 0.0
    c30 = c31 = c32 = c33 = c34 = c35 = c36 = c37 = 0.0
    for p in range(kb):
        a = a_base + p * MR
        b = b_base + p * NR
        b0, b1, b2, b3 = b_panel[b], b_panel[b + 1], b_panel[b + 2], b_panel[b + 3]
        b4, b5, b6, b7 = b_panel[b + 4], b_panel[b + 5], b_panel[b + 6], b_panel[b + 7]
        x = a_panel[a]
        c00 += x * b0; c01 += x * b1; c02 += x * b2; c03 += x * b3  # noqa: E702
        c04 += x * b4; c05 += x * b5; c06 += x * b6; c07 += x * b7  # noqa: E702
        x = a_panel[a + 1]
        c10 += x * b0; c11 += x * b1; c12 += x * b2; c13 += x * b3  # noqa: E702
        c14 += x * b4; c15 += x * b5; c16 += x * b6; c17 += x * b7  # noqa: E702
        x = a_panel[a + 2]
        c20 += x * b0; c21 += x * b1; c22 += x * b2; c23 += x * b3  # noqa: E702
        c24 += x * b4; c25 += x * b5; c26 += x * b6; c27 += x * b7  # noqa: E702
        x = a_panel[a + 3]
        c30 += x * b0; c31 += x * b1; c32 += x * b2; c33 += x * b3  # noqa: E702
        c34 += x * b4; c35 += x * b5; c36 += x * b6; c37 += x * b7  # noqa: E702
    _add_row(out, r0, c0, c00, c01, c02, c03, c04, c05, c06, c07)
    _add_row(out, r0 + 1, c0, c10, c11, c12, c13, c14, c15, c16, c17)
    _add_row(out, r0 + 2, c0, c20, c21, c22, c23, c24, c25, c26, c27)
    _add_row(out, r0 + 3, c0, c30, c31, c32, c33, c34, c35, c36, c37)


@jit
def _add_row(out, r, c, v0, v1, v2, v3, v4, v5, v6, v7):
    row = out[r]
    row[c] += v0
    row[c + 1] += v1
    row[c + 2] += v2
    row[c + 3] += v3
    row[c + 4] += v4
    row[c + 5] += v5
    row[c + 6] += v6
    row[c + 7] += v7


@jit
def _packed_gemm(A, B, C, mc, kc, nc):
    m, p = A.shape
    n = B.shape[1]
    a_buffer = np.empty(((mc + MR - 1) // MR) * MR * kc)
    b_buffer = np.empty(((nc + NR - 1) // NR) * NR * kc)
    edge = np.zeros((MR, NR))  # the tile for slivers cut short at the matrix edges
    done = 0
    for jc in range(0, n, nc):
        nb = min(nc, n - jc)
        for pc in range(0, p, kc):
            kb = min(kc, p - pc)
            _pack_b_into(B, pc, jc, kb, nb, b_buffer)
            for ic in range(0, m, mc):
                mb = min(mc, m - ic)
                _pack_a_into(A, ic, pc, mb, kb, a_buffer)
                for jr in range(0, nb, NR):
                    for ir in range(0, mb, MR):
                        a_base = (ir // MR) * kb * MR
                        b_base = (jr // NR) * kb * NR
                        rows, cols = min(MR, mb - ir), min(NR, nb - jr)
                        if rows == MR and cols == NR:
                            _micro_kernel(kb, a_buffer, a_base, b_buffer, b_base,
                                          C, ic + ir, jc + jr)
                        else:
                            edge[:, :] = 0.0
                            _micro_kernel(kb, a_buffer, a_base, b_buffer, b_base, edge, 0, 0)
                            C[ic + ir:ic + ir + rows, jc + jr:jc + jr + cols] += \
                                edge[:rows, :cols]
                done += mb * kb * nb
    return done


def pack_a(A, i0: int, p0: int, mb: int, kb: int) -> np.ndarray:
    """The packed copy of the block A[i0:i0+mb, p0:p0+kb] (what the micro-kernel reads)."""
    A = as_matrix("pack_a", "A", A)
    _check_block("pack_a", A.shape, i0, p0, mb, kb)
    buffer = np.empty(((mb + MR - 1) // MR) * MR * kb)
    _pack_a_into(A, i0, p0, mb, kb, buffer)
    return buffer


def pack_b(B, p0: int, j0: int, kb: int, nb: int) -> np.ndarray:
    """The packed copy of the panel B[p0:p0+kb, j0:j0+nb]."""
    B = as_matrix("pack_b", "B", B)
    _check_block("pack_b", B.shape, p0, j0, kb, nb)
    buffer = np.empty(((nb + NR - 1) // NR) * NR * kb)
    _pack_b_into(B, p0, j0, kb, nb, buffer)
    return buffer


def _check_block(function: str, shape, row0: int, col0: int, rows: int, cols: int) -> None:
    rows = check_positive_int(function, "rows of the block", rows)
    cols = check_positive_int(function, "columns of the block", cols)
    if not (0 <= row0 and row0 + rows <= shape[0] and 0 <= col0 and col0 + cols <= shape[1]):
        raise ValueError(f"{function}: block [{row0}:{row0 + rows}, {col0}:{col0 + cols}] "
                         f"lies outside the {shape[0]}x{shape[1]} matrix")


def matmul_packed(A, B, C: np.ndarray | None = None, *, mc: int = 64, kc: int = 256,
                  nc: int = 2048, count: WorkCount | None = None) -> np.ndarray:
    """C += A·B the Goto / van de Geijn way: packed blocks and an MR x NR micro-kernel.

    ``mc x kc`` is the block of A kept in the L2 cache, ``kc x nc`` the panel of
    B kept in the L3 cache (defaults sized for this machine's 1 MiB L2 and
    32 MiB L3; any positive sizes give the same product).
    """
    A, B, C = product_operands("matmul_packed", A, B, C)
    mc = check_positive_int("matmul_packed", "mc", mc, MAX_BLOCK)
    kc = check_positive_int("matmul_packed", "kc", kc, MAX_BLOCK)
    nc = check_positive_int("matmul_packed", "nc", nc, MAX_BLOCK)
    done = _packed_gemm(A, B, C, mc, kc, nc)
    if count is not None:
        count.multiply_adds += int(done)
    return C
