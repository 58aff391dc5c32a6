"""How a number reads in a table cell or a metric: one formatter for the whole site.

A value shows a fixed number of significant digits, trailing zeros kept so that a
column reads at one precision (0.500, 0.123, 0.0456); a value that is a whole number
shows as one (1, 0, 808), since it is exact. Very small and very large values take
a power of ten (1.23e−5), the minus sign is the real one (−), and NaN and infinity
read as NaN and ∞. A vector is a comma-separated list in brackets, its entries
formatted alike: [0.559, 0.371, 0.0700], never NumPy's ``[0.559 0.371 0.07 ]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MINUS = "\u2212"
SIGNIFICANT_DIGITS = 4  # a cell that does not say otherwise
# Fixed-point notation between these powers of ten, a power of ten outside them.
SMALLEST_FIXED_EXPONENT = -3
LARGEST_FIXED_EXPONENT = 5


def format_number(value: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """``value`` to ``digits`` significant digits, as a reader sees it (see the module)."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else f"{MINUS}∞"
    if value.is_integer() and abs(value) < 10.0**LARGEST_FIXED_EXPONENT:
        return str(int(value)).replace("-", MINUS)
    # Round first, so 0.99996 becomes 1.000 (four digits), not 1.0000.
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    power = int(exponent)
    if power >= digits - 1 and power < LARGEST_FIXED_EXPONENT:
        text = f"{value:.0f}"  # the whole integer part: 12346, not 12350
    elif SMALLEST_FIXED_EXPONENT <= power < LARGEST_FIXED_EXPONENT:
        text = f"{float(f'{mantissa}e{power}'):.{digits - 1 - power}f}"
    else:
        text = f"{mantissa}e{power}"
    return text.replace("-", MINUS)


def format_vector(values: Iterable[float], digits: int = SIGNIFICANT_DIGITS) -> str:
    """``[a, b, c]``: each entry as :func:`format_number` writes it."""
    return "[" + ", ".join(format_number(v, digits) for v in values) + "]"


SUBSCRIPT_DIGITS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(value: int) -> str:
    """An index written as a subscript, for names such as x₂₅ built at run time."""
    return str(value).translate(SUBSCRIPT_DIGITS)
