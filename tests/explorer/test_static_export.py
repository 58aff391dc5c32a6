"""The static export: every page in both languages, relative links that resolve, assets."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from whylab.explorer.web.export import export_site


@pytest.fixture(scope="module")
def site(fixture_registry, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    export_site(fixture_registry, out, live_url="https://whylab.example.org")
    return out


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_page_exists_in_both_languages(site):
    names = {str(p.relative_to(site)) for p in pages(site)}
    assert names == {
        "index.html",
        "en/index.html",
        "zh/index.html",
        "en/topics/tiny-demo/index.html",
        "zh/topics/tiny-demo/index.html",
        "en/tags/testing/index.html",
        "zh/tags/testing/index.html",
        "en/tags/signals/index.html",
        "zh/tags/signals/index.html",
    }
    assert (site / "static" / "explorer.css").is_file() and (
        site / "static" / "explorer.js"
    ).is_file()


def test_every_local_link_resolves_to_a_file(site):
    checked = 0
    for page in pages(site):
        html = page.read_text(encoding="utf-8")
        for target in re.findall(r'(?:href|src|action)="([^"]+)"', html):
            parts = urlsplit(target)
            if parts.scheme in ("http", "https"):
                assert parts.netloc == "whylab.example.org", target  # only the live-server links
                continue
            assert not target.startswith("/"), f"{page}: absolute link {target}"
            if parts.path:
                assert (page.parent / parts.path).resolve().is_file(), f"{page}: {target}"
                checked += 1
    assert checked > 50


def test_topic_pages_carry_results_math_and_disabled_forms(site):
    html = (site / "zh" / "topics" / "tiny-demo" / "index.html").read_text(encoding="utf-8")
    assert (
        '<html lang="zh-Hans">' in html
        and "<math" in html
        and "$" not in re.sub(r"<[^>]+>", "", re.sub(r"<(code|pre)>.*?</\1>", "", html, flags=re.S))
    )
    assert html.count("<fieldset disabled>") == 5
    assert (
        html.count('class="check pass"') == 7 and html.count("<svg") == 7
    )  # 3 charts drawn wide and compact, 1 graph
    assert "https://whylab.example.org/zh/topics/tiny-demo#experiment-sine" in html
    assert "生成本副本时测量一次" in html  # the timing experiment says when it was measured
    assert "<code>3 个节点有输入</code>" in html  # a check value with words, in Chinese
    assert 'data-live="off"' in html and "data-fragment" not in html
    # The checks fold behind their line here too; a control run needs the live server.
    assert html.count("data-checks-summary") == 6 and " open data-checks-summary" not in html
    assert "2 项验证中 2 项通过" in html and 'class="break-it"' not in html


def test_home_pages_have_cards_and_tag_pages_without_search(site):
    html = (site / "en" / "index.html").read_text(encoding="utf-8")
    assert 'class="card"' in html and 'role="search"' not in html
    assert 'href="../en/tags/signals/index.html"' in html
    tag_page = (site / "en" / "tags" / "signals" / "index.html").read_text(encoding="utf-8")
    assert 'aria-current="true">Signals<' in tag_page
