"""Server-rendered pages: home, search, tags, topic pages, forms, permalinks, errors."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qsl, urlsplit

import pytest


def test_root_redirects_by_accept_language(client):
    for header, target in [
        ("zh-CN,zh;q=0.9,en;q=0.8", "/zh/"),
        ("en-US,en;q=0.9", "/en/"),
        ("fr-FR, zh-TW;q=0.5, en;q=0.4", "/zh/"),
        ("de", "/en/"),
        ("", "/en/"),
        ("en;q=0.1, zh;q=0.9", "/zh/"),
        ("garbage;q=x,,,", "/en/"),
    ]:
        response = client.get("/", headers={"accept-language": header}, follow_redirects=False)
        assert response.status_code == 307 and response.headers["location"] == target, header


def test_home_in_both_languages_has_the_invitation_search_tags_and_cards(client):
    en = client.get("/en/").text
    zh = client.get("/zh/").text
    assert '<html lang="en">' in en and '<html lang="zh-Hans">' in zh
    assert "Begin with a question." in en and "从一个问题开始。" in zh
    assert 'role="search"' in en and 'name="q"' in en
    for page, title, question, other in [
        (en, "Tiny demo", "Does a fixture topic exercise", 'href="/zh/topics/tiny-demo"'),
        (zh, "小型示例", "一个测试用的主题能覆盖", 'href="/en/topics/tiny-demo"'),
    ]:
        assert page.count('class="card"') == 1
        assert title in page and question in page and other in page
    assert 'href="/en/?tag=signals"' in en and ">信号<" in zh
    assert 'hreflang="zh-Hans" href="/zh/"' in en


def test_search_finds_topics_in_english_and_chinese(client):
    for lang, query in [
        ("en", "Parseval"),
        ("en", "正弦"),
        ("zh", "running mean"),
        ("zh", "帕塞瓦尔"),
    ]:
        page = client.get(f"/{lang}/", params={"q": query}).text
        assert 'class="card"' in page and 'data-slug="tiny-demo"' in page, (lang, query)
        # A snippet only from the page's own language, with the match marked.
        same_language = (lang == "zh") == bool(re.search(r"[\u4e00-\u9fff]", query))
        assert ('class="card-snippet"' in page) == same_language, (lang, query)
        if same_language:
            assert f"<mark>{query}</mark>" in page, (lang, query)


@pytest.mark.parametrize(
    "lang, query, section", [("en", "server", "Limits"), ("zh", "服务器", "限制")]
)
def test_search_results_link_to_the_section_that_matched_with_its_snippet(
    client, lang, query, section
):
    page = client.get(f"/{lang}/", params={"q": query}).text
    line = re.search(r'<p class="card-section">.*?</p>', page).group(0)
    assert f'href="/{lang}/topics/tiny-demo#limits">{section}</a>' in line
    snippet = re.search(r'<p class="card-snippet">.*?</p>', page).group(0)
    assert f"<mark>{query}</mark>" in snippet
    # The section exists on the page it links to, under that id.
    assert f'<h2 id="limits">{section}' in client.get(f"/{lang}/topics/tiny-demo").text


def test_every_page_but_home_searches_from_its_header_without_script(client):
    """Topic, source and error pages have a search box in the header whose form sends the
    query to the home page's results (a plain GET: no script needed); home and the page
    not found have their own box in the page, so one search landmark each."""
    header = re.compile(r'<header class="site-header">.*?</header>', re.S)
    for lang in ("en", "zh"):
        for path in (
            f"/{lang}/topics/tiny-demo",
            f"/{lang}/topics/tiny-demo/experiments/sine/source",
            f"/{lang}/topics/tiny-demo?sine.cycles=999999",  # a bad parameter: 422
        ):
            page = client.get(path).text
            form = re.search(r'<form class="search search-compact".*?</form>', page, re.S)
            assert form and form.group(0) in header.search(page).group(0), path
            assert f'action="/{lang}/" method="get"' in form.group(0)
            assert 'name="q"' in form.group(0) and "autofocus" not in page
            assert page.count('role="search"') == 1, path
        for path in (f"/{lang}/", f"/{lang}/topics/nope"):
            page = client.get(path).text
            assert page.count('role="search"') == 1, path
            assert "search-compact" not in page, path
    results = client.get("/en/", params={"q": "server"})  # what the header's form asks for
    assert results.status_code == 200 and 'data-slug="tiny-demo"' in results.text


def test_a_search_that_finds_nothing_shows_the_friendly_empty_state(client):
    page = client.get("/en/", params={"q": "quaternion"}).text
    assert 'class="empty-state"' in page and 'class="card"' not in page
    assert "No topic matches “quaternion”." in page
    assert "Try another keyword, or explore a different topic" in page
    assert 'href="/en/topics/tiny-demo"' in page
    zh = client.get("/zh/", params={"q": "鲸鱼"}).text
    assert "没有找到与“鲸鱼”相关的主题。" in zh
    assert "Topics matching" not in page and "相关的主题</h2>" not in zh  # no results heading


def test_tag_filter_works_from_the_query_string(client):
    assert 'data-slug="tiny-demo"' in client.get("/en/?tag=signals").text
    page = client.get("/en/?tag=signals").text
    assert 'aria-current="true">Signals<' in page
    unknown = client.get("/en/?tag=nothing-here").text
    assert 'data-slug="tiny-demo"' in unknown  # an unknown tag filters nothing


def test_cards_fragment_for_live_search(client):
    fragment = client.get("/zh/cards", params={"q": "sine"}).text
    assert "<html" not in fragment and 'data-slug="tiny-demo"' in fragment


def test_search_text_is_escaped_and_cut(client):
    page = client.get("/en/", params={"q": "<script>alert(1)</script>"}).text
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    long = client.get("/en/", params={"q": "x" * 500})
    assert long.status_code == 200 and "x" * 201 not in long.text


def test_topic_page_renders_question_prose_math_and_every_block(client):
    response = client.get("/en/topics/tiny-demo")
    page = response.text
    assert response.status_code == 200
    assert "<h1>Tiny demo</h1>" in page and "Does a fixture topic exercise" in page
    assert page.count("<math") == 5
    prose = "".join(
        re.findall(r'<div class="prose">(.*?)</div>\s*(?:<section|</article)', page, re.S)
    )
    assert "$" not in re.sub(r"<[^>]+>", "", prose)
    for block in ("experiment-sine", "experiment-mean", "diagram-graph", "experiment-clock"):
        assert f'id="{block}"' in page
    # two sine charts and the running mean, each wide and compact (phones), and the graph
    assert page.count("<svg") == 7 and page.count('<svg class="chart compact"') == 3
    assert page.count('class="check pass"') == 6  # the timing experiment (clock) waits to be asked
    assert "press Measure" in page
    assert "✓" in page and "measured" in page and "expected" in page
    assert 'id="diagram-graph"' in page and 'data-experiment="graph"' not in page  # no form
    assert "<details" in page and "Data table" in page and '<table class="reflow">' in page


def test_form_fields_are_labelled_typed_and_bounded(client):
    page = client.get("/zh/topics/tiny-demo").text
    form = re.search(r'<form class="experiment-form".*?</form>', page, re.S).group(0)
    assert 'method="get"' in form and 'action="/zh/topics/tiny-demo#experiment-sine"' in form
    assert '<label for="experiment-sine-amplitude">振幅 <span class="unit">(V)</span>' in form
    assert 'type="number" id="experiment-sine-amplitude" name="sine.amplitude"' in form
    assert 'min="0.1" max="10.0"' in form and 'step="0.1"' in form
    assert "峰值" in form and "范围 0.1 至 10" in form
    assert '<select id="experiment-sine-noise" name="sine.noise"' in form and ">高斯<" in form
    assert 'type="checkbox" id="experiment-sine-log_y"' in form


def test_chinese_pages_use_chinese_punctuation_around_interface_words(client):
    chinese = client.get("/zh/topics/tiny-demo").text
    assert "引擎：whylab" in chinese and "参数：振幅 = " in chinese
    assert "（范围 0.1 至 10）" in chinese and "，预期" in chinese and "数据表：" in chinese
    assert "(范围" not in chinese and "引擎:" not in chinese
    english = client.get("/en/topics/tiny-demo").text
    assert "Engine: whylab" in english and "(from 0.1 to 10)" in english
    assert "</code>, expected" in english


def test_check_values_with_words_show_in_the_page_language(client):
    english = client.get("/en/topics/tiny-demo").text
    chinese = client.get("/zh/topics/tiny-demo").text
    assert "<code>3 nodes with inputs</code>" in english and "<code>3 ops</code>" in english
    assert "<code>3 个节点有输入</code>" in chinese and "<code>3 个运算</code>" in chinese
    assert "nodes with inputs" not in chinese
    assert re.search(r"<td[^>]*>frequency</td>", english)  # a table cell
    assert re.search(r"<td[^>]*>频域</td>", chinese)


def test_submitting_the_form_by_get_reruns_with_those_parameters(client):
    page = client.get("/en/topics/tiny-demo", params={"sine.amplitude": "2", "sine.cycles": "5"})
    assert page.status_code == 200
    assert 'name="sine.amplitude" value="2.0"' in page.text
    assert "Amplitude = 2.0 V, Cycles = 5" in page.text
    noisy = client.get("/zh/topics/tiny-demo", params={"sine.noise": "gauss"}).text
    assert "噪声 = 高斯" in noisy and "sine.noise=gauss" in noisy  # label shown, value linked
    # the other forms carry this experiment's parameters along as hidden fields
    assert '<input type="hidden" name="sine.cycles" value="5">' in page.text


def test_bad_parameters_get_422_naming_the_bound_in_the_page_language(client):
    response = client.get("/en/topics/tiny-demo", params={"sine.amplitude": "50"})
    assert response.status_code == 422
    assert "Amplitude: must be ≤ 10 (got 50)" in response.text
    assert 'aria-invalid="true"' in response.text and 'value="50"' in response.text
    assert '<p class="field-error" id="experiment-sine-amplitude-error">' in response.text
    fragment = client.get("/zh/topics/tiny-demo/experiments/sine/result", params={"cycles": "0"})
    assert fragment.status_code == 422 and "周期数：必须 ≥ 1（当前值 0）" in fragment.text
    assert "未运行" in fragment.text
    whole = client.get("/zh/topics/tiny-demo/experiments/sine/result", params={"cycles": "2.5"})
    assert whole.status_code == 422 and "周期数：必须是整数" in whole.text
    choice = client.get("/en/topics/tiny-demo/experiments/sine/result", params={"noise": "pink"})
    assert choice.status_code == 422 and "must be one of" in choice.text
    unknown = client.get("/zh/topics/tiny-demo/experiments/sine/result", params={"bogus": "1"})
    assert unknown.status_code == 422 and "bogus：未知参数" in unknown.text


def test_number_fields_carry_the_servers_messages_for_the_page_script(client):
    """The script fills in {value}; the rest is worded exactly as the server's 422."""
    form = client.get("/zh/topics/tiny-demo").text
    field = re.search(r'<input type="number" id="experiment-sine-cycles".*?>', form, re.S).group(0)
    assert 'data-kind="int"' in field
    assert 'data-above="周期数：必须 ≤ 20（当前值 {value}）"' in field
    assert 'data-below="周期数：必须 ≥ 1（当前值 {value}）"' in field
    assert 'data-not-number="周期数：必须是整数"' in field
    answer = client.get("/zh/topics/tiny-demo/experiments/sine/result", params={"cycles": "21"})
    assert "周期数：必须 ≤ 20（当前值 21）" in answer.text
    assert re.search(r'<form class="experiment-form"[^>]* novalidate', form)


