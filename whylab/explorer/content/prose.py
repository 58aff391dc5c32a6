"""Topic prose: Markdown with math and placement lines, rendered once at load.

A topic's ``en.md``/``zh.md`` is CommonMark (plus tables) with two additions:

* ``$...$`` (inline) and ``$$...$$`` (display) hold LaTeX, converted to MathML
  by :mod:`whylab.explorer.content.mathml`. A lone ``$`` is an error -- write ``\\$``
  for a literal dollar sign -- so no half-formula ever reaches a page.
* A line that is exactly ``{{ experiment:NAME }}`` or ``{{ diagram:NAME }}``
  marks where an experiment (with its parameter form) or a diagram (its
  figures only) goes.

:func:`render_prose` returns the document as a list of segments: HTML blocks
and placements in reading order, plus the plain text used by the search index (whole,
and block by block with the section each block falls under).
Raw HTML in the Markdown is not passed through. Every heading gets an id made
from its words (unique in the document) and a visible ``#`` link to itself, and
level-2 and level-3 headings are listed for the page's table of contents. A translation
takes the ids of the original's headings, paired by position (``heading_ids``), so a
link to a section, and the language switch, land on the same section in both languages.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

from whylab.explorer.content.mathml import MathError, latex_to_mathml

PLACEMENT_LINE = re.compile(r"^\{\{\s*(experiment|diagram)\s*:\s*([A-Za-z0-9_\-]+)\s*\}\}\s*$")
FENCE_LINE = re.compile(r"^\s{0,3}(```|~~~)")


@dataclass(frozen=True)
class Heading:
    """A section heading of the prose: its level (2 or 3), page-unique id and plain text."""

    level: int
    id: str
    text: str


@dataclass(frozen=True)
class HtmlBlock:
    html: str
    headings: tuple[Heading, ...] = ()


@dataclass(frozen=True)
class Placement:
    kind: Literal["experiment", "diagram"]
    name: str


Segment = HtmlBlock | Placement


@dataclass(frozen=True)
class Passage:
    """The plain text of one block (a paragraph, a list item, a heading...) and the id of
    the listed heading (level 2 or 3) it falls under: ``""`` before the first one."""

    section: str
    text: str
    heading: bool = False  # the text of that listed heading itself


@dataclass(frozen=True)
class Prose:
    segments: tuple[Segment, ...]
    text: str  # plain text for search: inline math as its (short) LaTeX, display math left out
    formula_count: int
    heading_ids: tuple[str, ...] = ()  # every heading's id, in reading order
    passages: tuple[Passage, ...] = ()  # the same text block by block, with its section


def block_anchor(kind: str, name: str) -> str:
    """The id of an experiment or diagram block on its page: ``experiment-NAME``."""
    return f"{kind}-{name}"


# ---------------------------------------------------------------- math syntax


def _find_closing(src: str, start: int, end: int, delimiter: str) -> int:
    """Index of the closing delimiter in ``src[start:end]``, skipping ``\\``-escapes."""
    index = start
    while index < end:
        if src[index] == "\\":
            index += 2
            continue
        if src.startswith(delimiter, index):
            return index
        index += 1
    return -1


def _math_inline(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src[pos] != "$":
        return False
    delimiter = "$$" if src.startswith("$$", pos) else "$"
    start = pos + len(delimiter)
    close = _find_closing(src, start, state.posMax, delimiter)
    if close == -1 or close == start:
        context = src[max(0, pos - 20) : pos + 30].replace("\n", " ")
        raise MathError(
            f"{state.env.get('where', '')}: unmatched {delimiter} near {context!r} "
            "(write \\$ for a literal dollar sign)"
        )
    if not silent:
        token = state.push("math_inline", "math", 0)
        token.content = src[start:close]
        token.markup = delimiter
    state.pos = close + len(delimiter)
    return True


def _math_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False  # an indented code block
    begin = state.bMarks[start_line] + state.tShift[start_line]
    first = state.src[begin : state.eMarks[start_line]].rstrip()
    if not first.startswith("$$"):
        return False
    rest = first[2:]
    if "$$" in rest:
        if not rest.endswith("$$"):
            return False  # "$$x$$ and more text": inline display math in a paragraph
        lines, next_line = [rest[:-2]], start_line + 1
    else:
        lines, line = [rest], start_line + 1
        while line < end_line:
            text = state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]].rstrip()
            if text.endswith("$$"):
                lines.append(text[:-2])
                break
            lines.append(text)
            line += 1
        else:
            raise MathError(
                f"{state.env.get('where', '')} line {state.env.get('line0', 0) + start_line + 1}: "
                "$$ block is never closed"
            )
        next_line = line + 1
    if silent:
        return True
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = "\n".join(lines)
    token.map = [start_line, next_line]
    token.markup = "$$"
    state.line = next_line
    return True


def _render_math_inline(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    token = tokens[idx]
    return latex_to_mathml(token.content, display=token.markup == "$$", where=env.get("where", ""))


def _render_math_block(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    token = tokens[idx]
    line = env.get("line0", 0) + token.map[0] + 1
    mathml = latex_to_mathml(
        token.content, display=True, where=f"{env.get('where', '')} line {line}"
    )
    # No tab stop here: the script makes a formula focusable (so it can be scrolled by
    # keyboard) only when it is wider than its column.
    return f'<div class="math-display">{mathml}</div>\n'


# ---------------------------------------------------------------- heading ids and anchors

# Ids the page itself uses; a heading that would take one gets a suffix instead.
RESERVED_IDS = frozenset({"main", "article", "contents", "top", "topics", "topics-heading"})
TOC_LEVELS = ("h2", "h3")


def heading_id(text: str, taken: set[str]) -> str:
    """A readable, unique id from a heading's words: ``Views change the header`` ->
    ``views-change-the-header``; Chinese keeps its characters (``问题``)."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower())
    base = "-".join(words)[:60].strip("-_") or "section"
    if base.startswith(("experiment-", "diagram-")):
        base = "section-" + base  # the experiment blocks' own ids (block_anchor)
    candidate, number = base, 2
    while candidate in taken or candidate in RESERVED_IDS:
        candidate, number = f"{base}-{number}", number + 1
    taken.add(candidate)
    return candidate


