"""The served math font: every formula's characters in it, and it is what the script makes."""

from __future__ import annotations

import hashlib

import pytest

from whylab.explorer.web.fonts.subset import (
    FULL_FONT,
    RADICAL,
    characters_of,
    missing_characters,
    served_font,
    subset_bytes,
    used_characters,
)

REGENERATE = "run python -m whylab.explorer.web.fonts.subset"


@pytest.fixture(scope="module")
def used() -> set[str]:
    return used_characters()


def test_every_character_of_every_formula_is_in_the_served_font(used):
    missing = missing_characters(used, served_font()) - missing_characters(used, FULL_FONT)
    assert missing == set(), f"{sorted(missing)} missing from {served_font().name}: {REGENERATE}"


def test_a_planted_character_the_served_font_lacks_is_caught():
    """The negative control of the test above: a formula with a character the subset has
    no glyph for (but the whole font has) is reported."""
    planted = characters_of(["<math><mo>⨌</mo><mi>x</mi></math>"])
    assert "⨌" in planted
    assert missing_characters(planted, served_font()) == {"⨌"}
    assert missing_characters(planted, FULL_FONT) == set()


def test_the_layout_draws_italic_letters_and_the_radical(used):
    found = characters_of(["<math><msqrt><mi>x</mi></msqrt><mi>h</mi><mi>sin</mi></math>"])
    assert {"x", "\U0001d465", "\u210e", RADICAL} <= found  # 𝑥, ℎ (italic h), √
    assert "\U0001d460" not in found  # a multi-letter <mi> stays upright
    assert "\U0001d465" in used


def test_the_served_font_is_what_the_script_makes_from_the_topics(used):
    data = subset_bytes(used)
    assert served_font().read_bytes() == data, REGENERATE
    assert served_font().name == f"NotoSansMath-{hashlib.sha256(data).hexdigest()[:10]}.woff2"
    assert len(data) < FULL_FONT.stat().st_size / 5  # 23 KB of the whole font's 271 KB