@pytest.mark.parametrize(
    "query",
    [{"utm_source": "twitter"}, {"fbclid": "IwAR0x"}, {"ref": "hn"}, {"nope.x": "1"},
     {"utm_source": "twitter", "sine.samples": "64"}],
)
def test_query_keys_for_no_experiment_of_the_page_are_ignored(client, query):
    """A shared link's tracking parameters do not turn the page into an error page, and
    they are not carried into the page's own links or its cache key."""
    clean = {k: v for k, v in query.items() if k.startswith("sine.")}
    client.get("/en/topics/tiny-demo", params=clean)  # computed once: both are then cached
    page = client.get("/en/topics/tiny-demo", params=query)
    assert page.status_code == 200
    assert page.text == client.get("/en/topics/tiny-demo", params=clean).text
    for key, value in query.items():
        if key not in clean:
            assert f"{key}={value}" not in page.text


def test_unknown_and_malformed_page_parameters_are_rejected(client):
    response = client.get("/en/topics/tiny-demo", params={"sine.bogus": "1"})
    assert response.status_code == 422 and "unknown parameter" in response.text
    fragment = client.get("/en/topics/tiny-demo/experiments/sine/result", params={"x": "1"})
    assert fragment.status_code == 422


def test_page_level_parameter_errors_are_worded_in_the_page_language(client):
    chinese = client.get("/zh/topics/tiny-demo", params={"sine.bogus": "x"})
    assert chinese.status_code == 422
    assert "bogus：未知参数" in chinese.text
    assert "unknown parameter" not in chinese.text
    too_many = {f"sine.p{i}": "1" for i in range(65)}  # the fixture app allows 64
    for lang, wording in [
        ("en", "Too many parameters (at most 64)."),
        ("zh", "参数过多（最多 64 个）。"),
    ]:
        page = client.get(f"/{lang}/topics/tiny-demo", params=too_many)
        assert page.status_code == 422 and wording in page.text
        fragment = client.get(f"/{lang}/topics/tiny-demo/experiments/sine/result", params=too_many)
        assert fragment.status_code == 422 and wording in fragment.text


