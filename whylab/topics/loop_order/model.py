"""The paper-and-pencil cache model of the loop orders, independent of the simulator.

Bryant and O'Hallaron (CS:APP, 3rd ed., §6.6.2) count misses per inner-loop
iteration from the stride of each array in the inner loop alone, assuming a
cache too small to keep anything between inner loops: a stride-1 access misses
once per cache line (1/4 of the time with 32-byte lines and 8-byte doubles), a
stride-n access misses every time, and an operand held in a register never
misses. That gives their three classes: 0.5 (``ikj``, ``kij``), 1.25 (``ijk``,
``jik``) and 2.0 (``jki``, ``kji``).

When the cache is large enough to keep what the two inner loops touch, the
only misses left are for the array that the *outermost* loop's index does not
subscript: it is swept once per outer iteration, one miss per line, and the
other two stay in cache. Every order then misses 8 / line_bytes per iteration.
"""

from __future__ import annotations

DOUBLE_BYTES = 8
SUBSCRIPTS = {"A": ("i", "k"), "B": ("k", "j"), "C": ("i", "j")}  # (row, column) indices

# The book's figures (32-byte lines), per array and order, for the page's table.
CSAPP_32_BYTE_LINES = {
    "ijk": (0.25, 1.0, 0.0), "jik": (0.25, 1.0, 0.0),
    "kij": (0.0, 0.25, 0.25), "ikj": (0.0, 0.25, 0.25),
    "jki": (1.0, 0.0, 1.0), "kji": (1.0, 0.0, 1.0),
}
CLASSES = (("ikj", "kij"), ("ijk", "jik"), ("jki", "kji"))  # fewest misses first


def inner_stride(order: str, array: str, n: int) -> int:
    """Elements the array's address moves per step of the inner loop: 1, n, or 0 (register)."""
    row, column = SUBSCRIPTS[array]
    inner = order[2]
    if inner == row:
        return n
    if inner == column:
        return 1
    return 0


def book_misses(order: str, array: str, line_bytes: int, n: int) -> float:
    """CS:APP's misses per inner-loop iteration when the cache keeps nothing between loops."""
    stride = inner_stride(order, array, n)
    if stride == 0:
        return 0.0
    return DOUBLE_BYTES / line_bytes if stride == 1 else 1.0


def fits_misses(order: str, array: str, line_bytes: int) -> float:
    """Misses per iteration when the two inner loops' data stays in cache."""
    return 0.0 if order[0] in SUBSCRIPTS[array] else DOUBLE_BYTES / line_bytes


def inner_loops_lines(n: int, line_bytes: int) -> int:
    """Most cache lines the two inner loops of any order keep in use: two columns and a row."""
    return 2 * n + -(-n * DOUBLE_BYTES // line_bytes)


def most_lines_in_one_set(order: str, n: int, line_bytes: int, sets: int) -> int:
    """The most cache lines, of those two consecutive middle iterations touch, that fall
    in one set -- the conflict side of the "inner loops fit" premise.

    Capacity alone is not enough: with A, B and C laid one after another (the simulator's
    documented layout, A at address 0) and row-major, a column walk steps 8n bytes at a
    time and can land many lines in the same set. The premise holds only when no set is
    asked to hold more lines than it has ways. Counted at the middle of the outer loop.
    """
    outer, middle, inner = order
    matrix_bytes = n * n * DOUBLE_BYTES
    lines: set[int] = set()
    for m in (0, 1):
        values = {outer: n // 2, middle: m}
        for x in range(n):
            values[inner] = x
            for base, name in enumerate(("A", "B", "C")):
                row, column = SUBSCRIPTS[name]
                address = base * matrix_bytes + DOUBLE_BYTES * (values[row] * n + values[column])
                lines.add(address // line_bytes)
    per_set: dict[int, int] = {}
    for line in lines:
        per_set[line % sets] = per_set.get(line % sets, 0) + 1
    return max(per_set.values())
