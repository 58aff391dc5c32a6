"""The in-memory cache of rendered result blocks: bounds, and what the app keeps in it."""

from __future__ import annotations

import pytest

from whylab.explorer.fragment_cache import FragmentCache

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