def without_run_source(html: str) -> str:
    """A result block minus the "computed in ... s" / "from cache" note, whitespace-normalized."""
    html = re.sub(r'<span class="run-source">.*?</span>', "", html, flags=re.S)
    return " ".join(html.split())


def test_permalink_encodes_every_parameter_and_reproduces_the_result(client):
    fragment = client.get(
        "/en/topics/tiny-demo/experiments/sine/result",
        params={"amplitude": "3.3", "noise": "gauss", "seed": "42"},
    ).text
    href = unescape(re.search(r'<a class="permalink" href="([^"]+)"', fragment).group(1))
    parts = urlsplit(href)
    assert parts.path == "/en/topics/tiny-demo" and parts.fragment == "experiment-sine"
    assert dict(parse_qsl(parts.query)) == {
        "sine.amplitude": "3.3",
        "sine.cycles": "2",
        "sine.samples": "64",
        "sine.noise": "gauss",
        "sine.log_y": "false",
        "sine.seed": "42",
    }
    page = client.get(href).text
    block = re.search(
        r'<div class="result" id="experiment-sine-result">(.*?)</div>\s*</section>', page, re.S
    ).group(1)
    assert "Random seed = 42" in block
    assert without_run_source(block) == without_run_source(fragment)


def test_language_switch_and_alternates_keep_the_place(client):
    page = client.get("/en/topics/tiny-demo", params={"sine.cycles": "4"}).text
    assert 'data-lang-switch="zh">中文</a>' in page
    assert 'href="/zh/topics/tiny-demo?sine.cycles=4" hreflang="zh-Hans"' in page
    # The switch keeps the reader's parameters; the hreflang links name the canonical page
    # (search engines want alternates that are canonical: test_seo.py).
    assert '<link rel="alternate" hreflang="zh-Hans" href="/zh/topics/tiny-demo">' in page
    assert '<link rel="alternate" hreflang="x-default" href="/">' in page


