"""Text in a drawing: how wide it is drawn, and where it may wrap.

The server has no fonts to measure with, so widths come from per-character
estimates of the page's sans-serif and monospace fonts (CJK characters count
double). Node text and series labels wrap to a width at the best place a line may
break: spaces first, then dots and brackets, then underscores and CamelCase humps
(:func:`wrap_text`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from html import escape

BOLD_WIDTH_FACTOR = 1.1


NARROW_CHARACTERS = frozenset("ijlt.,:;!|'\"()[]{} ")
BROAD_CHARACTERS = frozenset("MWmw@%")
OPERATOR_CHARACTERS = frozenset("+−=<>×÷±~")


def _character_width(ch: str) -> float:
    """Approximate advance of one character, in ems, for a sans-serif font."""
    if unicodedata.east_asian_width(ch) in "WF":
        return 1.0
    if unicodedata.decomposition(ch).startswith(("<super>", "<sub>")):
        return 0.42
    if ch in NARROW_CHARACTERS:
        return 0.35
    if ch in BROAD_CHARACTERS:
        return 0.95
    if ch in OPERATOR_CHARACTERS:
        return 0.84
    if ch.isupper():
        return 0.68
    if ch.isdigit():
        return 0.64
    return 0.6


def text_width(text: str, font_size: float, *, bold: bool = False) -> float:
    """Rough rendered width: by character class (CJK, sub/superscripts, W, i, ...).

    Bold (weight 600, as node labels are drawn) runs about a tenth wider.
    """
    width = sum(_character_width(ch) for ch in text) * font_size
    return width * BOLD_WIDTH_FACTOR if bold else width


def monospace_width(text: str, font_size: float) -> float:
    """Rendered width in a monospace font: 0.6 em a character, 1 em for CJK."""
    return sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.6 for ch in text) * font_size


def attr(value: str) -> str:
    return escape(value, quote=True)


# Where a line of node text may break, from the best place to the worst (a line
# breaks at a worse place only when the better ones leave it too wide):
# 0: a space outside brackets ("matmul @ | Autograd");
# 1: after a dot (not a decimal point) or before an opening bracket or the sign of a
#    complex number's imaginary part, outside brackets ("recording. | Autograd[mm]",
#    "-4 | +9.66i"), and between two CJK characters;
# 2: after an underscore or between the humps of a CamelCase name, outside brackets;
# 3 and up: any of these inside brackets, one level further per bracket depth.
OPENING, CLOSING = "([{", ")]}"
NO_BREAK_BEFORE_CJK = frozenset("，。、：；）」』")


def _is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def _break_rank(text: str, index: int, depth: int) -> int | None:
    """How bad a break between ``text[index]`` and the character after it is (None: none)."""
    ch, after = text[index], text[index + 1]
    if _is_wide(ch) and _is_wide(after) and after not in NO_BREAK_BEFORE_CJK:
        rank = 1
    elif ch == " ":
        rank = 0
    elif (ch == "." and not after.isdigit()) or ch == ",":
        rank = 1
    elif ch.isalnum() and after in "[(+−-" and text[index + 1 : index + 3] != "()":
        rank = 1
    elif ch == "_" or (ch.islower() and after.isupper()):
        rank = 2
    else:
        return None
    return rank if depth == 0 else 2 + depth


def break_pieces(text: str, worst: int) -> list[str]:
    """``text`` cut wherever a line may break at rank ``worst`` or better; the pieces
    join back into ``text``."""
    pieces, current, depth = [], "", 0
    for index, ch in enumerate(text):
        current += ch
        depth += (ch in OPENING) - (ch in CLOSING)
        if index + 1 < len(text):
            rank = _break_rank(text, index, max(depth, 0))
            if rank is not None and rank <= worst:
                pieces.append(current)
                current = ""
    return [*pieces, current]


MAX_BREAK_RANK = 8


def wrap_text(
    text: str, width: float, measure: Callable[[str], float], worst: int = 0
) -> list[str]:
    """``text`` in lines no wider than ``width`` (as ``measure`` counts them).

    Lines break at the best places first (see :func:`break_pieces`); a line
    still too wide is broken again at the next rank. A piece no rank can break
    gets a line of its own (the box around it grows to hold it). Spaces at a
    break are dropped.
    """
    lines, line = [], ""
    for piece in break_pieces(text, worst):
        if line.strip() and measure((line + piece).rstrip()) > width:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    lines.append(line.rstrip())
    if worst >= MAX_BREAK_RANK:
        return lines
    return [
        part
        for line in lines
        for part in (
            wrap_text(line, width, measure, worst + 1) if measure(line) > width else [line]
        )
    ]


def line_spaces(text: str, lines: Sequence[str]) -> tuple[str, ...]:
    """After each line of ``text`` wrapped into ``lines``: the space it broke at, or ``""``
    where it broke between two characters (so the lines with these rejoin into ``text``)."""
    spaces, position = [], 0
    for line in lines:
        position = text.index(line, position) + len(line)
        spaces.append(" " if text[position : position + 1] == " " else "")
    return tuple(spaces)


def text_lines(css: str, x: float, lines: Sequence[str], ys: Sequence[float], spaces) -> str:
    """One ``<text>`` element for ``lines`` (a ``<tspan>`` each, when more than one), so
    the element reads as the unwrapped text: between the lines stands the space each
    broke at, or nothing."""
    if len(lines) == 1:
        return f'<text class="{css}" x="{x:.1f}" y="{ys[0]:.1f}" text-anchor="middle">' + (
            f"{escape(lines[0])}</text>"
        )
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{y:.1f}">{escape(line)}</tspan>{space}'
        for line, y, space in zip(lines, ys, (*spaces[:-1], ""), strict=True)
    )
    return f'<text class="{css}" text-anchor="middle">{spans}</text>'
