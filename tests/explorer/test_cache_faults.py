"""Storage faults and damaged records in the result cache: the reader still gets true results.

The faults are real SQLite faults: a full disk is a database capped by
``max_page_count`` (SQLITE_FULL), a read-only one a connection in
``query_only`` mode (SQLITE_READONLY), damage is garbage or flipped bytes
written into the file itself.
"""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest

from whylab.explorer.runs.cache import ResultCache

API = "/api/topics/tiny-demo/experiments"


def cache_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "whylab.explorer.runs.cache"]


@pytest.mark.parametrize(
    "fault", ["PRAGMA max_page_count = 1", "PRAGMA query_only = ON"], ids=["full", "read-only"]
)
def test_a_full_or_read_only_disk_serves_computed_results_and_logs_once(make_client, caplog, fault):
    client = make_client()
    cache = client.app.state.cache
    cache._db.execute(fault)
    with caplog.at_level(logging.WARNING, logger="whylab.explorer.runs.cache"):
        first = client.get(f"{API}/sine?cycles=3")
        second = client.get(f"{API}/sine?cycles=4")
        page = client.get("/en/topics/tiny-demo?sine.cycles=5")
    assert first.status_code == second.status_code == page.status_code == 200
    assert first.json()["cached"] is False and first.json()["passed"]
    again = client.get(f"{API}/sine?cycles=3")  # kept in memory instead
    assert again.json()["cached"] is True
    assert again.json()["result"] == first.json()["result"]
    warnings = cache_warnings(caplog)
    assert len(warnings) == 1 and "kept in memory" in warnings[0]
    assert "memory only" in cache.describe()


def test_a_cache_file_with_a_garbage_header_is_rebuilt_and_the_app_starts(make_client, tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "results.sqlite3").write_bytes(b"this is not SQLite\x00" * 300)
    client = make_client()
    assert client.get(f"{API}/sine?cycles=2").status_code == 200
    assert client.get(f"{API}/sine?cycles=2").json()["cached"] is True
    cache = client.app.state.cache
    assert "rebuilt" in cache.fault and "rebuilt" in cache.describe()
    assert len(cache) == 1  # on disk again


