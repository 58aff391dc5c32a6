"""A result in a real browser: the figures first, the checks behind one line, and "Break it"
(a control run under a declared negative control), on a phone and a desktop, in both
languages, with and without the page script, and axe-core on what they show."""

from __future__ import annotations

import re

import pytest

from tests.explorer.test_browser import AXE, PHONE, axe_violations, open_in, open_page

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 800}
BLOCK = "#experiment-fft-vs-dft"
CONTROL = "twiddle-off-by-one"  # breaks five of fft-vs-dft's eight checks
SUMMARY = {"en": "8 of 8 checks passed", "zh": "8 项验证中 8 项通过"}
CONTROL_TITLE = {
    "en": re.compile(r"^Control run: .+ — not the real result$"),
    "zh": re.compile(r"^对照运行：.+——不是真实结果$"),
}
DONE = {
    "en": "Control run done: 5 of 5 declared checks failed.",
    "zh": "对照运行完成：声明的 5 项验证中 5 项未通过。",
}

# Where the block's first figure starts below the top of its result, with the checks
# folded and opened, and how tall their list is (unfolded, it stood before the figure).
LAYOUT = f"""() => {{
    const result = document.querySelector('{BLOCK}-result');
    const figure = result.querySelector('figure');
    const fold = result.querySelector('details.checks-summary');
    const top = (el) => el.getBoundingClientRect().top;
    const folded = top(figure) - top(result);
    fold.open = true;
    const opened = top(figure) - top(result);
    const list = fold.querySelector('ul.checks').offsetHeight;
    fold.open = false;
    return {{folded, opened, list}};
}}"""


def block_violations(page, selector: str) -> list[str]:
    """What axe-core finds inside one element (whole pages are the axe test's, in
    test_browser.py)."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async (selector) => {
            const report = await axe.run(document.querySelector(selector),
                                         {resultTypes: ['violations']});
            return report.violations.map(v => v.id + ': ' + v.nodes.slice(0, 3)
                .map(n => n.target.join(' ')).join(' | '));
        }""",
        selector,
    )


@pytest.mark.parametrize("lang,viewport", [("en", DESKTOP), ("zh", PHONE)])
def test_the_result_leads_its_checks_fold_behind_one_line_and_a_rerun_brings_its_own(
    browser, base_url, lang, viewport
):
    context, page, problems = open_in(browser, viewport)
    page.goto(f"{base_url}/{lang}/topics/fft")
    fold = page.locator(f"{BLOCK}-result details.checks-summary")
    summary = fold.locator(":scope > summary")
    assert summary.inner_text().strip() == "✓ " + SUMMARY[lang]
    checks = fold.locator("li.check")
    assert checks.count() == 8 and not checks.first.is_visible()
    layout = page.evaluate(LAYOUT)
    # Measured on this page with the checks listed first: 704 px (desktop), 1,404 px (phone).
    assert layout["folded"] < 400, layout
    assert layout["opened"] - layout["folded"] >= layout["list"], layout
    # The line opens by keyboard as by a tap, and shows every check.
    summary.focus()
    page.keyboard.press("Enter")
    assert fold.get_attribute("open") is not None and checks.first.is_visible()
    # A rerun's fragment brings its own line, folded again: at n = 1 the operation-count
    # checks are not applicable, which is no failure.
    field = page.locator(f"{BLOCK}-log2n")
    field.fill("0")
    field.press("Enter")
    page.wait_for_url(re.compile(r"fft-vs-dft\.log2n=0"))
    page.wait_for_function(f"() => document.querySelector('{BLOCK}-result .check.na') !== null")
    line = fold.locator(":scope > summary").inner_text()
    assert re.search({"en": r"of 8 checks passed, \d not applicable",
                      "zh": r"8 项验证中 \d 项通过，\d 项不适用"}[lang], line), line
    assert fold.get_attribute("open") is None
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang,viewport,scheme", [("en", DESKTOP, "light"), ("zh", PHONE, "dark")])
def test_break_it_shows_the_checks_a_control_turns_red_beside_the_real_result(
    browser, base_url, lang, viewport, scheme
):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm install --prefix tests/explorer/axe (as .ci/run does)")
    # bypass_csp: the page's policy (rightly) refuses the injected axe script.
    context, page, problems = open_in(browser, viewport, color_scheme=scheme, bypass_csp=True)
    page.goto(f"{base_url}/{lang}/topics/fft")
    url = page.url
    real = page.locator(f"{BLOCK}-result").inner_html()
    block = page.locator(BLOCK)
    block.locator("details.break-it > summary").click()
    block.locator("details.break-it select").select_option(CONTROL)
    block.locator("details.break-it button[type=submit]").click()
    run = block.locator(".control-run")
    run.wait_for()
    assert CONTROL_TITLE[lang].match(run.locator(".control-title").inner_text())
    assert run.get_attribute("data-control") == CONTROL
    fold = run.locator("details.checks-summary")
    assert fold.get_attribute("open") is not None  # the failures show at once
    failed = run.locator("li.check.fail")
    assert failed.count() == 5 and failed.first.is_visible()
    assert block.locator("details.break-it [data-control-status]").inner_text() == DONE[lang]
    # The real result, the address and the history are untouched.
    assert page.locator(f"{BLOCK}-result").inner_html() == real
    assert page.url == url
    summary = page.locator(f"{BLOCK}-result details.checks-summary > summary").inner_text()
    assert summary.strip() == "✓ " + SUMMARY[lang]
    # No figure id is shared between the control run and the real result.
    ids = page.evaluate("Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
    assert len(ids) == len(set(ids))
    # axe-core on the block with every fold open (a closed fold's content is not
    # rendered), and on the control run's own page.
    page.evaluate("document.querySelectorAll('details.checks-summary').forEach(d => d.open = true)")
    found = {"block": block_violations(page, BLOCK)}
    page.goto(f"{base_url}/{lang}/topics/fft/experiments/fft-vs-dft/control-run?control={CONTROL}")
    found["page"] = axe_violations(page)
    context.close()
    assert found == {"block": [], "page": []}
    assert problems == []


def test_without_javascript_break_it_opens_the_control_runs_page(browser, base_url):
    context, page, problems = open_page(browser, java_script_enabled=False)
    page.goto(f"{base_url}/en/topics/fft")
    block = page.locator(BLOCK)
    block.locator("details.break-it > summary").click()
    block.locator("details.break-it select").select_option(CONTROL)
    block.locator("details.break-it button[type=submit]").click()
    page.wait_for_url(re.compile(rf"/fft-vs-dft/control-run\?control={CONTROL}$"))
    assert CONTROL_TITLE["en"].match(page.locator("h1").inner_text())
    assert page.locator("li.check.fail").count() == 5
    page.get_by_role("link", name="Back to the real result").click()
    page.wait_for_url(re.compile(r"/en/topics/fft#experiment-fft-vs-dft$"))
    context.close()
    assert problems == []
