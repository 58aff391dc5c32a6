"""Whole pages kept in memory: filled at start-up, home pages keyed by what varies them, ETags."""

from __future__ import annotations

import pytest

from whylab.explorer.runs.warm_up import NOT_FOUND_PATH, warm_paths
from whylab.explorer.web.request_info import etag_matches

TOPIC_PAGES = [f"/{lang}/topics/tiny-demo" for lang in ("en", "zh")]
LANDING_PAGES = [
    *TOPIC_PAGES,
    "/en/",
    "/zh/",
    *(NOT_FOUND_PATH.format(lang=x) for x in "en zh".split()),
]


def page_counts(client) -> tuple[int, int]:
    stats = client.app.state.pages.stats
    return stats.hits, stats.misses


def test_after_start_up_the_first_view_of_every_landing_page_is_a_page_cache_hit(make_client):
    client = make_client(warm_cache=True)
    warm_up = client.app.state.warm_up
    assert warm_up.done.wait(timeout=120), "the start-up warm-up did not finish"
    assert (warm_up.topic_pages, warm_up.kept, warm_up.other_pages) == (2, 2, 4)
    hits, misses = page_counts(client)
    lookups = client.app.state.service.stats.cache_hits
    statuses = [client.get(path).status_code for path in LANDING_PAGES]
    assert statuses == [200, 200, 200, 200, 404, 404]
    assert page_counts(client) == (hits + len(LANDING_PAGES), misses)
    assert client.app.state.service.stats.cache_hits == lookups  # not even a result lookup


def test_without_the_warm_up_the_first_views_are_rendered(make_client):
    client = make_client(warm_cache=False)
    assert not client.app.state.warm_up.done.is_set()
    hits, misses = page_counts(client)
    for path in LANDING_PAGES:
        client.get(path)
    assert page_counts(client) == (hits, misses + len(LANDING_PAGES))


def test_the_warm_up_asks_for_every_topic_home_and_not_found_page_in_both_languages(
    fixture_registry,
):
    topics, others = warm_paths(fixture_registry)
    assert topics == TOPIC_PAGES
    assert sorted(others) == sorted(["/en/", "/zh/", *LANDING_PAGES[4:]])


def test_home_pages_are_kept_by_language_search_text_and_tag(make_client):
    client = make_client()
    tag = client.app.state.registry.tags()[0].key
    first = client.get("/en/")
    hits, misses = page_counts(client)
    assert client.get("/en/").text == first.text and page_counts(client) == (hits + 1, misses)
    chinese = client.get("/zh/")
    assert chinese.text != first.text and page_counts(client) == (hits + 1, misses + 1)
    searched = client.get("/en/", params={"q": "sine"})
    assert searched.text != first.text and page_counts(client)[1] == misses + 2
    # The same search once spaces are collapsed: the same page, from memory.
    assert client.get("/en/", params={"q": "  sine  "}).text == searched.text
    assert page_counts(client) == (hits + 2, misses + 2)
    tagged = client.get("/en/", params={"tag": tag})
    assert tagged.text != first.text and page_counts(client)[1] == misses + 3
    # A tag no topic has filters nothing: the plain home page.
    assert client.get("/en/", params={"tag": "no-such-tag"}).text == first.text
    assert page_counts(client) == (hits + 3, misses + 3)
    # The card list alone is another page than the home page with the same search.
    cards = client.get("/en/cards", params={"q": "sine"})
    assert cards.text != searched.text and page_counts(client)[1] == misses + 4
    assert client.get("/en/cards", params={"q": "sine"}).text == cards.text


def test_the_not_found_page_is_rendered_once_per_language(make_client):
    client = make_client()
    first = client.get("/en/topics/nothing-here")
    hits, _ = page_counts(client)
    again = client.get("/en/no/such/page")
    assert again.status_code == 404 and again.text == first.text
    assert page_counts(client)[0] == hits + 1
    assert client.get("/zh/topics/nothing-here").text != first.text


@pytest.mark.parametrize("path", ["/en/topics/tiny-demo", "/zh/", "/en/cards"])
def test_a_kept_page_is_not_sent_again_to_a_client_that_has_it(make_client, path):
    client = make_client()
    client.get(path)  # a topic page is kept once its results are cached
    kept = client.get(path)
    etag = kept.headers["etag"]
    assert kept.headers["cache-control"] == "no-cache"
    again = client.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    weak = client.get(path, headers={"If-None-Match": f'"other", W/{etag}'})
    assert weak.status_code == 304
    stale = client.get(path, headers={"If-None-Match": '"an-old-version"'})
    assert stale.status_code == 200 and stale.text == kept.text
    plain = client.get(path, headers={"Accept-Encoding": "identity"})
    assert plain.headers["etag"] != etag  # another body, another tag
    assert (
        client.get(path, headers={"If-None-Match": etag, "Accept-Encoding": "identity"}).status_code
        == 200
    )


def test_a_page_that_is_not_kept_has_no_etag(make_client):
    client = make_client()
    computed = client.get("/en/topics/tiny-demo")  # results computed just now: not kept
    assert computed.status_code == 200 and "etag" not in computed.headers
    refused = client.get("/en/topics/tiny-demo", params={"sine.cycles": "0"})
    assert refused.status_code == 422 and "etag" not in refused.headers


def test_if_none_match_is_read_as_a_list_of_tags():
    assert etag_matches('"a"', '"a"') and etag_matches("*", '"a"')
    assert etag_matches(' "b" , W/"a"', '"a"')
    assert not etag_matches('"ab"', '"a"') and not etag_matches("", '"a"')
    assert not etag_matches('"a', '"a"')