def test_pages_are_accessible_by_construction(client):
    page = client.get("/en/topics/tiny-demo").text
    # On a topic page "skip to content" passes the contents too, to the article itself.
    assert '<a class="skip-link" href="#article">' in page and '<main id="main"' in page
    assert '<article class="topic" id="article" tabindex="-1">' in page
    assert page.index('id="article"') > page.index('class="toc"')
    home = client.get("/en/").text
    assert '<a class="skip-link" href="#main">' in home
    assert 'name="viewport"' in page
    ids = re.findall(r'<input[^>]* id="([^"]+)"', page) + re.findall(r'<select id="([^"]+)"', page)
    for element_id in ids:
        assert f'<label for="{element_id}">' in page, element_id
    assert all('role="img"' in svg for svg in re.findall(r"<svg[^>]*>", page))
    figures = page.count("<svg") - page.count('<svg class="chart compact"')  # drawn twice
    assert page.count('<details class="data-table"') == figures  # a table per figure


def test_no_third_party_resources_and_security_headers(client):
    response = client.get("/en/topics/tiny-demo")
    assert not re.search(r'(src|href)="(https?:)?//', response.text)
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    for asset in ("explorer.css", "explorer.js"):
        static = client.get(f"/static/{asset}")
        assert static.status_code == 200 and "http" not in static.text.replace("https://", "")


