"""The explorer in a real browser (headless Debian chromium through Playwright).

The app runs under uvicorn on a free loopback port with whylab's own topics.
One browser serves the whole session; every page records console errors and
uncaught exceptions, and a test fails if any appear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

WAVE = "wave-superposition"
# Predicates are functions, not expressions: evaluating a string would need eval,
# which the explorer's Content-Security-Policy forbids.
FIRST_CARD_IS = "(slug) => document.querySelector('.card')?.dataset.slug === slug"


def open_page(browser, **context_options):
    context = browser.new_context(**{"locale": "en-US", **context_options})
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    return context, page, problems


PHONE = {"width": 390, "height": 844}
LANG_AND_VIEWPORT = [("en", None), ("zh", PHONE)]
FRAGMENT_URL = re.compile(r"/experiments/superposition/result")


def open_in(browser, viewport, **options):
    if viewport is not None:
        options["viewport"] = viewport
    return open_page(browser, **options)


@pytest.fixture
def page(browser) -> Iterator:
    context, page, problems = open_page(browser)
    yield page
    context.close()
    assert problems == [], problems


def test_home_renders_every_card_in_both_languages(page, base_url, registry):
    for lang in ("en", "zh"):
        page.goto(f"{base_url}/{lang}/")
        cards = page.locator(".card")
        assert cards.count() == len(registry)
        titles = page.locator(".card-title").all_inner_texts()
        assert titles == [t.meta[lang].title for t in registry]
        assert page.locator("html").get_attribute("lang").startswith(lang)
        other = "zh" if lang == "en" else "en"
        first = next(iter(registry))
        assert page.locator(f'.card-other a[href="/{other}/topics/{first.slug}"]').count() == 1


def test_live_search_in_english_and_chinese_and_the_empty_state(page, base_url):
    page.goto(f"{base_url}/en/")
    box = page.get_by_label("Search topics")
    box.fill("interference")
    page.wait_for_url(re.compile(r"q=interference"))
    page.wait_for_function("() => document.querySelectorAll('.card').length === 1")
    assert page.locator(".card").get_attribute("data-slug") == WAVE
    assert page.locator("[data-cards-status]").inner_text() == "Topics matching “interference”"
    box.fill("蝶形")
    page.wait_for_function(FIRST_CARD_IS, arg="fft")
    box.fill("zebrafish")
    empty = page.locator(".empty-state")
    empty.wait_for()
    assert "zebrafish" in empty.inner_text() and "Try another keyword" in empty.inner_text()
    assert empty.locator("a").count() >= 2
    page.goto(f"{base_url}/zh/")
    page.get_by_label("搜索主题").fill("superposition")
    page.wait_for_function(FIRST_CARD_IS, arg=WAVE)
    assert "波的叠加" in page.locator(".card-title").first.inner_text()


def test_tag_filter_is_live(page, base_url, registry):
    page.goto(f"{base_url}/en/")
    tag = next(iter(registry)).tags[0]
    page.locator(".tag-filter summary").click()  # the tags are folded below the search box
    page.locator(f'.tag-filter a[data-tag="{tag.key}"]').click()
    page.wait_for_url(re.compile(f"tag={tag.key}"))
    expected = [t.slug for t in registry if tag.key in {x.key for x in t.tags}]
    page.wait_for_function(f"() => document.querySelectorAll('.card').length === {len(expected)}")
    assert page.locator(f'.tag-filter a[data-tag="{tag.key}"]').get_attribute("aria-current")


def test_math_renders_as_mathml_with_no_raw_dollars(page, base_url):
    page.goto(f"{base_url}/en/topics/{WAVE}")
    maths = page.locator(".prose math")
    assert maths.count() > 5
    box = maths.first.bounding_box()
    assert box is not None and box["width"] > 0 and box["height"] > 0
    prose_text = page.evaluate(
        """() => Array.from(document.querySelectorAll('.prose')).map(p => {
            const copy = p.cloneNode(true);
            copy.querySelectorAll('code, pre, math').forEach(e => e.remove());
            return copy.textContent; }).join(' ')"""
    )
    assert "$" not in prose_text


# Every drawn series of the superposition chart, joined: a change of φ moves the second wave
# and the sum (the first wave stays, and the axes may keep their range).
CHART_PATHS_JS = (
    "Array.from(document.querySelectorAll("
    "'#experiment-superposition-result svg.chart path.series'))"
    ".map((p) => p.getAttribute('d')).join(' | ')"
)


def chart_path(page) -> str:
    return page.evaluate(f"() => {CHART_PATHS_JS}")


def test_changing_a_parameter_reruns_updates_chart_and_url_and_reload_restores(page, base_url):
    page.goto(f"{base_url}/en/topics/{WAVE}")
    before = chart_path(page)
    phase = page.locator("#experiment-superposition-phase")
    assert phase.input_value() == "2.0"
    phase.fill("3.14")
    phase.press("Enter")
    page.wait_for_url(re.compile(r"superposition\.phase=3\.14"))
    page.wait_for_function(
        "() => document.querySelector('#experiment-superposition-result .run-meta')"
        ".textContent.includes('3.14')"
    )
    after = chart_path(page)
    assert after != before
    status = page.locator("#experiment-superposition [data-status]").inner_text()
    assert re.fullmatch(r"Updated: (\d+) of \1 checks passed\.", status), status
    assert "superposition.seed=" in page.url  # the permalink state includes the seed
    switch = page.locator("[data-lang-switch]")
    assert "superposition.phase=3.14" in switch.get_attribute("href")
    page.reload()
    assert page.locator("#experiment-superposition-phase").input_value() == "3.14"
    assert chart_path(page) == after
    switch.click()
    page.wait_for_url(re.compile(rf"/zh/topics/{WAVE}\?.*superposition\.phase=3\.14"))
    assert page.locator("#experiment-superposition-phase").input_value() == "3.14"


def server_message(base_url: str, lang: str, **params: str) -> str:
    """The 422 message the server gives for these parameters (its result fragment)."""
    import httpx

    fragment = httpx.get(
        f"{base_url}/{lang}/topics/{WAVE}/experiments/superposition/result", params=params
    )
    assert fragment.status_code == 422
    return re.search(r"data-param-error><strong>[^<]*</strong> (.*?)</p>", fragment.text).group(1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_out_of_range_input_is_caught_in_the_page_language_with_the_servers_words(
    browser, base_url, lang
):
    # The browser speaks German: any message it wrote itself would show up here.
    context, page, problems = open_page(browser, locale="de-DE")
    page.goto(f"{base_url}/{lang}/topics/{WAVE}")
    before = chart_path(page)
    phase = page.locator("#experiment-superposition-phase")
    phase.fill("9")
    phase.press("Enter")
    status = page.locator("#experiment-superposition [data-status]")
    page.wait_for_function(
        "() => document.querySelector('#experiment-superposition [data-status]').textContent"
    )
    expected = server_message(base_url, lang, phase="9")
    assert status.inner_text() == expected
    assert "6.283185307" in expected and "9" in expected  # names the bound and the value
    assert page.locator("#experiment-superposition-phase-error").inner_text() == expected
    assert phase.get_attribute("aria-invalid") == "true"
    assert "experiment-superposition-phase-error" in phase.get_attribute("aria-describedby")
    assert "superposition.phase=9" not in page.url and chart_path(page) == before
    # A good value clears the mark and runs.
    phase.fill("1.25")
    phase.press("Enter")
    page.wait_for_url(re.compile(r"superposition\.phase=1\.25"))
    assert page.locator("#experiment-superposition-phase-error").count() == 0
    assert phase.get_attribute("aria-invalid") is None
    context.close()
    assert problems == []


def test_int_fields_want_whole_numbers_but_floats_may_fall_between_steps(page, base_url):
    page.goto(f"{base_url}/en/topics/{WAVE}")
    samples = page.locator("#experiment-superposition-samples")
    samples.fill("600.5")
    samples.press("Tab")  # judged on leaving the field
    error = page.locator("#experiment-superposition-samples-error")
    error.wait_for()
    assert error.inner_text() == server_message(base_url, "en", samples="600.5")
    samples.fill("600")
    error.wait_for(state="detached")
    # The phase steps by 0.01, but the server takes any value within its bounds.
    page.locator("#experiment-superposition-phase").fill("3.14159")
    page.locator("#experiment-superposition-phase").press("Enter")
    page.wait_for_url(re.compile(r"superposition\.phase=3\.14159"))
    page.wait_for_function(
        "() => document.querySelector('#experiment-superposition-result .run-meta')"
        ".textContent.includes('3.14159')"
    )


def test_works_without_javascript(browser, base_url):
    context, page, problems = open_page(browser, java_script_enabled=False)
    page.goto(f"{base_url}/en/topics/{WAVE}")
    page.locator("#experiment-superposition-phase").fill("1.5")
    page.locator("#experiment-superposition .experiment-form button[type=submit]").click()
    page.wait_for_url(re.compile(r"superposition\.phase=1\.5.*#experiment-superposition"))
    assert "1.5" in page.locator("#experiment-superposition-result .run-meta").inner_text()
    context.close()
    assert problems == []


def test_without_javascript_a_bad_value_gets_the_servers_message_in_the_page_language(
    browser, base_url
):
    context, page, problems = open_page(browser, java_script_enabled=False, locale="de-DE")
    page.goto(f"{base_url}/zh/topics/{WAVE}")
    page.locator("#experiment-superposition-phase").fill("9")
    with page.expect_response(re.compile(r"superposition\.phase=9")) as answer:
        page.locator("#experiment-superposition .experiment-form button[type=submit]").click()
    assert answer.value.status == 422
    expected = server_message(base_url, "zh", phase="9")
    assert "必须" in expected
    assert page.locator("#experiment-superposition-phase-error").inner_text() == expected
    context.close()
    # Chromium logs every 4xx document load; that 422 is the answer we asked for.
    assert [p for p in problems if "status of 422" not in p] == []


def test_dark_theme_follows_the_system(browser, base_url):
    colours = {}
    for scheme in ("light", "dark"):
        context, page, problems = open_page(browser, color_scheme=scheme)
        page.goto(f"{base_url}/zh/topics/{WAVE}")
        colours[scheme] = page.evaluate(
            "[getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.body).color,"
            " getComputedStyle(document.querySelector('svg.chart text')).fill]"
        )
        context.close()
        assert problems == []
    assert colours["light"][0] == "rgb(251, 250, 247)"
    assert colours["dark"][0] == "rgb(18, 20, 24)"
    assert colours["light"][2] != colours["dark"][2]  # chart text follows the theme


def test_keyboard_skip_link_and_phone_layout(browser, base_url):
    context, page, problems = open_page(browser, viewport={"width": 390, "height": 844})
    page.goto(f"{base_url}/en/topics/{WAVE}")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.url.endswith("#article")  # past the contents, to the article
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0  # wide charts scroll inside their own box, not the page
    context.close()
    assert problems == []


READABILITY = """() => {
    const visible = (el) => el.getClientRects().length > 0
        && getComputedStyle(el).display !== 'none';
    const small = [];
    for (const svg of document.querySelectorAll('.figure svg')) {
        if (!visible(svg)) continue;
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        for (const text of svg.querySelectorAll('text')) {
            const size = parseFloat(getComputedStyle(text).fontSize) * scale;
            if (size < 10.99) small.push([svg.getAttribute('class'), text.textContent, size]);
        }
    }
    const unreachable = [];
    for (const el of document.querySelectorAll('main *')) {
        const style = getComputedStyle(el);
        const scrolls = ['auto', 'scroll'].includes(style.overflowX)
            && el.scrollWidth > el.clientWidth + 1;
        if (scrolls && el.tabIndex < 0 && !el.querySelector('a, button, input, select, summary'))
            unreachable.push(el.className);
    }
    return {small, unreachable, overflow: document.documentElement.scrollWidth - innerWidth};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("slug", ["fft", "strided-tensors", "dispatcher"])
def test_on_a_phone_figures_fit_text_stays_readable_and_scroll_boxes_are_reachable(
    browser, base_url, lang, slug
):
    context, page, problems = open_page(browser, viewport=PHONE)
    page.goto(f"{base_url}/{lang}/topics/{slug}")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    found = page.evaluate(READABILITY)
    assert found["small"] == [], found["small"][:5]
    assert found["unreachable"] == [], found["unreachable"]
    assert found["overflow"] <= 0
    for svg in page.locator("svg.chart.compact").all()[:3]:
        box = svg.bounding_box()  # charts fit the width: no sideways scrolling
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    context.close()
    assert problems == []


def luminance(rgb: str) -> float:
    channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted([luminance(a), luminance(b)], reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_marks_numbers_and_input_borders(browser, base_url, scheme, lang, viewport):
    context, page, problems = open_in(browser, viewport, color_scheme=scheme)
    page.goto(f"{base_url}/{lang}/topics/fft")
    # Each check's mark sits inside its row, not hanging off to the left (the checks fold
    # behind their summary line: opened, so that the rows are laid out).
    page.evaluate("document.querySelectorAll('details.checks-summary').forEach(d => d.open = true)")
    offsets = page.evaluate(
        """() => Array.from(document.querySelectorAll('.check')).map(li =>
            li.querySelector('.mark').getBoundingClientRect().left
            - li.getBoundingClientRect().left)"""
    )
    assert offsets and all(-0.5 <= x <= 2 for x in offsets), offsets
    # Numbers line up on the right.
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    aligns = page.evaluate(
        "Array.from(document.querySelectorAll('td.num')).map(td => getComputedStyle(td).textAlign)"
    )
    assert aligns and set(aligns) == {"right"}
    # Field borders stand out from the surface (WCAG 1.4.11: 3:1).
    field = page.locator("#experiment-fft-vs-dft-log2n")
    border, surface = field.evaluate(
        "(el) => [getComputedStyle(el).borderTopColor,"
        " getComputedStyle(el.closest('.block')).backgroundColor]"
    )
    assert contrast(border, surface) >= 3.0, (border, surface)
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_enter_runs_once_and_back_undoes_the_change(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/{WAVE}")
    runs: list[str] = []
    page.on("request", lambda r: runs.append(r.url) if FRAGMENT_URL.search(r.url) else None)
    before = chart_path(page)
    phase = page.locator("#experiment-superposition-phase")
    phase.fill("")
    phase.press_sequentially("1.5", delay=120)  # pauses between keys start nothing
    page.wait_for_timeout(500)
    assert runs == []
    phase.press("Enter")
    page.wait_for_url(re.compile(r"superposition\.phase=1\.5"))
    page.wait_for_function(
        f"(before) => {CHART_PATHS_JS} !== before",
        arg=before,
    )
    page.wait_for_timeout(300)
    assert len(runs) == 1, runs
    after = chart_path(page)
    page.go_back()
    page.wait_for_function(
        f"(before) => {CHART_PATHS_JS} === before",
        arg=before,
    )
    assert phase.input_value() == "2.0" and "phase=1.5" not in page.url
    page.go_forward()
    page.wait_for_function(
        f"(after) => {CHART_PATHS_JS} === after",
        arg=after,
    )
    assert phase.input_value() == "1.5"
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_a_field_is_judged_on_leaving_it_not_per_keystroke(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/fft")
    field = page.locator("#experiment-cost-growth-max_log2n")  # bounds 14..16
    error = page.locator("#experiment-cost-growth-max_log2n-error")
    field.fill("")
    field.press_sequentially("14", delay=150)  # "1" alone is out of range: no complaint yet
    assert error.count() == 0
    field.press("Tab")
    assert error.count() == 0 and field.get_attribute("aria-invalid") is None
    field.fill("17")
    assert error.count() == 0
    field.press("Tab")
    error.wait_for()
    assert "17" in error.inner_text() and "16" in error.inner_text()
    field.fill("15")  # typing a good value clears the mark at once
    error.wait_for(state="detached")
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_a_result_is_marked_stale_while_running_and_after_an_error(
    browser, base_url, lang, viewport
):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/{WAVE}")
    note = page.locator("#experiment-superposition [data-stale-note]")
    result = page.locator("#experiment-superposition-result")
    assert note.is_hidden()
    held = []  # the request waits here until the test lets it through
    page.route(FRAGMENT_URL, lambda route: held.append(route))
    phase = page.locator("#experiment-superposition-phase")
    phase.fill("1.75")
    phase.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#experiment-superposition-result')"
        ".classList.contains('stale')"
    )
    assert note.is_visible() and note.inner_text()
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_function(
        "() => !document.querySelector('#experiment-superposition-result')"
        ".classList.contains('stale')"
    )
    assert note.is_hidden()
    page.unroute(FRAGMENT_URL)
    busy = '<p class="run-error" role="alert">busy</p>'
    page.route(FRAGMENT_URL, lambda route: route.fulfill(status=503, body=busy))
    shown = chart_path(page)
    phase.fill("1.5")
    phase.press("Enter")
    page.locator("#experiment-superposition [data-problem] .run-error").wait_for()
    assert "stale" in result.get_attribute("class") and note.is_visible()
    assert chart_path(page) == shown  # the old result stays, marked
    context.close()
    # Chromium logs the 503 we asked for.
    assert [p for p in problems if "status of 503" not in p] == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_a_bad_value_in_a_shared_link_is_shown_at_its_field(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/{WAVE}?superposition.phase=9")
    error = page.locator("#experiment-superposition-phase-error")
    assert error.inner_text() == server_message(base_url, lang, phase="9")
    assert page.locator("h1").inner_text()  # the page, not a bare error
    assert page.locator("#experiment-phase-sweep-result svg.chart").count() >= 1
    context.close()
    assert [p for p in problems if "status of 422" not in p] == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_timing_experiments_wait_to_be_asked_then_show_progress_and_cancel(
    browser, base_url, lang, viewport
):
    words = {
        "en": ("press Measure", "live measurement on this server"),
        "zh": ("请点击", "实时测量"),
    }
    prompt, measured = words[lang]
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/fft")
    result = page.locator("#experiment-cost-growth-result")
    assert prompt in result.inner_text()
    progress = page.locator("#experiment-cost-growth [data-progress]")
    assert progress.is_hidden()
    page.locator("#experiment-cost-growth-max_log2n").fill("14")
    page.locator("#experiment-cost-growth-rounds").fill("1")
    page.locator("#experiment-cost-growth button[type=submit]").click()
    progress.wait_for(state="visible")
    assert progress.locator("[data-progress-text]").inner_text()
    page.wait_for_function(
        "(words) => document.querySelector('#experiment-cost-growth-result').textContent"
        ".includes(words)",
        arg=measured,
        timeout=60_000,
    )
    assert progress.is_hidden() and "cost-growth.rounds=1" in page.url
    assert "UTC" in result.inner_text()
    # Another measurement, cancelled at once.
    page.locator("#experiment-cost-growth-rounds").fill("2")
    page.locator("#experiment-cost-growth button[type=submit]").click()
    progress.wait_for(state="visible")
    assert progress.locator("[data-cancel]").is_visible()  # this reader queued it
    progress.locator("[data-cancel]").click()
    status = page.locator("#experiment-cost-growth [data-status]")
    page.wait_for_function(
        "(text) => document.querySelector('#experiment-cost-growth [data-status]')"
        ".textContent === text",
        arg=progress.get_attribute("data-cancelled"),
    )
    assert progress.is_hidden() and status.inner_text()
    context.close()
    assert problems == []


def test_a_measurement_queued_by_another_reader_shows_no_cancel_button(browser, base_url):
    # Issue #26: the server lets only the client who queued a measurement cancel it, and
    # the page showed the button to every reader (who got 403). Another address queues two
    # runs; the second waits behind the first while this reader opens its page.
    import httpx

    queue = "/api/topics/fft/experiments/cost-growth/timing-runs"
    other = httpx.Client(
        base_url=base_url, transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=60
    )
    with other:
        held = other.post(queue, params={"max_log2n": "14", "rounds": "3"}).json()
        theirs = other.post(queue, params={"max_log2n": "14", "rounds": "5"}).json()
        try:
            context, page, problems = open_in(browser, None)
            polled = f"/api/timing-runs/{theirs['id']}"
            with page.expect_response(lambda answer: polled in answer.url) as first:
                page.goto(f"{base_url}/en/topics/fft?cost-growth.max_log2n=14&cost-growth.rounds=5")
            assert first.value.json()["yours"] is False
            # The script polls again only after it has shown the state of the first poll.
            with page.expect_response(lambda answer: polled in answer.url):
                pass
            progress = page.locator("#experiment-cost-growth [data-progress]")
            assert progress.get_attribute("data-run-id") == theirs["id"]
            assert progress.is_visible() and progress.locator("[data-cancel]").is_hidden()
            context.close()
        finally:
            for run in (theirs, held):
                other.delete(f"/api/timing-runs/{run['id']}")
    assert problems == []


@pytest.mark.parametrize(
    "lang,viewport", [("en", None), ("zh", None), ("en", PHONE), ("zh", PHONE)]
)
def test_contents_anchors_and_neighbour_links(browser, base_url, registry, lang, viewport):
    context, page, problems = open_in(browser, viewport or {"width": 1400, "height": 900})
    topics = list(registry)
    middle = topics[1]
    page.goto(f"{base_url}/{lang}/topics/{middle.slug}")
    nav = page.get_by_role("navigation", name={"en": "Contents", "zh": "目录"}[lang])
    assert nav.count() == 1
    links = nav.locator("a")
    assert links.count() >= 5
    # Every entry points at a heading that exists and has its own visible # link.
    for href in links.evaluate_all("(as) => as.map(a => a.getAttribute('href'))"):
        target = page.locator(f"[id='{href[1:]}']")
        assert target.count() == 1, href
        assert page.locator(f"a.heading-anchor[href='{href}']").count() == 1, href
    headings = page.locator(".prose h2, .prose h3, .block h2")
    assert headings.count() == page.locator("a.heading-anchor").count()
    details = nav.locator("details")
    if viewport is PHONE:
        assert details.get_attribute("open") is None  # folded on a phone
        nav.locator("summary").click()
        assert links.nth(2).is_visible()
        links.nth(2).click()
        assert details.get_attribute("open") is None
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    else:
        assert links.first.is_visible()
        page.mouse.wheel(0, 5000)
        page.wait_for_timeout(300)
        box = nav.bounding_box()
        assert box is not None and 0 <= box["y"] < 100  # sticky beside the article
        links.nth(2).click()
    target_id = links.nth(2).get_attribute("href")[1:]
    page.wait_for_url(re.compile(re.escape(target_id) + "$") if lang == "en" else re.compile("#"))
    top = page.locator(f"[id='{target_id}']").bounding_box()["y"]
    assert -2 <= top < 120
    pager = page.locator(".pager")
    assert pager.locator("a[rel=prev]").get_attribute("href") == f"/{lang}/topics/{topics[0].slug}"
    assert pager.locator("a[rel=next]").get_attribute("href") == f"/{lang}/topics/{topics[2].slug}"
    assert topics[2].meta[lang].title in pager.locator("a[rel=next]").inner_text()
    page.locator(".back-to-top a").click()
    page.wait_for_function("() => document.querySelector('main').getBoundingClientRect().top >= -1")
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_search_as_you_type_ranks_completes_highlights_and_empties(
    browser, base_url, lang, viewport
):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/")
    box = page.locator("#search-q")
    # An unfinished word: the topic whose title has it outranks the pages that only say it
    # in their prose ("autog" no longer serves: two titles say autograd since
    # matmul-end-to-end came).
    box.press_sequentially("dispatc", delay=30)
    page.wait_for_function(FIRST_CARD_IS, arg="dispatcher")
    box.fill("transp")
    page.wait_for_function(FIRST_CARD_IS, arg="strided-tensors")
    query = {"en": "butterfly", "zh": "蝶形"}[lang]
    box.fill(query)
    page.wait_for_function(FIRST_CARD_IS, arg="fft")
    marks = page.locator(".card-snippet mark").all_inner_texts()
    assert marks and all(m.lower().startswith(query[:6]) for m in marks), marks
    box.fill("zebrafish")
    page.locator(".empty-state").wait_for()
    assert page.locator("[data-cards] h2").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_math_is_set_in_the_served_math_font(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    fonts: list[tuple[str, int]] = []
    page.on("response", lambda r: fonts.append((r.url, r.status)) if "/fonts/" in r.url else None)
    page.goto(f"{base_url}/{lang}/topics/fft")
    loaded = page.evaluate(
        """async () => { await document.fonts.ready;
            return Array.from(document.fonts).filter(f => f.family.includes('Noto Sans Math'))
                .map(f => f.status); }"""
    )
    assert loaded == ["loaded"]
    assert fonts and all(url.startswith(base_url) and status == 200 for url, status in fonts)
    family = page.locator(".prose math").first.evaluate("(m) => getComputedStyle(m).fontFamily")
    assert family.startswith('"Noto Sans Math"')
    # With a MATH table the radical's bar joins its sign: the <msqrt> is taller than its
    # content alone and a display fraction is taller than one line of text.
    sizes = page.evaluate(
        """() => { const frac = document.querySelector('.math-display mfrac');
            const line = parseFloat(getComputedStyle(document.body).lineHeight);
            return frac ? [frac.getBoundingClientRect().height, line] : null; }"""
    )
    assert sizes is not None and sizes[0] > sizes[1]
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_not_found_speaks_the_page_language(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    response = page.goto(f"{base_url}/{lang}/topics/no-such-topic")
    assert response.status == 404
    title = {"en": "Page not found", "zh": "找不到这个页面"}[lang]
    assert page.locator("h1").inner_text() == title
    assert "Something went wrong" not in page.content()
    context.close()
    assert [p for p in problems if "status of 404" not in p] == []


@pytest.mark.parametrize("lang,viewport", [("en", None), ("zh", None), ("en", PHONE)])
def test_home_cards_are_the_question_and_two_sentences_aligned(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport or {"width": 1280, "height": 900})
    page.goto(f"{base_url}/{lang}/")
    rows = page.evaluate(
        """() => Array.from(document.querySelectorAll('.card')).map(card => {
            const box = card.getBoundingClientRect();
            const other = card.querySelector('.card-other').getBoundingClientRect();
            const summary = card.querySelector('.card-summary').textContent;
            return [Math.round(box.top), Math.round(box.bottom - other.bottom), summary]; })"""
    )
    ends = re.compile(r"[.!?](?=\s|$)|[。！？]")
    for _, gap, summary in rows:
        assert 1 <= len(ends.findall(summary)) <= 2, summary
        assert gap < 40  # the other-language link sits at the card's foot
    by_row: dict[int, set[int]] = {}
    for top, gap, _ in rows:
        by_row.setdefault(top, set()).add(gap)
    assert all(len(gaps) == 1 for gaps in by_row.values()), by_row  # aligned across a row
    context.close()
    assert problems == []


def test_printing_hides_forms_and_expands_data_tables(browser, base_url):
    context, page, problems = open_page(browser)
    page.goto(f"{base_url}/zh/topics/{WAVE}")
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.locator(".experiment-form").first.is_hidden()
    assert page.locator("button").first.is_hidden() and page.locator(".toc").is_hidden()
    assert page.locator("details.data-table table").first.is_visible()
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    page.emulate_media(media="screen")
    assert page.locator("details.data-table").first.get_attribute("open") is None
    context.close()
    assert problems == []


AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"


def axe_violations(page) -> list[str]:
    """What axe-core (WCAG 2.x A and AA, and best practices) finds on the loaded page."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => {
            const report = await axe.run(document, {resultTypes: ['violations']});
            return report.violations.map(v => v.id + ': ' + v.nodes.slice(0, 3)
                .map(n => n.target.join(' ')).join(' | '));
        }"""
    )
    return found


# Desktop in both languages and both colour schemes; the phone's layout (reflowed tables,
# scrolling regions, touch targets) once per language, each in the other scheme: the colours
# are the desktop's, so the other two phone runs repeated what these six find (~35 s each).
@pytest.mark.parametrize(
    "lang,viewport,scheme",
    [
        ("en", None, "light"),
        ("en", None, "dark"),
        ("zh", None, "light"),
        ("zh", None, "dark"),
        ("en", PHONE, "light"),
        ("zh", PHONE, "dark"),
    ],
)
def test_axe_finds_nothing_on_home_and_every_topic(
    browser, base_url, registry, lang, viewport, scheme
):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm install --prefix tests/explorer/axe (as .ci/run does)")
    # bypass_csp: the page's policy (rightly) refuses the injected axe script.
    context, page, problems = open_in(browser, viewport, color_scheme=scheme, bypass_csp=True)
    found = {}
    for path in [f"/{lang}/", *(f"/{lang}/topics/{t.slug}" for t in registry)]:
        page.goto(base_url + path)
        violations = axe_violations(page)
        if violations:
            found[path] = violations
    context.close()
    assert found == {}
    assert problems == []


def test_axe_reports_a_planted_violation(browser, base_url):
    """The negative control of the test above: axe is really running and reporting."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm install --prefix tests/explorer/axe")
    context, page, problems = open_page(browser, bypass_csp=True)
    page.goto(f"{base_url}/en/")
    page.evaluate(
        """() => { const box = document.createElement('div');
            box.style.cssText = 'overflow-x:auto;width:50px';
            box.innerHTML = '<p style="width:400px;white-space:nowrap">wide text wide text</p>';
            document.querySelector('main').append(box);
            const img = document.createElement('img');
            img.src = '/static/favicon.svg';
            document.querySelector('main').append(img); }"""
    )
    found = " ".join(axe_violations(page))
    assert "image-alt" in found and "scrollable-region-focusable" in found, found
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_the_code_that_ran_can_be_shown_and_copied(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    page.goto(f"{base_url}/{lang}/topics/fft")
    details = page.locator("#experiment-fft-vs-dft details.source-code")
    code = details.locator("pre code")
    assert code.count() == 0  # not sent with the page
    details.locator("summary").click()
    code.wait_for()
    assert "def " in code.inner_text()
    button = details.locator("button[data-copy]")
    button.click()
    page.wait_for_function(
        "(text) => document.querySelector('#experiment-fft-vs-dft button[data-copy]')"
        ".textContent === text",
        arg=button.get_attribute("data-copied"),
    )
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == code.text_content()
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport", LANG_AND_VIEWPORT)
def test_chart_values_under_the_pointer_and_by_keyboard(browser, base_url, lang, viewport):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/{WAVE}")
    kind = "compact" if viewport is PHONE else "wide"
    chart = page.locator(f"#experiment-superposition-result svg.chart.{kind}").first
    readout = page.locator("#experiment-superposition-result [data-readout]").first
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.3)
    page.wait_for_function("(el) => el.textContent.includes('=')", arg=readout.element_handle())
    under_pointer = readout.inner_text()
    assert (
        page.locator(f"#experiment-superposition-result svg.chart.{kind} .readout-dot").count() == 1
    )
    # The keyboard reaches the same values: focus the chart, step with the arrows.
    chart.focus()
    chart.press("Home")
    first = readout.inner_text()
    chart.press("ArrowRight")
    second = readout.inner_text()
    assert first != second and "=" in first and "=" in second
    # The readout names the series and the axes as the data table does.
    header = page.locator("#experiment-superposition-result details.data-table th").first
    assert header.text_content().strip() in first
    assert under_pointer
    context.close()
    assert problems == []
