"""Prose rendering: Markdown + LaTeX -> HTML + MathML, placements, loud math failures."""

from __future__ import annotations

import re

import pytest

from whylab.explorer.content.mathml import MathError, latex_to_mathml
from whylab.explorer.content.prose import (
    HeadingMismatch,
    HtmlBlock,
    Placement,
    join_wrapped_lines,
    render_prose,
)


def html_of(prose) -> str:
    return "".join(s.html for s in prose.segments if isinstance(s, HtmlBlock))


def test_inline_and_display_math_become_mathml():
    prose = render_prose("Energy $E = mc^2$ holds.\n\n$$\n\\frac{a}{b}\n$$\n", "t.md")
    html = html_of(prose)
    assert html.count("<math") == 2
    assert '<math alttext="E = mc^2">' in html
    assert 'display="block"' in html and "<mfrac>" in html
    assert "$" not in html
    assert prose.formula_count == 2


def test_single_line_display_math_and_display_math_inside_a_paragraph():
    html = html_of(render_prose("$$ a + b $$\n\nsee $$x^2$$ here", "t.md"))
    assert html.count('display="block"') == 2
    assert '<div class="math-display">' in html


def test_escaped_dollar_and_code_keep_their_dollars():
    html = html_of(render_prose("costs \\$5, code `$x$` stays", "t.md"))
    assert "costs $5" in html
    assert "<code>$x$</code>" in html
    assert "<math" not in html


@pytest.mark.parametrize(
    "source, fragment",
    [
        ("a lone $ sign", "unmatched $"),
        ("broken $\\frac{a}{$ here", "cannot convert"),
        ("unknown $\\notacommand x$", "cannot convert"),
        ("$$\n x + 1\n", "never closed"),
        ("empty $$$$ formula", "unmatched"),
    ],
)
def test_bad_math_fails_loudly_and_names_the_file(source, fragment):
    with pytest.raises(MathError) as error:
        render_prose(source, "topic/en.md")
    assert fragment in str(error.value)
    assert "topic/en.md" in str(error.value)


def test_latex_to_mathml_rejects_empty_and_escapes_alttext():
    with pytest.raises(MathError):
        latex_to_mathml("  ", display=False, where="x")
    assert 'alttext="a &lt; b"' in latex_to_mathml("a < b", display=False)


def test_placements_split_the_prose_in_order_but_not_inside_code_fences():
    source = (
        "Intro $x$.\n\n{{ experiment:first }}\n\nMiddle.\n\n```\n{{ diagram:not_me }}\n```\n\n"
        "{{diagram:second}}\n"
    )
    prose = render_prose(source, "t.md")
    kinds = [type(s).__name__ for s in prose.segments]
    assert kinds == ["HtmlBlock", "Placement", "HtmlBlock", "Placement"]
    assert prose.segments[1] == Placement("experiment", "first")
    assert prose.segments[3] == Placement("diagram", "second")
    assert "{{ diagram:not_me }}" in prose.segments[2].html


def test_raw_html_is_not_passed_through():
    html = html_of(render_prose("<script>alert(1)</script>\n\n[x](javascript:alert(1))", "t.md"))
    assert "<script>" not in html
    assert "href" not in html  # the javascript: link stays text


def test_plain_text_for_search_has_words_and_inline_math_but_no_markup():
    prose = render_prose("# Title\n\nThe **FFT** of $N$ points.\n\n$$\\sum x$$\n", "t.md")
    assert "FFT" in prose.text and "Title" in prose.text and "N" in prose.text
    assert "\\sum" not in prose.text
    assert not re.search(r"[<>*#]", prose.text)


def test_tables_render():
    html = html_of(render_prose("| a | b |\n|---|---|\n| $1$ | 2 |\n", "t.md"))
    assert "<table>" in html and "<math" in html


@pytest.mark.parametrize(
    "source, html",
    [
        ("两列等幅\n同频正弦波", "两列等幅同频正弦波"),  # no gap inside a Chinese sentence
        ("残差，\n残差为零", "残差，残差为零"),  # fullwidth punctuation is wide too
        ("**相位差**\n决定振幅", "<strong>相位差</strong>决定振幅"),  # through emphasis
        ("把 FFT\n与 DFT 对照", "把 FFT\n与 DFT 对照"),  # Latin beside Chinese keeps its space
        ("one\ntwo", "one\ntwo"),
        ("한국어\n문장", "한국어\n문장"),  # Korean separates words with spaces
    ],
)
def test_line_breaks_inside_chinese_text_leave_no_gap(source, html):
    rendered = render_prose(source).segments[0].html
    assert f"<p>{html}</p>" in rendered


def test_a_break_next_to_math_stays_a_space():
    rendered = render_prose("其中\n$x$ 是变量").segments[0].html
    assert "其中\n<math" in rendered


def test_search_text_joins_chinese_lines_like_the_page():
    prose = render_prose("测量\n合成波的振幅。\n\nFFT\nworks")
    assert "测量合成波的振幅。" in prose.text and "FFT works" in prose.text


def test_wrapped_summaries_join_without_gaps_in_chinese():
    assert join_wrapped_lines("\n同频率的两列\n正弦波，\n  相加 FFT\nand more\n") == (
        "同频率的两列正弦波，相加 FFT and more"
    )


def test_a_translation_takes_the_original_heading_ids_by_position():
    original = render_prose("## Splitting even from odd\n\ntext\n\n### Counting\n\nmore\n")
    assert original.heading_ids == ("splitting-even-from-odd", "counting")
    translation = render_prose("## 奇偶拆分\n\n文字\n\n### 计数\n\n更多\n",
                               heading_ids=original.heading_ids)
    assert translation.heading_ids == original.heading_ids
    html = html_of(translation)
    assert 'id="splitting-even-from-odd"' in html and 'href="#counting"' in html
    assert "奇偶拆分" in html and 'id="奇偶拆分"' not in html


@pytest.mark.parametrize("source", ["## 一\n\n## 二\n\n## 三\n", "## 一\n"])
def test_a_translation_with_another_number_of_headings_is_refused(source):
    original = render_prose("## One\n\n## Two\n")
    with pytest.raises(HeadingMismatch, match="headings"):
        render_prose(source, heading_ids=original.heading_ids)
