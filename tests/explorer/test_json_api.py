"""The JSON API, its OpenAPI description, and the input-size guards."""

from __future__ import annotations

import pytest

API = "/api/topics/tiny-demo/experiments"


def test_topics_list_and_detail(client):
    topics = client.get("/api/topics").json()
    assert [t["slug"] for t in topics] == ["tiny-demo"]
    assert topics[0]["title"] == {"en": "Tiny demo", "zh": "小型示例"}
    assert topics[0]["tags"][1] == {"key": "signals", "en": "Signals", "zh": "信号"}
    detail = client.get("/api/topics/tiny-demo").json()
    sine = next(e for e in detail["experiments"] if e["name"] == "sine")
    amplitude = sine["params"][0]
    assert amplitude["minimum"] == 0.1 and amplitude["maximum"] == 10.0 and amplitude["unit"] == "V"
    assert sine["params"][-1]["seed"] is True
    assert next(e for e in detail["experiments"] if e["name"] == "clock")["timing"] is True
    assert client.get("/api/topics/nope").status_code == 404


def test_search_api_in_both_languages(client):
    hits = client.get("/api/search", params={"q": "帕塞瓦尔", "lang": "en"}).json()["hits"]
    assert hits[0]["slug"] == "tiny-demo" and hits[0]["title"] == "Tiny demo"
    assert hits[0]["url"] == "/en/topics/tiny-demo"
    zh = client.get("/api/search", params={"q": "parseval", "lang": "zh"}).json()["hits"]
    assert zh[0]["title"] == "小型示例"
    assert client.get("/api/search", params={"q": "quaternion"}).json()["hits"] == []
    assert client.get("/api/search", params={"q": ""}).json()["hits"] == []
    assert client.get("/api/search", params={"q": "x", "lang": "fr"}).status_code == 422


@pytest.mark.parametrize(
    "lang, query, title", [("en", "server", "Limits"), ("zh", "服务器", "限制")]
)
def test_search_api_names_the_section_that_matched(client, lang, query, title):
    hit = client.get("/api/search", params={"q": query, "lang": lang}).json()["hits"][0]
    assert hit["section"] == "limits" and hit["section_title"] == title
    assert hit["section_url"] == f"/{lang}/topics/tiny-demo#limits"
    assert hit["url"] == f"/{lang}/topics/tiny-demo"
    # Words said only before the first heading: no section, the link is the page's.
    intro = client.get("/api/search", params={"q": "wanders", "lang": "en"}).json()["hits"][0]
    assert intro["section"] == "" and intro["section_url"] == "/en/topics/tiny-demo"


def test_hostile_search_strings_never_fail(client):
    for query in ["\x00", "'; DROP TABLE", "((((", "*" * 300, "🙂" * 100, "\\u0000", "%00"]:
        response = client.get("/api/search", params={"q": query})
        assert response.status_code == 200, query
        assert len(response.json()["query"]) <= 200


def test_experiment_api_returns_result_with_checks_and_run_facts(client):
    data = client.get(f"{API}/sine", params={"cycles": "3", "log_y": "true"}).json()
    assert data["params"] == {
        "amplitude": 1.0,
        "cycles": 3,
        "samples": 64,
        "noise": "none",
        "log_y": True,
        "seed": 0,
    }
    assert data["engine_version"] and data["passed"] is True and data["timing"] is False
    check = data["result"]["checks"][0]
    assert check["name"]["en"] == "Parseval: energy is kept" and check["passed"] is True
    assert data["result"]["figures"][1]["log_y"] is True
    assert data["result"]["metrics"]["peak_bin"] == 3
    graph = client.get(f"{API}/graph").json()["result"]["checks"][0]
    assert graph["measured"] == {"en": "3 nodes with inputs", "zh": "3 个节点有输入"}


def test_bad_and_unknown_parameters_get_422_naming_the_bound(client):
    response = client.get(f"{API}/sine", params={"samples": "4096"})
    assert response.status_code == 422
    assert response.json() == {"detail": "samples: must be <= 2048 (got 4096)", "param": "samples"}
    assert client.get(f"{API}/sine", params={"cycles": "2.5"}).json()["param"] == "cycles"
    assert "one of none, gauss" in client.get(f"{API}/sine", params={"noise": "x"}).text
    unknown = client.get(f"{API}/sine", params={"__class__": "1"})
    assert unknown.status_code == 422 and unknown.json()["detail"] == "__class__: unknown parameter"
    assert client.get(f"{API}/nope").status_code == 404
    assert client.get("/api/topics/os/experiments/system").status_code == 404


def test_oversize_input_is_rejected_cleanly(client):
    huge = client.get(f"{API}/sine", params={"amplitude": "1" * 5000})
    assert huge.status_code == 414 and "URL too long" in huge.json()["detail"]
    assert client.get("/en/", params={"q": "x" * 5000}).status_code == 414
    many = client.get(f"{API}/sine", params={f"p{i}": "1" for i in range(80)})
    assert many.status_code == 422 and "too many parameters" in many.json()["detail"]
    long_value = client.get(f"{API}/sine", params={"amplitude": "9" * 300})
    assert long_value.status_code == 422 and len(long_value.json()["detail"]) < 100


def test_openapi_is_served_and_nothing_loads_from_a_cdn(client):
    schema = client.get("/openapi.json").json()
    assert {
        "/api/topics",
        "/api/topics/{slug}",
        "/api/search",
        "/api/topics/{slug}/experiments/{name}",
    } <= set(schema["paths"])
    assert not any(path.startswith("/{lang}") for path in schema["paths"])  # pages stay out
    responses = schema["paths"]["/api/topics/{slug}/experiments/{name}"]["get"]["responses"]
    assert {"422", "429", "503", "504", "507"} <= set(responses)
    assert client.get("/docs").status_code == 404 and client.get("/redoc").status_code == 404
