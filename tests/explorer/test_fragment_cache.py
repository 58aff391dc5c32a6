"""The in-memory cache of rendered result blocks: bounds, and what the app keeps in it."""

from __future__ import annotations

import pytest

from whylab.explorer.web.fragment_cache import FragmentCache

FRAGMENT = "/{lang}/topics/tiny-demo/experiments/{name}/result"


def test_least_recently_used_goes_first_when_entries_run_out():
    cache = FragmentCache(max_entries=2, max_chars=1000)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"  # now b is the least recently used
    cache.put("c", "C")
    assert cache.get("b") is None and cache.get("a") == "A" and cache.get("c") == "C"
    assert cache.stats.evictions == 1 and cache.stats.hits == 3 and cache.stats.misses == 1


def test_total_size_is_bounded_and_huge_texts_are_not_kept():
    cache = FragmentCache(max_entries=100, max_chars=800)
    for key in range(8):
        cache.put(key, "x" * 100)
    assert cache.chars == 800 and len(cache) == 8
    cache.put("one more", "y" * 100)
    assert cache.chars <= 800 and cache.get(0) is None and cache.get("one more")
    cache.put("huge", "z" * 101)  # over an eighth of the budget
    assert cache.get("huge") is None and cache.chars <= 800
    cache.put("one more", "short")  # replacing an entry updates the size
    assert cache.chars == 700 + len("short")


def test_a_cache_without_room_is_refused():
    with pytest.raises(ValueError):
        FragmentCache(max_entries=0)


def test_blocks_from_cached_results_are_rendered_once_then_served_as_stored(make_client):
    client = make_client()
    fragments, service = client.app.state.fragments, client.app.state.service
    url = FRAGMENT.format(lang="en", name="sine")
    computed = client.get(url, params={"cycles": "3"})
    assert "computed in" in computed.text and len(fragments) == 0  # not from cache: not kept
    from_cache = client.get(url, params={"cycles": "3"})
    assert "result from cache" in from_cache.text and len(fragments) == 1
    hits = service.stats.cache_hits
    again = client.get(url, params={"cycles": "03"})  # the same canonical parameters
    assert again.status_code == 200 and again.text == from_cache.text
    assert fragments.stats.hits == 1 and service.stats.cache_hits == hits  # no lookup at all
    # The topic page shows the same stored block for those parameters.
    page = client.get("/en/topics/tiny-demo", params={"sine.cycles": "3"})
    assert from_cache.text.strip() in page.text and fragments.stats.hits == 2
    # Another language is another block.
    chinese = client.get(FRAGMENT.format(lang="zh", name="sine"), params={"cycles": "3"})
    assert "结果来自缓存" in chinese.text and chinese.text != from_cache.text


def test_timing_experiments_and_bad_parameters_are_never_kept(make_client):
    client = make_client()
    fragments = client.app.state.fragments
    url = FRAGMENT.format(lang="en", name="clock")
    client.get("/api/topics/tiny-demo/experiments/clock", params={"n": "500"})  # measure once
    runs = [client.get(url, params={"n": "500"}) for _ in range(3)]
    assert all("live measurement on this server" in r.text for r in runs)
    bad = client.get(FRAGMENT.format(lang="en", name="sine"), params={"cycles": "0"})
    assert bad.status_code == 422
    assert len(fragments) == 0 and fragments.stats.hits == 0


def test_no_fragment_cache_without_a_result_cache(make_client):
    assert make_client(use_cache=False).app.state.fragments is None
    assert make_client(fragment_cache_entries=0).app.state.fragments is None


def test_an_entry_that_no_longer_matches_its_digest_is_dropped_not_served():
    cache = FragmentCache(max_entries=4, max_chars=1000)
    cache.put("page", b"<p>right</p>")
    value, digest = cache._entries["page"]  # memory damaged behind the cache's back
    cache._entries["page"] = (b"<p>wrong</p>", digest)
    assert cache.get("page") is None
    assert cache.stats.corrupt == 1 and len(cache) == 0 and cache.chars == 0
    cache.put("page", b"<p>right</p>")
    assert cache.get("page") == b"<p>right</p>"


PAGE = "/en/topics/tiny-demo"


def test_a_page_from_cached_results_is_kept_whole_and_sent_in_either_encoding(make_client):
    client = make_client()
    pages, fragments = client.app.state.pages, client.app.state.fragments
    first = client.get(PAGE)  # results computed now: the page says so, and is not kept
    assert first.status_code == 200 and len(pages) == 0
    second = client.get(PAGE)  # every result from the cache: kept, gzip and identity
    assert second.status_code == 200 and len(pages) == 2
    fragment_lookups = fragments.stats.hits + fragments.stats.misses
    third = client.get(PAGE)
    assert third.headers["content-encoding"] == "gzip" and third.text == second.text
    assert "accept-encoding" in third.headers["vary"].lower()
    assert fragments.stats.hits + fragments.stats.misses == fragment_lookups  # no block looked up
    plain = client.get(PAGE, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.text == second.text
    assert pages.stats.hits == 2
    # Other parameters are another page; a bad one is never kept.
    assert client.get(PAGE, params={"sine.cycles": "3"}).status_code == 200
    assert client.get(PAGE, params={"sine.cycles": "0"}).status_code == 422
    assert client.get(PAGE, params={"sine.cycles": "0"}).status_code == 422
    assert len(pages) == 2


def test_a_kept_page_shows_a_new_timing_measurement_at_once(make_client):
    client = make_client()
    client.get(PAGE)
    before = client.get(PAGE)
    assert "live measurement on this server" not in before.text
    assert client.get(PAGE).text == before.text and client.app.state.pages.stats.hits == 1
    clock = client.app.state.registry.get("tiny-demo").experiments["clock"]
    measure = client.get("/api/topics/tiny-demo/experiments/clock", params=clock.defaults())
    assert measure.status_code == 200
    after = client.get(PAGE)  # the kept page would still offer to measure
    assert "live measurement on this server" in after.text


def test_no_page_cache_without_a_result_cache(make_client):
    assert make_client(use_cache=False).app.state.pages is None
    assert make_client(page_cache_entries=0).app.state.pages is None