def test_a_cache_dir_that_cannot_be_created_keeps_results_in_memory(make_client, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    client = make_client(cache_dir=blocker / "cache")
    assert client.get(f"{API}/sine?cycles=2").status_code == 200
    assert client.get(f"{API}/sine?cycles=2").json()["cached"] is True
    assert "memory only" in client.app.state.cache.describe()


@pytest.mark.parametrize("keep", [0, 0.5], ids=["emptied", "half"])
def test_a_cache_file_truncated_under_the_server_is_survived(make_client, tmp_path, keep):
    client = make_client()
    assert client.get(f"{API}/sine?cycles=2").status_code == 200
    assert client.get(f"{API}/mean?n=500").status_code == 200
    path = tmp_path / "cache" / "results.sqlite3"
    with path.open("r+b") as file:
        file.truncate(int(path.stat().st_size * keep))
    for url in (f"{API}/sine?cycles=2", f"{API}/mean?n=500", f"{API}/sine?cycles=6"):
        response = client.get(url)
        assert response.status_code == 200, response.text
        assert response.json()["passed"]
    assert client.get("/en/topics/tiny-demo").status_code == 200
    assert client.get(f"{API}/sine?cycles=6").json()["cached"] is True
    assert "rebuilt" in client.app.state.cache.fault  # noticed, logged, and carried on


def test_flipped_digits_inside_the_file_are_caught_and_the_run_recomputed(make_client, tmp_path):
    first = make_client().get(f"{API}/sine?amplitude=2.5&cycles=3").json()
    path = tmp_path / "cache" / "results.sqlite3"
    data = bytearray(path.read_bytes())
    energy = f'"energy":{first["result"]["metrics"]["energy"]!r}'.encode()
    at = data.find(energy)
    assert at > 0, "the record is stored as plain JSON text"
    digit = at + len(b'"energy":')
    data[digit] = ord("9") if data[digit] != ord("9") else ord("1")  # one digit, same length
    path.write_bytes(bytes(data))
    client = make_client()  # a restart reads the damaged file
    again = client.get(f"{API}/sine?amplitude=2.5&cycles=3").json()
    assert again["cached"] is False  # dropped and computed again
    assert again["result"] == first["result"]
    assert client.get(f"{API}/sine?amplitude=2.5&cycles=3").json()["cached"] is True


def test_a_cache_file_deleted_under_the_server_is_opened_again_for_later_writes(
    tmp_path, caplog
):
    cache = ResultCache(tmp_path)
    cache.put("before", "topic", "exp", '{"n": 1}')
    (tmp_path / "results.sqlite3").unlink()  # an operator clearing the cache by hand
    with caplog.at_level(logging.WARNING, logger="whylab.explorer.runs.cache"):
        cache.put("after", "topic", "exp", '{"n": 2}')
    assert "was deleted or replaced" in caplog.text
    assert cache.get("after") == '{"n": 2}' and cache.get("before") is None
    cache.close()
    restarted = ResultCache(tmp_path)  # the write reached the file a restart opens
    assert restarted.get("after") == '{"n": 2}'
    restarted.close()


def test_a_half_record_is_dropped_not_served(tmp_path):
    cache = ResultCache(tmp_path)
    record = json.dumps({"value": list(range(100))})
    cache.put("k", "topic", "exp", record)
    assert cache.get("k") == record
    db = sqlite3.connect(tmp_path / "results.sqlite3")
    db.execute("UPDATE records SET record = substr(record, 1, length(record) / 2)")
    db.commit()
    db.close()
    assert cache.get("k") is None
    assert len(cache) == 0  # deleted, so the next run stores a good one


def test_a_record_moved_to_another_key_fails_its_checksum(tmp_path):
    cache = ResultCache(tmp_path)
    cache.put("a", "topic", "exp", '{"x": 1}')
    cache.put("b", "topic", "exp", '{"x": 2}')
    db = sqlite3.connect(tmp_path / "results.sqlite3")
    db.execute("UPDATE records SET record = '{\"x\": 2}' WHERE key = 'a'")
    db.commit()
    db.close()
    assert cache.get("a") is None and cache.get("b") == '{"x": 2}'


def test_the_cache_never_maps_shared_memory(tmp_path):
    cache = ResultCache(tmp_path)
    cache.put("k", "topic", "exp", "{}")
    assert cache._db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert not (tmp_path / "results.sqlite3-shm").exists()


def test_the_cache_evicts_the_least_recently_used_records_beyond_its_size(tmp_path):
    record = "x" * 1000
    cache = ResultCache(tmp_path, max_bytes=3500, touch_interval_s=0.0)
    for key in ("a", "b", "c"):
        cache.put(key, "topic", "exp", record)
    assert cache.get("a") == record  # "a" is now more recently used than "b"
    cache.put("d", "topic", "exp", record)
    assert cache.get("b") is None
    assert all(cache.get(key) == record for key in ("a", "c", "d"))
    assert len(cache) == 3
    cache.put("huge", "topic", "exp", "y" * 4000)  # larger than the whole cache: not stored
    assert cache.get("huge") is None and len(cache) == 3


def test_the_cache_size_bound_is_configurable_from_the_app(make_client):
    client = make_client(cache_max_mb=0.1)  # about 100 kB: a few sine records
    for cycles in range(1, 8):
        assert client.get(f"{API}/sine?cycles={cycles}&samples=512").status_code == 200
    cache = client.app.state.cache
    (total,) = cache._db.execute("SELECT SUM(size) FROM records").fetchone()
    assert 0 < total <= cache.max_bytes and 1 < len(cache) < 7