def test_not_found_pages(client):
    assert client.get("/fr/").status_code == 404
    assert client.get("/en/topics/nope").status_code == 404
    missing = client.get("/zh/topics/nope")
    assert missing.status_code == 404 and "这个页面不存在" in missing.text
    assert client.get("/en/topics/tiny-demo/experiments/nope/result").status_code == 404
    assert client.get("/en", follow_redirects=False).headers["location"] == "/en/"


def test_head_requests_are_answered_like_get_without_a_body(client):
    head = client.head("/zh/")
    get = client.get("/zh/")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert client.head("/en/topics/tiny-demo").status_code == 200
    assert client.head("/en/topics/nope").status_code == 404


def test_metrics_show_declared_labels_then_code_names_fresh_or_from_the_cache(client):
    # The clock experiment is never cached; a cached result (sine) comes back from JSON
    # with sorted keys. Both must read in declaration order.
    for _ in range(2):
        client.get("/api/topics/tiny-demo/experiments/clock", params={"n": "10"})  # measure
        html = client.get("/en/topics/tiny-demo/experiments/clock/result", params={"n": "10"}).text
        names = re.findall(r"<dt>([^<]+)</dt>", html)
        assert names == ["Time", "Time per iteration"], names  # declaration order
    for _ in range(2):  # fresh, then from the cache
        zh = client.get("/zh/topics/tiny-demo/experiments/sine/result", params={"cycles": "4"}).text
        assert re.findall(r"<dt>([^<]+)</dt>", zh) == ["信号能量", "峰值频点"]
        assert '<span class="unit">V²</span>' in zh and "energy" not in zh


def test_pages_are_compressed_when_the_client_accepts_gzip(client):
    plain = client.get("/en/topics/tiny-demo", headers={"accept-encoding": "identity"})
    packed = client.get("/en/topics/tiny-demo", headers={"accept-encoding": "gzip"})
    assert "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.text == plain.text  # httpx unpacks it
    assert int(packed.headers["content-length"]) < len(plain.content) / 2
    assert packed.headers["content-security-policy"]  # the guard's headers survive


def test_a_bad_value_from_a_shared_link_renders_the_page_with_the_error_at_the_field(client):
    for lang, words in [("en", "must be ≥"), ("zh", "必须 ≥")]:
        response = client.get(f"/{lang}/topics/tiny-demo", params={"sine.cycles": "0"})
        assert response.status_code == 422
        page = response.text
        assert "<h1>" in page and 'id="experiment-sine-cycles-error"' in page
        field_error = re.search(r'id="experiment-sine-cycles-error">([^<]*)<', page).group(1)
        assert words in field_error
        assert page.count(field_error) == 1  # said once, next to the field
        assert 'aria-invalid="true"' in page


def test_a_card_is_the_question_and_two_sentences():
    from whylab.explorer.web.render import card_summary

    assert card_summary("One. Two is numpy.fft here! Three? Four.") == "One. Two is numpy.fft here!"
    assert card_summary("第一句。第二句！第三句。") == "第一句。第二句！"
    assert card_summary("Only one") == "Only one"


def test_each_experiment_shows_the_source_of_the_function_that_ran(client):
    import inspect

    page = client.get("/zh/topics/tiny-demo").text
    registry = client.app.state.registry
    blocks = len(registry.get("tiny-demo").placements())
    assert page.count('<details class="source-code"') == blocks  # every block, diagrams too
    assert "查看实际运行的代码" in page and "def sine(" not in page  # fetched when asked for
    source = client.get("/zh/topics/tiny-demo/experiments/sine/source")
    assert source.status_code == 200
    sine = registry.get("tiny-demo").experiments["sine"].run
    lines, first = inspect.getsourcelines(sine)
    assert f"tiny_demo/experiments.py，第 {first} 行" in source.text
    assert "def sine(amplitude, cycles, samples, noise, log_y, seed):" in source.text
    assert client.get("/zh/topics/tiny-demo/experiments/nope/source").status_code == 404


