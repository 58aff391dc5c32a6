"""The math font the pages load: Noto Sans Math cut down to the glyphs the topics' formulas use.

The whole font (``NotoSansMath-Regular.woff2`` beside this file, 271 KB) was
75-93 % of a topic page's first view. Browsers need its OpenType ``MATH`` table
to lay out MathML, but only the glyphs of characters that the formulas contain,
plus what the layout draws by itself: the mathematical italic letter that a
one-letter ``<mi>x</mi>`` is shown as (MathML Core's automatic italic), the
radical sign of ``<msqrt>``, and the stretched sizes of fences, bars and arrows
(fontTools keeps the ``MATH`` table's variants of every glyph it keeps).

:func:`used_characters` collects those characters from every topic's prose in
both languages; :func:`write_subset` writes the cut font into ``static/fonts/``
under a name that carries a hash of its bytes, and points the stylesheet's
``@font-face`` at it, so a browser may keep it for a year (the name changes
whenever the glyphs do). Run ``python -m whylab.explorer.web.fonts.subset`` after
adding formulas; a test fails while some formula uses a character the served
font lacks. Needs fontTools and brotli (the ``dev`` extra), never at run time.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
import sys
from collections.abc import Iterable
from pathlib import Path

FONT_DIR = Path(__file__).resolve().parent
FULL_FONT = FONT_DIR / "NotoSansMath-Regular.woff2"
STATIC_FONTS = FONT_DIR.parent / "static" / "fonts"
STYLESHEET = FONT_DIR.parent / "static" / "explorer.css"
SERVED_NAME = re.compile(r"NotoSansMath-[0-9a-f]{10}\.woff2")

MATH_ELEMENT = re.compile(r"<math\b.*?</math>", re.S)
ONE_LETTER_MI = re.compile(r"<mi>([^<])</mi>")
TAG = re.compile(r"<[^>]+>")
RADICAL = "\u221a"  # drawn by <msqrt> and <mroot>, which hold no such character


def math_italic(letter: str) -> str | None:
    """The mathematical italic form a browser shows a one-letter ``<mi>`` in, or None
    (MathML Core's italic mapping, Unicode's Mathematical Alphanumeric Symbols)."""
    holes = {"h": "\u210e"}  # italic small h sits in Letterlike Symbols (Planck's constant)
    if letter in holes:
        return holes[letter]
    if "A" <= letter <= "Z":
        return chr(0x1D434 + ord(letter) - ord("A"))
    if "a" <= letter <= "z":
        return chr(0x1D44E + ord(letter) - ord("a"))
    if "\u0391" <= letter <= "\u03a9":
        return chr(0x1D6E2 + ord(letter) - 0x391)
    if "\u03b1" <= letter <= "\u03c9":
        return chr(0x1D6FC + ord(letter) - 0x3B1)
    return None


def characters_of(mathml_documents: Iterable[str]) -> set[str]:
    """Every character the math in these HTML documents shows, as the browser draws it."""
    found: set[str] = {RADICAL}
    for document in mathml_documents:
        for element in MATH_ELEMENT.findall(document):
            found |= set(html.unescape(TAG.sub("", element)))
            for letter in ONE_LETTER_MI.findall(element):
                italic = math_italic(html.unescape(letter))
                if italic is not None:
                    found.add(italic)
    return {c for c in found if not c.isspace()}


def used_characters(topics_dir: Path | None = None) -> set[str]:
    """The characters of every formula of every topic's prose, in both languages."""
    from whylab.explorer.content.prose import HtmlBlock
    from whylab.explorer.content.topics import DEFAULT_TOPICS_DIR, load_registry

    registry = load_registry(topics_dir or DEFAULT_TOPICS_DIR)
    return characters_of(
        segment.html
        for topic in registry
        for prose in topic.prose.values()
        for segment in prose.segments
        if isinstance(segment, HtmlBlock)
    )


def served_font() -> Path:
    """The font file the stylesheet names (there is exactly one)."""
    named = SERVED_NAME.findall(STYLESHEET.read_text(encoding="utf-8"))
    if len(named) != 1:
        raise RuntimeError(f"{STYLESHEET.name} should name one math font, names {named}")
    return STATIC_FONTS / named[0]


def missing_characters(characters: set[str], font_path: Path) -> set[str]:
    """The characters that the font at ``font_path`` has no glyph for."""
    from fontTools.ttLib import TTFont

    return {c for c in characters if ord(c) not in TTFont(font_path).getBestCmap()}


def subset_bytes(characters: set[str]) -> bytes:
    """The full font cut down to ``characters`` (those it has), as WOFF2."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(FULL_FONT, recalcTimestamp=False)  # the same glyphs give the same bytes
    wanted = sorted({ord(c) for c in characters} & set(font.getBestCmap()))
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # the ssty script-size forms, among others
    options.name_IDs = ["*"]  # keep the copyright and licence names
    options.notdef_outline = True
    cutter = subset.Subsetter(options)
    cutter.populate(unicodes=wanted)
    cutter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    return out.getvalue()


def write_subset(characters: set[str]) -> Path:
    """Write the cut font under its content-hashed name, remove the one it replaces, and
    point the stylesheet at it. Returns the new file."""
    data = subset_bytes(characters)
    name = f"NotoSansMath-{hashlib.sha256(data).hexdigest()[:10]}.woff2"
    STATIC_FONTS.mkdir(exist_ok=True)
    for old in STATIC_FONTS.glob("NotoSansMath-*.woff2"):
        if old.name != name:
            old.unlink()
    (STATIC_FONTS / name).write_bytes(data)
    css = STYLESHEET.read_text(encoding="utf-8")
    STYLESHEET.write_text(SERVED_NAME.sub(name, css), encoding="utf-8")
    return STATIC_FONTS / name


def main() -> int:
    characters = used_characters()
    path = write_subset(characters)
    print(
        f"{path.relative_to(FONT_DIR.parent)}: {path.stat().st_size:,} bytes for "
        f"{len(characters)} characters (the whole font: {FULL_FONT.stat().st_size:,} bytes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