def _heading_text(inline) -> str:  # noqa: ANN001
    return " ".join(
        "".join(
            child.content
            for child in inline.children or []
            if child.type in ("text", "code_inline", "math_inline")
        ).split()
    )


def _heading_ids(state) -> None:  # noqa: ANN001
    """Core rule: give each heading an id; list the ones a table of contents shows."""
    taken: set[str] = state.env.setdefault("ids", set())
    found: list[Heading] = state.env.setdefault("headings", [])
    given = state.env.get("given_ids")  # an iterator over the original's ids, or None
    for index, token in enumerate(state.tokens):
        if token.type != "heading_open":
            continue
        text = _heading_text(state.tokens[index + 1])
        identifier = next(given, None) if given is not None else heading_id(text, taken)
        if identifier is None:
            raise HeadingMismatch("it has more headings than the file it translates")
        state.env.setdefault("all_ids", []).append(identifier)
        token.attrSet("id", identifier)
        state.tokens[index + 2].meta["anchor"] = identifier  # for its heading_close
        if token.tag in TOC_LEVELS:
            found.append(Heading(int(token.tag[1]), identifier, text))


def _render_heading_close(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    """A ``#`` link to the heading; its accessible name is the heading's own text."""
    identifier = tokens[idx].meta.get("anchor", "")
    link = (
        f' <a class="heading-anchor" href="#{identifier}" aria-labelledby="{identifier}">#</a>'
        if identifier
        else ""
    )
    return f"{link}</{tokens[idx].tag}>\n"


# ---------------------------------------------------------------- line breaks in CJK text


def is_wide(ch: str) -> bool:
    """Chinese or Japanese script, or fullwidth punctuation: no spaces between such characters.

    Hangul is excluded: Korean separates words with spaces.
    """
    hangul = "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f" or "\uac00" <= ch <= "\ud7af"
    return unicodedata.east_asian_width(ch) in "WFH" and not hangul


def break_text(before: str, after: str) -> str:
    """What a line break in the source becomes between ``before`` and ``after``.

    A space, except between two wide characters, where it would show as a gap
    in the middle of a Chinese sentence. This is CSS's rule for segment breaks,
    which browsers do not all apply, so the explorer applies it itself.
    """
    return "" if before and after and is_wide(before[-1]) and is_wide(after[0]) else " "


def join_wrapped_lines(text: str) -> str:
    """A wrapped multi-line string (e.g. from TOML) as one line, spaces collapsed."""
    joined = ""
    for line in text.split("\n"):
        line = " ".join(line.split())
        if line:
            joined = joined + break_text(joined, line) + line if joined else line
    return joined


def _edge_character(tokens, start: int, step: int) -> str:  # noqa: ANN001
    """The character of inline text nearest a soft break, looking from ``start`` by ``step``.

    Emphasis markers are looked through; math or code ends the search (not text).
    """
    index = start
    while 0 <= index < len(tokens):
        token = tokens[index]
        if token.type == "text" and token.content:
            return token.content[-1] if step < 0 else token.content[0]
        if token.nesting == 0 and token.type != "text":
            return ""
        index += step  # an emphasis marker, or the empty text markdown-it leaves beside one
    return ""


def _render_softbreak(self, tokens, idx, options, env) -> str:  # noqa: ANN001
    before, after = _edge_character(tokens, idx - 1, -1), _edge_character(tokens, idx + 1, 1)
    return "" if break_text(before, after) == "" else "\n"


def _make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.inline.ruler.before("escape", "math_inline", _math_inline)
    md.block.ruler.before(
        "fence",
        "math_block",
        _math_block,
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )
    md.add_render_rule("math_inline", _render_math_inline)
    md.add_render_rule("math_block", _render_math_block)
    md.add_render_rule("softbreak", _render_softbreak)
    md.add_render_rule("heading_close", _render_heading_close)
    md.core.ruler.push("heading_ids", _heading_ids)
    return md


_markdown = _make_markdown()


# ---------------------------------------------------------------- documents


def _plain_text(tokens, section: str) -> list[Passage]:  # noqa: ANN001
    """The text of each block, under the listed heading read last (``section`` before the
    first of ``tokens``); a soft break inside a block follows :func:`break_text`."""
    words: list[Passage] = []
    in_heading = False
    for token in tokens:
        if token.type == "heading_open" and token.tag in TOC_LEVELS:
            in_heading = True
            section = token.attrGet("id") or section
        elif token.type == "heading_close":
            in_heading = False
        if token.children:
            line = ""
            for index, child in enumerate(token.children):
                if child.type in ("text", "code_inline", "math_inline"):
                    line += child.content
                elif child.type == "softbreak":
                    line += break_text(line, _edge_character(token.children, index + 1, 1))
                elif child.type == "hardbreak":
                    line += " "
            words.append(Passage(section, line, in_heading))
        elif token.type in ("fence", "code_block"):
            words.append(Passage(section, token.content))
    return words


def split_placements(source: str) -> list[tuple[int, str] | Placement]:
    """Cut the source at placement lines (outside code fences)."""
    parts: list[tuple[int, str] | Placement] = []
    chunk: list[str] = []
    chunk_start = 0
    in_fence = False
    for number, line in enumerate(source.splitlines()):
        if FENCE_LINE.match(line):
            in_fence = not in_fence
        match = None if in_fence else PLACEMENT_LINE.match(line)
        if match:
            parts.append((chunk_start, "\n".join(chunk)))
            parts.append(Placement(match.group(1), match.group(2)))  # type: ignore[arg-type]
            chunk, chunk_start = [], number + 1
        else:
            chunk.append(line)
    parts.append((chunk_start, "\n".join(chunk)))
    return parts


class HeadingMismatch(ValueError):
    """A translation whose headings cannot take the original's ids one for one."""


def render_prose(source: str, where: str = "", heading_ids: Sequence[str] | None = None) -> Prose:
    """Render a prose file; raises :class:`MathError` on any formula that fails.

    With ``heading_ids`` (the original's :attr:`Prose.heading_ids`), the headings take
    those ids in order instead of ids made from their own words; a different number of
    headings raises :class:`HeadingMismatch`.
    """
    segments: list[Segment] = []
    passages: list[Passage] = []
    formulas = 0
    taken: set[str] = set()  # heading ids, unique across the whole document
    all_ids: list[str] = []
    given = iter(heading_ids) if heading_ids is not None else None
    for part in split_placements(source):
        if isinstance(part, Placement):
            segments.append(part)
            continue
        line0, chunk = part
        if not chunk.strip():
            continue
        env = {
            "where": where, "line0": line0, "ids": taken, "headings": [],
            "all_ids": all_ids, "given_ids": given,
        }  # fmt: skip
        tokens = _markdown.parse(chunk, env)
        formulas += sum(
            1
            for token in tokens
            for item in [token, *(token.children or [])]
            if item.type in ("math_inline", "math_block")
        )
        html = _markdown.renderer.render(tokens, _markdown.options, env)
        segments.append(HtmlBlock(html, tuple(env["headings"])))
        passages.extend(_plain_text(tokens, passages[-1].section if passages else ""))
    if heading_ids is not None and len(all_ids) != len(heading_ids):
        raise HeadingMismatch(
            f"it has {len(all_ids)} headings where the file it translates has {len(heading_ids)}"
        )
    text = " ".join(" ".join(p.text for p in passages).split())
    return Prose(tuple(segments), text, formulas, tuple(all_ids), tuple(passages))