CODE_NAME = re.compile(r"\b[A-Za-z]{2,}_[A-Za-z0-9_]{2,}\b|\b(?:True|False)\b")


def untranslated(page: str) -> list[str]:
    """Code names and True/False in what a zh page shows as metrics, table cells and
    diagram text (the words a reader sees; code and math are left alone)."""
    shown = re.findall(r"<dt>([^<]*)</dt>|<dd[^>]*>([^<]*)<|<td[^>]*>([^<]*)</td>", page)
    shown += [(t,) for t in re.findall(r"<text[^>]*>([^<]*)</text>", page)]
    return [text for group in shown for text in group if text and CODE_NAME.search(text)]


def test_a_chinese_page_shows_no_code_names_or_true_false(client):
    client.get("/api/topics/tiny-demo/experiments/clock")  # measured, so its metrics show
    page = client.get("/zh/topics/tiny-demo").text
    assert "<dt>" in page and "<td" in page and "<text" in page
    assert untranslated(page) == []
    planted = page.replace("<dt>信号能量</dt>", "<dt>closed_form_amplitude</dt>")
    assert untranslated(planted) == ["closed_form_amplitude"]  # the check can fail


def test_static_files_are_fingerprinted_and_kept_for_a_year(client):
    from whylab.explorer.web.fonts.subset import served_font
    from whylab.explorer.web.static_files import fingerprint

    page = client.get("/en/topics/tiny-demo").text
    for asset in ("explorer.css", "explorer.js", "favicon.svg"):
        url = f"/static/{asset}?v={fingerprint(asset)}"
        assert url in page
        assert client.get(url).headers["cache-control"] == "public, max-age=31536000, immutable"
        # Without the current fingerprint a browser must ask again (ETag), never keep it.
        for stale in (f"/static/{asset}", f"/static/{asset}?v=0000000000"):
            response = client.get(stale)
            assert response.status_code == 200 and response.headers["cache-control"] == "no-cache"
            assert response.headers["etag"]
    font = client.get(f"/static/fonts/{served_font().name}")
    assert font.status_code == 200 and "immutable" in font.headers["cache-control"]
    assert client.get("/static/fonts/NotoSansMath-Regular.woff2").status_code == 404


def test_angle_bounds_read_as_multiples_of_pi_and_wide_ranges_slide_on_a_log_scale():
    import math

    from whylab.explorer.experiment import Param, T
    from whylab.explorer.web.render import show_bound, slider_scale

    angle = Param("phase", "float", 1.0, T("φ", "φ"), unit="rad", minimum=0.0,
                  maximum=2 * math.pi)
    assert show_bound(angle, 2 * math.pi) == "2π ≈ 6.283185307"
    assert show_bound(angle, math.pi / 2) == "π/2 ≈ 1.570796327"
    assert show_bound(angle, 0.0) == "0"
    assert show_bound(angle, 1.0) == "1"  # not a multiple of π: as typed
    length = Param("x", "float", 1.0, T("x", "x"), unit="m", minimum=0.0, maximum=2 * math.pi)
    assert show_bound(length, 2 * math.pi) == "6.283185307"  # only radians are angles
    assert slider_scale(Param("a", "float", 1.0, T("a", "a"), minimum=0.01, maximum=100.0)) == "log"
    assert slider_scale(Param("b", "float", 1.0, T("b", "b"), minimum=0.5, maximum=3.0)) == "linear"
    assert slider_scale(Param("c", "float", 1.0, T("c", "c"), minimum=0.0, maximum=1e6)) == "linear"


@pytest.mark.parametrize(
    "path,meant", [("/en/topics/tiny-dem", True), ("/zh/topics/tinydemo", True),
                   ("/en/topic/tiny-demo", True), ("/en/topics/zebrafish", False),
                   ("/en/" + "x" * 200, False)],
)
def test_not_found_offers_search_every_topic_and_the_topic_it_likely_meant(client, path, meant):
    page = client.get(path)
    assert page.status_code == 404
    lang = path.split("/")[1]
    assert 'role="search"' in page.text and f'action="/{lang}/"' in page.text
    assert f'href="/{lang}/topics/tiny-demo"' in page.text  # the topic list
    wording = {"en": "Did you mean", "zh": "您要找的是不是"}[lang]
    assert (wording in page.text) == meant
