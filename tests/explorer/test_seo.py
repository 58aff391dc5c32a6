"""What search engines and link previews read: descriptions, Open Graph, canonical and
hreflang links, robots.txt, sitemap.xml, and noindex on fragments and the JSON API."""

from __future__ import annotations

import urllib.robotparser
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from tests.explorer.conftest import FIXTURE_TOPICS  # noqa: F401
from whylab.cli import main
from whylab.explorer.web.app import create_app
from whylab.explorer.web.config import ExplorerConfig
from whylab.explorer.web.export import export_site
from whylab.explorer.web.seo import check_public_url

BASE = "https://whylab.example.org/docs"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XHTML = "{http://www.w3.org/1999/xhtml}"


class Head(HTMLParser):
    """The <meta> and <link> tags of a page, as lists of attribute dicts."""

    def __init__(self, html: str):
        super().__init__()
        self.metas: list[dict[str, str]] = []
        self.links: list[dict[str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "meta":
            self.metas.append(dict(attrs))
        elif tag == "link":
            self.links.append(dict(attrs))

    def meta(self, key: str) -> list[str]:
        return [m["content"] for m in self.metas if key in (m.get("name"), m.get("property"))]

    def hreflang(self) -> dict[str, str]:
        found = [(link["hreflang"], link["href"]) for link in self.links if "hreflang" in link]
        assert len(found) == len(dict(found)), found  # each language once
        return dict(found)

    def canonical(self) -> list[str]:
        return [link["href"] for link in self.links if link.get("rel") == "canonical"]


def _app(tmp_path_factory, registry, **overrides) -> TestClient:
    config = ExplorerConfig(
        topics_dir=FIXTURE_TOPICS,
        cache_dir=tmp_path_factory.mktemp("cache"),
        workers=1,
        memory_limit_mb=1024,
        **overrides,
    )
    return TestClient(create_app(config, registry=registry))


@pytest.fixture(scope="module")
def public(tmp_path_factory, fixture_registry):
    """An explorer told its public URL (with a path prefix and a trailing slash)."""
    with _app(tmp_path_factory, fixture_registry, public_url=BASE + "/") as test_client:
        yield test_client


@pytest.fixture(scope="module")
def unnamed(tmp_path_factory, fixture_registry):
    """An explorer with no public URL (the default), not started: its workers never run,
    so only pages that run no experiment are asked of it."""
    return _app(tmp_path_factory, fixture_registry)


def test_a_topic_page_describes_itself_in_its_language(public, fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    for lang, other, locale, other_locale in (
        ("en", "zh", "en_US", "zh_CN"),
        ("zh", "en", "zh_CN", "en_US"),
    ):
        head = Head(public.get(f"/{lang}/topics/tiny-demo").text)
        summary = " ".join(topic.meta[lang].summary.split())
        assert head.meta("description") == [summary]
        assert head.meta("og:description") == [summary]
        assert head.meta("og:title") == [topic.meta[lang].title]
        assert head.meta("og:type") == ["article"]
        assert head.meta("og:locale") == [locale]
        assert head.meta("og:locale:alternate") == [other_locale]
        assert head.meta("og:url") == [f"{BASE}/{lang}/topics/tiny-demo"]
        assert head.canonical() == [f"{BASE}/{lang}/topics/tiny-demo"]
        assert head.hreflang() == {
            "en": f"{BASE}/en/topics/tiny-demo",
            "zh-Hans": f"{BASE}/zh/topics/tiny-demo",
            "x-default": f"{BASE}/",
        }
        assert topic.meta[other].summary.split()[0] not in head.meta("description")[0]


def test_the_home_page_has_the_site_description_and_search_listings_are_noindex(public):
    en, zh = (Head(public.get(f"/{lang}/").text) for lang in ("en", "zh"))
    assert en.meta("description")[0].startswith("Questions about machine-learning")
    assert zh.meta("description")[0].startswith("关于机器学习系统")
    assert en.meta("og:type") == ["website"] and en.meta("robots") == []
    assert en.canonical() == [f"{BASE}/en/"]
    assert en.hreflang()["x-default"] == f"{BASE}/"
    searched = Head(public.get("/en/", params={"q": "sine"}).text)
    assert searched.meta("robots") == ["noindex"]
    assert searched.canonical() == [f"{BASE}/en/"]  # the search text is not the page
    tagged = Head(public.get("/zh/", params={"tag": "testing"}).text)
    assert tagged.canonical() == [f"{BASE}/zh/?tag=testing"] and tagged.meta("robots") == []
    assert tagged.hreflang()["x-default"] == f"{BASE}/en/?tag=testing"


def test_the_canonical_url_drops_tracking_and_experiment_parameters(public):
    answer = public.get(
        "/en/topics/tiny-demo", params={"utm_source": "twitter", "fbclid": "x1", "sine.cycles": "2"}
    )
    assert answer.status_code == 200
    head = Head(answer.text)
    assert head.canonical() == [f"{BASE}/en/topics/tiny-demo"]
    assert head.hreflang()["zh-Hans"] == f"{BASE}/zh/topics/tiny-demo"
    assert "utm_source" not in answer.text and "fbclid" not in answer.text


def test_a_kept_page_never_carries_a_host_the_client_sent(public):
    answers = [
        public.get("/zh/topics/tiny-demo", headers={"Host": host})
        for host in ("evil.example", "other.example:8080", "evil.example")
    ]
    assert all(a.status_code == 200 for a in answers)
    assert answers[-1].headers.get("etag"), "the page was not kept, so the cache went untested"
    for answer in answers:
        assert "evil.example" not in answer.text and "other.example" not in answer.text
        assert Head(answer.text).canonical() == [f"{BASE}/zh/topics/tiny-demo"]


def test_robots_txt_allows_pages_and_keeps_crawlers_off_fragments_and_the_api(public):
    answer = public.get("/robots.txt")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    robots = urllib.robotparser.RobotFileParser()
    robots.parse(answer.text.splitlines())
    assert robots.site_maps() == [f"{BASE}/sitemap.xml"]
    assert robots.can_fetch("*", "/en/topics/tiny-demo") and robots.can_fetch("*", "/zh/")
    assert not robots.can_fetch("*", "/api/topics")
    # The standard library's parser knows no wildcards (RFC 9309 has them): the lines as written.
    lines = answer.text.splitlines()
    assert "Disallow: /*/topics/*/experiments/*/result" in lines
    assert "Disallow: /*/cards" in lines


def test_sitemap_lists_every_page_with_its_alternates(public, fixture_registry):
    answer = public.get("/sitemap.xml")
    assert answer.status_code == 200 and "xml" in answer.headers["content-type"]
    root = ET.fromstring(answer.content)
    assert root.tag == f"{SITEMAP}urlset"
    urls = root.findall(f"{SITEMAP}url")
    assert all(child.tag == f"{SITEMAP}url" for child in root)
    locs = [url.find(f"{SITEMAP}loc").text for url in urls]
    expected = {f"{BASE}/{lang}/" for lang in ("en", "zh")} | {
        f"{BASE}/{lang}/topics/{topic.slug}" for topic in fixture_registry for lang in ("en", "zh")
    }
    assert sorted(locs) == sorted(expected)
    for url in urls:
        assert {child.tag for child in url} <= {f"{SITEMAP}loc", f"{XHTML}link"}
        alternates = {
            link.get("hreflang"): link.get("href") for link in url.findall(f"{XHTML}link")
        }
        assert set(alternates) == {"en", "zh-Hans", "x-default"}
        assert url.find(f"{SITEMAP}loc").text in alternates.values()  # it lists itself
    for loc in locs:  # every URL listed answers a page there, and names itself canonical
        page = public.get(loc.removeprefix(BASE))
        assert page.status_code == 200 and Head(page.text).canonical() == [loc]


def test_fragments_and_the_api_are_noindex_and_pages_are_not(public):
    marked = [
        "/en/cards",
        "/en/topics/tiny-demo/experiments/sine/result",
        "/en/topics/tiny-demo/experiments/nope/result",  # an error from a fragment route too
        "/api/topics",
        "/api/topics/tiny-demo",
        "/openapi.json",
    ]
    for path in marked:
        assert public.get(path).headers.get("x-robots-tag") == "noindex", path
    for path in ("/en/", "/zh/topics/tiny-demo", "/robots.txt", "/sitemap.xml"):
        assert "x-robots-tag" not in public.get(path).headers, path


def test_without_a_public_url_links_stay_relative_and_there_is_no_sitemap(unnamed):
    answer = unnamed.get("/zh/", headers={"Host": "evil.example"})
    assert answer.status_code == 200 and "evil.example" not in answer.text
    head = Head(answer.text)
    assert head.canonical() == ["/zh/"]
    assert head.hreflang() == {"en": "/en/", "zh-Hans": "/zh/", "x-default": "/"}
    assert head.meta("og:url") == []  # Open Graph takes absolute URLs only
    assert head.meta("og:locale") == ["zh_CN"]
    assert unnamed.get("/sitemap.xml").status_code == 404
    robots = unnamed.get("/robots.txt").text
    assert "Sitemap:" not in robots and "Disallow: /api/" in robots


@pytest.mark.parametrize(
    "bad",
    [
        "ftp://example.org",
        "example.org",
        "https://",
        "https://example.org/?a=1",
        "https://example.org/#top",
        "https://user:pw@example.org",
        "https://example.org:99999",
        'https://example.org/"><script>',
        "https://exa mple.org",
    ],
)
def test_a_bad_public_url_is_refused(bad, capsys):
    with pytest.raises(ValueError, match="public URL"):
        check_public_url(bad)
    with pytest.raises(ValueError, match="public URL"):
        ExplorerConfig(public_url=bad)
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--public-url", bad])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1 and "--public-url" in err[0], err


def test_a_good_public_url_loses_only_its_trailing_slash():
    assert check_public_url("https://example.org/") == "https://example.org"
    assert check_public_url("http://127.0.0.1:8000/whylab") == "http://127.0.0.1:8000/whylab"


def test_the_static_export_writes_robots_and_sitemap_only_with_a_public_url(
    fixture_registry, tmp_path
):
    without = tmp_path / "plain"
    export_site(fixture_registry, without)
    assert not (without / "robots.txt").exists() and not (without / "sitemap.xml").exists()
    head = Head((without / "en/topics/tiny-demo/index.html").read_text(encoding="utf-8"))
    assert head.canonical() == [] and head.meta("og:url") == []
    assert head.hreflang() == {
        "en": "../../../en/topics/tiny-demo/index.html",
        "zh-Hans": "../../../zh/topics/tiny-demo/index.html",
    }

    hosted = tmp_path / "hosted"
    export_site(fixture_registry, hosted, public_url=BASE)
    robots = (hosted / "robots.txt").read_text(encoding="utf-8")
    assert f"Sitemap: {BASE}/sitemap.xml" in robots.splitlines()
    root = ET.fromstring((hosted / "sitemap.xml").read_bytes())
    locs = {url.find(f"{SITEMAP}loc").text for url in root.findall(f"{SITEMAP}url")}
    assert f"{BASE}/zh/topics/tiny-demo/" in locs and f"{BASE}/en/" in locs
    for loc in locs:  # each listed address is a file of the copy
        assert (hosted / loc.removeprefix(BASE + "/") / "index.html").is_file(), loc
    head = Head((hosted / "zh/topics/tiny-demo/index.html").read_text(encoding="utf-8"))
    assert head.canonical() == [f"{BASE}/zh/topics/tiny-demo/"]
    assert head.hreflang()["x-default"] == f"{BASE}/"
    assert head.meta("og:url") == [f"{BASE}/zh/topics/tiny-demo/"]


def test_a_source_page_describes_its_experiment_with_its_own_alternates(public, unnamed):
    path = "/{lang}/topics/tiny-demo/experiments/sine/source"
    for lang, title, description in (
        ("en", "Show the code that ran: A sampled sine wave",
         "Energy is the same before and after the DFT."),
        ("zh", "查看实际运行的代码：采样的正弦波", "DFT 前后能量相同。"),
    ):
        head = Head(public.get(path.format(lang=lang)).text)
        assert head.meta("og:title") == [title] and head.meta("description") == [description]
        assert head.canonical() == [BASE + path.format(lang=lang)]
        assert head.meta("og:url") == [BASE + path.format(lang=lang)]
        assert head.hreflang() == {
            "en": BASE + path.format(lang="en"),
            "zh-Hans": BASE + path.format(lang="zh"),
            "x-default": BASE + path.format(lang="en"),
        }
        assert head.meta("robots") == []
    relative = Head(unnamed.get(path.format(lang="en"), headers={"Host": "evil.example"}).text)
    assert relative.canonical() == [path.format(lang="en")] and relative.meta("og:url") == []
    # a timing experiment's page does not say its code ran
    timing = Head(public.get("/en/topics/tiny-demo/experiments/clock/source").text)
    assert timing.meta("og:title") == ["Show the code a measurement runs: Time a loop"]


def test_error_pages_are_noindex_and_name_no_address_of_their_own(public):
    for path, status in (
        ("/en/topics/no-such-topic", 404),
        ("/zh/topics/tiny-demo?sine.cycles=3&sine.cycles=4", 422),  # a parameter given twice
    ):
        answer = public.get(path)
        assert answer.status_code == status, path
        head = Head(answer.text)
        assert head.meta("robots") == ["noindex"], path
        assert head.canonical() == [] and head.hreflang() == {} and head.meta("og:url") == []
        assert head.meta("description") and head.meta("og:title"), path
