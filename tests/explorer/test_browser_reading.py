"""Reading a topic in a real browser: the contents, formulas and tables wider than a phone,
taps on charts, and the language switch keeping the reader's place."""

from __future__ import annotations

import re

import pytest

from tests.explorer.test_browser import CHART_PATHS_JS, PHONE, chart_path, open_in, open_page

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1100, "height": 900}

FORMULA_BOXES = """() => Array.from(document.querySelectorAll('.math-display')).map(box => ({
    overflows: box.scrollWidth > box.clientWidth + 1,
    tabindex: box.getAttribute('tabindex'),
    label: box.getAttribute('aria-label'),
    shadow: getComputedStyle(box).backgroundImage.includes('radial-gradient'),
}))"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_only_formulas_wider_than_a_phone_are_tab_stops_and_they_show_that_they_scroll(
    browser, base_url, lang
):
    context, page, problems = open_in(browser, PHONE)
    seen_wide = 0
    for slug in ("fft", "frank-wolfe", "symmetric-gaxpy"):
        page.goto(f"{base_url}/{lang}/topics/{slug}")
        boxes = page.evaluate(FORMULA_BOXES)
        assert boxes, slug
        for box in boxes:
            assert box["shadow"]
            if box["overflows"]:
                seen_wide += 1
                assert box["tabindex"] == "0" and box["label"], (slug, box)
            else:
                assert box["tabindex"] is None, (slug, box)
    assert seen_wide > 0  # the premise: some formula is wider than 390 px
    # On a wide screen the same formulas fit, and none is a tab stop.
    page.set_viewport_size({"width": 1400, "height": 900})
    page.wait_for_timeout(300)
    assert all(b["tabindex"] is None for b in page.evaluate(FORMULA_BOXES) if not b["overflows"])
    context.close()
    assert problems == []


TOC_TREE = """() => {
    const words = (t) => t.toLowerCase().match(/[\\p{L}\\p{N}_]+/gu)?.join(' ') ?? '';
    const nav = document.querySelector('nav.toc');
    const repeats = [];
    for (const nested of nav.querySelectorAll('li > ol > li > a')) {
        const parent = nested.closest('ol').closest('li').querySelector(':scope > a');
        if (words(parent.textContent) === words(nested.textContent))
            repeats.push(nested.textContent);
    }
    const hrefs = Array.from(nav.querySelectorAll('a')).map(a => a.getAttribute('href'));
    return {repeats, nested: nav.querySelectorAll('li > ol').length,
            unique: new Set(hrefs).size === hrefs.length};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_contents_are_nested_without_repeats_and_follow_the_reader(browser, base_url, lang):
    context, page, problems = open_in(browser, DESKTOP)
    for slug in ("autograd", "dispatcher", "benchmarking", "frank-wolfe"):
        page.goto(f"{base_url}/{lang}/topics/{slug}")
        tree = page.evaluate(TOC_TREE)
        assert tree["repeats"] == [] and tree["unique"], (slug, tree)
        assert tree["nested"] > 0, slug
    # Sticky beside the article at 1100 px too (it was from 1248 px only).
    nav = page.locator("nav.toc")
    page.mouse.wheel(0, 4000)
    page.wait_for_timeout(300)
    box = nav.bounding_box()
    assert box is not None and 0 <= box["y"] < 100
    current = page.locator("nav.toc a[aria-current='location']")
    assert current.count() == 1
    first_marked = current.get_attribute("href")
    page.mouse.wheel(0, 6000)
    page.wait_for_timeout(300)
    assert current.count() == 1 and current.get_attribute("href") != first_marked
    # The marked line is the last section whose top has passed the top fifth of the window.
    target = page.locator(f"[id='{current.get_attribute('href')[1:]}']")
    assert target.bounding_box()["y"] <= DESKTOP["height"] / 5
    context.close()
    assert problems == []


def test_skip_link_passes_the_contents(browser, base_url):
    context, page, problems = open_in(browser, DESKTOP)
    page.goto(f"{base_url}/en/topics/fft")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")  # the next stop is inside the article, not the contents
    inside = page.evaluate(
        "() => !!document.activeElement.closest('article')"
        " && !document.activeElement.closest('nav.toc')"
    )
    assert inside
    context.close()
    assert problems == []


GRID_TABLES = """() => Array.from(document.querySelectorAll('table.result-table')).map(t => ({
    grid: t.classList.contains('grid-table'),
    reflowed: t.classList.contains('reflow'),
    display: getComputedStyle(t).display,
    height: t.tBodies[0].getBoundingClientRect().height,  // the rows, not the caption
    fits: t.offsetWidth <= t.parentElement.clientWidth + 1,
    scrollBoxFocusable: t.parentElement.tabIndex === 0,
}))"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_matrices_stay_grids_and_only_tables_that_do_not_fit_are_reflowed(
    browser, base_url, lang
):
    context, page, problems = open_in(browser, PHONE)
    page.goto(f"{base_url}/{lang}/topics/band-gaxpy")
    tables = page.evaluate(GRID_TABLES)
    grids = [t for t in tables if t["grid"]]
    assert len(grids) >= 2
    for table in grids:
        # The 8x8 band matrix was 5,188 px of stacked cards; as a grid, 8 short rows.
        assert table["display"] == "table" and table["height"] < 400, table
        assert table["scrollBoxFocusable"]
    others = [t for t in tables if not t["grid"]]
    for table in others:
        # Kept as a table only where it fits; otherwise one card per row.
        assert table["reflowed"] or table["fits"], table
    assert any(not t["reflowed"] for t in others)  # a table that fits is no longer reflowed
    context.close()
    assert problems == []


def test_the_breadcrumb_home_link_is_one_line_in_chinese(browser, base_url):
    context, page, problems = open_in(browser, PHONE)
    page.goto(f"{base_url}/zh/topics/strided-tensors")
    lines = page.evaluate(
        "() => document.querySelector('.breadcrumb li a').getClientRects().length"
    )
    assert lines == 1
    context.close()
    assert problems == []


def test_a_tap_on_a_chart_shows_its_value(browser, base_url):
    context, page, problems = open_page(browser, viewport=PHONE, has_touch=True, is_mobile=True)
    page.goto(f"{base_url}/en/topics/wave-superposition")
    chart = page.locator("#experiment-superposition-result svg.chart.compact").first
    readout = page.locator("#experiment-superposition-result [data-readout]").first
    chart.scroll_into_view_if_needed()
    assert readout.inner_text() == ""
    box = chart.bounding_box()
    page.touchscreen.tap(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.3)
    page.wait_for_function("(el) => el.textContent.includes('=')", arg=readout.element_handle())
    context.close()
    assert problems == []


@pytest.mark.parametrize("start,other", [("en", "zh"), ("zh", "en")])
def test_switching_language_lands_on_the_same_section(browser, base_url, start, other):
    context, page, problems = open_in(browser, DESKTOP)
    page.goto(f"{base_url}/{start}/topics/fft#splitting-even-from-odd")
    page.locator("[data-lang-switch]").click()
    page.wait_for_function(f"() => location.pathname === '/{other}/topics/fft'")
    assert page.evaluate("location.hash") == "#splitting-even-from-odd"
    heading = page.locator("[id='splitting-even-from-odd']")
    assert heading.count() == 1
    assert -2 <= heading.bounding_box()["y"] < 120
    context.close()
    assert problems == []


def test_switching_language_after_following_a_contents_link_keeps_that_section(
    browser, base_url
):
    context, page, problems = open_in(browser, DESKTOP)
    page.goto(f"{base_url}/en/topics/fft")
    page.locator("nav.toc a[href='#counting-the-work']").click()
    page.wait_for_function("() => location.hash === '#counting-the-work'")
    page.locator("[data-lang-switch]").click()
    page.wait_for_function("() => location.pathname === '/zh/topics/fft'")
    assert page.evaluate("location.hash") == "#counting-the-work"
    context.close()
    assert problems == []


WATCH_NOTE = """() => { window.noteShown = false;
    const note = document.querySelector('#experiment-superposition [data-stale-note]');
    new MutationObserver(() => { if (!note.hidden) window.noteShown = true; })
        .observe(note, {attributes: true}); }"""


@pytest.mark.parametrize("lang,viewport", [("en", DESKTOP), ("zh", PHONE)])
def test_a_run_moves_nothing_and_a_slow_one_shows_it_is_working(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/wave-superposition")
    result = page.locator("#experiment-superposition-result")
    working = page.locator("#experiment-superposition .run-working")
    phase = page.locator("#experiment-superposition-phase")
    # A quick run (answered at once here, whatever the machine's load): no "outdated"
    # note at all.
    fragment = page.request.get(
        f"{base_url}/{lang}/topics/wave-superposition/experiments/superposition/result"
        "?phase=1.25"
    ).text()
    page.route(re.compile(r"/experiments/superposition/result"),
               lambda r: r.fulfill(status=200, body=fragment, content_type="text/html"))
    page.evaluate(WATCH_NOTE)
    phase.fill("1.25")
    phase.press("Enter")
    page.wait_for_url("**superposition.phase=1.25**")
    page.wait_for_function("() => !document.querySelector("
                           "'#experiment-superposition-result').classList.contains('stale')")
    page.wait_for_timeout(500)
    assert page.evaluate("window.noteShown") is False
    page.unroute(re.compile(r"/experiments/superposition/result"))
    # A slow one (held here): the note overlays the result, which does not move, and after
    # a second the bar and the seconds show; both go when the answer comes.
    top = result.bounding_box()["y"]
    held = []
    page.route(re.compile(r"/experiments/superposition/result"), lambda r: held.append(r))
    phase.fill("1.5")
    phase.press("Enter")
    page.locator("#experiment-superposition [data-stale-note]").wait_for(state="visible")
    assert result.bounding_box()["y"] == top
    working.wait_for(state="visible")
    page.wait_for_function("(el) => /\\d s$/.test(el.textContent)", arg=working.element_handle())
    held[0].continue_()
    working.wait_for(state="hidden")
    context.close()
    assert problems == []


def test_a_float_slides_with_its_box_and_a_resting_slider_reruns(browser, base_url):
    context, page, problems = open_in(browser, DESKTOP)
    page.goto(f"{base_url}/en/topics/wave-superposition")
    box = page.locator("#experiment-superposition-phase")
    slider = page.locator("[data-slider-for='experiment-superposition-phase']")
    assert slider.is_visible() and slider.get_attribute("aria-label")
    help_text = page.locator("#experiment-superposition-phase-help").inner_text()
    assert "2π ≈ 6.283185307" in help_text
    # Typing moves the slider; moving the slider writes the box and reruns once it rests.
    box.fill("3.14")
    assert abs(float(slider.input_value()) - 3.14) < 1e-9
    before = chart_path(page)
    slider.evaluate("(s) => { s.value = '1'; s.dispatchEvent(new Event('input')); }")
    assert box.input_value() == "1.00"
    page.wait_for_url("**superposition.phase=1.00**")
    page.wait_for_function("(d) => !document.querySelector("
                           "'#experiment-superposition-result').classList.contains('stale')"
                           f" && {CHART_PATHS_JS} !== d", arg=before)
    assert chart_path(page) != before  # the result was recomputed at φ = 1
    # Two decades or more slide on a log scale: the middle of the travel is the geometric mean.
    amplitude = page.locator("[data-slider-for='experiment-superposition-amplitude']")
    amplitude.evaluate("(s) => { s.value = '500'; s.dispatchEvent(new Event('input')); }")
    assert page.locator("#experiment-superposition-amplitude").input_value() == "1.00"
    context.close()
    assert problems == []

