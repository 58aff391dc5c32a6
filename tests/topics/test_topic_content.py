"""The prose and metadata of the wave-superposition and fft topics.

Every formula converts with math_core, both languages place the same experiments
in the same order, every experiment is placed, and the texts are full pages.
When the explorer's topic loader is present, the folders must also load with it.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import math_core
import pytest

TOPICS = Path(__file__).resolve().parents[2] / "whylab" / "topics"
FOLDERS = ["wave_superposition", "fft"]
PLACEMENT = re.compile(r"^\{\{ (experiment|diagram):([a-z0-9\-]+) \}\}$", re.MULTILINE)
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
INLINE_MATH = re.compile(r"(?<!\\)\$(.+?)(?<!\\)\$", re.DOTALL)
CJK = re.compile(r"[\u4e00-\u9fff]")


def prose(folder: str, lang: str) -> str:
    return (TOPICS / folder / f"{lang}.md").read_text(encoding="utf-8")


def formulas(text: str) -> list[tuple[str, bool]]:
    """Every (latex, display) pair in a prose file."""
    found = [(m.group(1), True) for m in DISPLAY_MATH.finditer(text)]
    without_display = DISPLAY_MATH.sub(" ", text)
    found += [(m.group(1), False) for m in INLINE_MATH.finditer(without_display)]
    return found


def experiments_module(folder: str):
    return importlib.import_module(f"whylab.topics.{folder}.experiments")


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_formula_converts_to_mathml(folder, lang):
    converter = math_core.LatexToMathML()
    found = formulas(prose(folder, lang))
    assert len(found) > 20
    for latex, display in found:
        mathml = converter.convert_with_local_state(latex.strip(), displaystyle=display)
        assert mathml.startswith("<math") and "merror" not in mathml, latex


def test_formula_extraction_sees_inline_and_display_math():
    assert formulas("a $x^2$ b\n\n$$\\frac{1}{2}$$\n") == [("\\frac{1}{2}", True), ("x^2", False)]


@pytest.mark.parametrize("folder", FOLDERS)
def test_both_languages_place_every_experiment_in_the_same_order(folder):
    placed = {lang: PLACEMENT.findall(prose(folder, lang)) for lang in ("en", "zh")}
    assert placed["en"] == placed["zh"]
    names = [e.name for e in experiments_module(folder).EXPERIMENTS]
    assert sorted(name for _, name in placed["en"]) == sorted(names)


@pytest.mark.parametrize("folder", FOLDERS)
def test_meta_is_paired(folder):
    meta = tomllib.loads((TOPICS / folder / "meta.toml").read_text(encoding="utf-8"))
    assert meta["slug"] == folder.replace("_", "-")
    for field in ("title", "question", "summary"):
        assert meta["en"][field].strip() and meta["zh"][field].strip()
        assert CJK.search(meta["zh"][field]) and not CJK.search(meta["en"][field])
    assert len(meta["en"]["tags"]) == len(meta["zh"]["tags"])
    assert meta["en"]["keywords"] and meta["zh"]["keywords"]


@pytest.mark.parametrize("folder", FOLDERS)
def test_pages_are_full_explanations(folder):
    english = INLINE_MATH.sub(" ", DISPLAY_MATH.sub(" ", prose(folder, "en")))
    words = len(re.findall(r"[A-Za-z]+", english))
    assert 600 <= words <= 1400, words
    chinese = len(CJK.findall(prose(folder, "zh")))
    assert 900 <= chinese <= 2600, chinese
    for lang in ("en", "zh"):
        assert len(re.findall(r"^## ", prose(folder, lang), re.MULTILINE)) >= 4


@pytest.mark.parametrize("folder", FOLDERS)
def test_topic_loads_with_the_explorer_loader(folder):
    topics = pytest.importorskip("whylab.explorer.content.topics")
    topic = topics.load_topic(TOPICS / folder)
    assert topic.slug == folder.replace("_", "-")
