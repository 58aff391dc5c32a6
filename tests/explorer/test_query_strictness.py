"""Query strings read strictly: a parameter given twice, digits that are not ASCII digits,
``1_000`` and an encoded ``/`` in the path are refused, never quietly reinterpreted."""

from __future__ import annotations

from pathlib import Path

import pytest

from whylab.cli import main

API = "/api/topics/tiny-demo/experiments"


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("cycles=1_0", "cycles"),
        ("cycles=%D9%A1%D9%A2", "cycles"),  # Arabic-Indic ١٢
        ("cycles=%EF%BC%91%EF%BC%92", "cycles"),  # full-width １２
        ("amplitude=1_0.5", "amplitude"),
        ("amplitude=%EF%BC%92.5", "amplitude"),  # full-width ２.5
        ("seed=%E0%A5%AA", "seed"),  # Devanagari ४
    ],
)
def test_numbers_in_other_digit_forms_are_a_422_naming_the_parameter(client, query, param):
    response = client.get(f"{API}/sine?{query}")
    assert response.status_code == 422
    assert response.json()["param"] == param
    assert "expected" in response.json()["detail"]


def test_plain_ascii_numbers_still_parse(client):
    response = client.get(f"{API}/sine?cycles=+3&amplitude=2.5e0&seed= 4")
    assert response.status_code == 200
    params = response.json()["params"]
    assert (params["cycles"], params["amplitude"], params["seed"]) == (3, 2.5, 4)


def test_a_parameter_given_twice_is_a_422(client):
    response = client.get(f"{API}/sine?cycles=3&cycles=4")
    assert response.status_code == 422
    assert response.json()["detail"] == "cycles: given more than once"
    page = client.get("/en/topics/tiny-demo?sine.cycles=3&sine.cycles=4")
    assert page.status_code == 422 and "given more than once" in page.text
    zh = client.get("/zh/topics/tiny-demo/experiments/sine/result?cycles=3&cycles=4")
    assert zh.status_code == 422 and "重复给出" in zh.text


@pytest.mark.parametrize(
    "path",
    [
        # decoded before routing, each would name a real experiment or page
        "/api/topics/tiny-demo%2Fexperiments%2Fsine",
        "/api/topics/tiny-demo/experiments%2fsine",
        "/en/topics/tiny-demo%2Fexperiments%2Fsine%2Fresult",
        "/en%2Ftopics%2Ftiny-demo",
        "/en/topics/tiny-demo%5Cexperiments",
    ],
)
def test_an_encoded_slash_in_the_path_is_not_found(client, path):
    assert client.get(path).status_code == 404


def test_the_cli_refuses_other_digit_forms_too(capsys):
    topics = str(Path(__file__).resolve().parent / "fixture_topics")
    assert main(["run", "tiny-demo", "sine", "--cycles", "١٢", "--topics-dir", topics]) == 2
    assert "cycles: expected int" in capsys.readouterr().err


def test_405_keeps_its_allow_header(client):
    for path in ("/api/topics", "/en/"):
        response = client.post(path)
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, HEAD"
        assert client.head(path).status_code == 200  # as Allow says
    run = client.post("/api/topics/tiny-demo/experiments/clock/timing-runs?n=400").json()
    refused = client.put(f"/api/timing-runs/{run['id']}")
    assert refused.status_code == 405 and refused.headers["allow"] == "DELETE, GET, HEAD"
