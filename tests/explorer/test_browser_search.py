"""Searching from a topic page in a real browser: the header's box, the results that link to
the section that matched, and landing on that section; axe-core on both pages."""

from __future__ import annotations

import re

import pytest

from tests.explorer.test_browser import AXE, PHONE, axe_violations, open_in

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1100, "height": 900}
# A word said in one section of one topic (fft's "Counting the work"), searched from another
# topic's page; where it lands is asked of the server's own index below.
QUERIES = {"en": "butterflies", "zh": "蝶形运算"}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_search_from_a_topic_page_lands_on_the_section_that_matched(
    browser, base_url, registry, lang, viewport
):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm install --prefix tests/explorer/axe")
    query = QUERIES[lang]
    best = registry.search_index.search(query, lang)[0]
    assert best.section  # the premise: the word is in one section, so the hit names it
    context, page, problems = open_in(browser, viewport, bypass_csp=True)
    page.goto(f"{base_url}/{lang}/topics/autograd")
    box = page.locator("header #site-search-q")
    assert box.is_visible()
    # The box waits to be used: nothing has focus on arrival.
    assert page.evaluate("document.activeElement === document.body")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert axe_violations(page) == []

    box.fill(query)
    box.press("Enter")
    page.wait_for_url(re.compile(rf"/{lang}/\?q="))
    first = page.locator(".card").first
    assert first.get_attribute("data-slug") == best.slug
    link = first.locator(".card-section a")
    href = link.get_attribute("href")
    assert href == f"/{lang}/topics/{best.slug}#{best.section}"
    marks = first.locator(".card-snippet mark").all_inner_texts()
    assert marks and all(m.lower() == query.lower() for m in marks), marks
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert axe_violations(page) == []

    link.click()
    page.wait_for_url(re.compile(re.escape(href) + "$"))
    page.wait_for_timeout(300)
    # The section the hit named is one the page's contents list, and it is in view.
    assert page.locator(f"nav.toc a[href='#{best.section}']").count() == 1
    top = page.locator(f"[id='{best.section}']").bounding_box()["y"]
    assert 0 <= top < viewport["height"] / 2, top
    context.close()
    assert problems == []


def test_search_from_a_topic_page_works_without_javascript(browser, base_url, registry):
    best = registry.search_index.search(QUERIES["en"], "en")[0]
    context, page, problems = open_in(browser, PHONE, java_script_enabled=False)
    page.goto(f"{base_url}/en/topics/fft")
    page.locator("#site-search-q").fill(QUERIES["en"])
    page.locator("header form[role=search] button").click()
    page.wait_for_url(re.compile(r"/en/\?q=butterflies$"))
    href = page.locator(".card").first.locator(".card-section a").get_attribute("href")
    assert href == f"/en/topics/{best.slug}#{best.section}"
    context.close()
    assert problems == []
