"""Locust users for benchmarks/load_explorer.py: cached experiment runs and search
(``Reader``), or page views only (``PageReader``).

Every experiment URL here is one that load_explorer.py computed before the
run, so these requests measure the serving path (cache lookup, JSON or HTML
rendering), not the experiments themselves. Request names group URLs by kind so
the statistics come out per endpoint.
"""

from __future__ import annotations

import os
import random

from explorer_load_plan import PAGES, PHASES, QUERIES, TOPIC
from locust import FastHttpUser, between, task


class Reader(FastHttpUser):
    wait_time = between(0.0, 0.01)

    @task(4)
    def experiment_json(self) -> None:
        phase = random.choice(PHASES)
        self.client.get(
            f"/api/topics/{TOPIC}/experiments/superposition?phase={phase}",
            name="experiment JSON (cached)",
        )

    @task(3)
    def experiment_fragment(self) -> None:
        phase = random.choice(PHASES)
        self.client.get(
            f"/en/topics/{TOPIC}/experiments/superposition/result?phase={phase}",
            name="experiment HTML fragment (cached)",
        )

    @task(4)
    def search(self) -> None:
        query, lang = random.choice(QUERIES)
        self.client.get("/api/search", params={"q": query, "lang": lang}, name="search API")

    @task(1)
    def topic_page(self) -> None:
        self.client.get(f"/zh/topics/{TOPIC}", name="topic page (3 cached runs)")


# Seconds a page reader waits between pages, "low,high" (load_explorer.py --think);
# by default next to none, so the server is kept busy (a saturation test).
THINK_S = [float(v) for v in os.environ.get("WHYLAB_LOCUST_THINK_S", "0,0.01").split(",")]


class PageReader(FastHttpUser):
    """Home and topic pages in both languages, nothing else; no timing experiment is
    requested (a page shows a timing experiment's latest measurement, never runs one)."""

    wait_time = between(THINK_S[0], THINK_S[1])

    @task
    def page(self) -> None:
        path = random.choice(PAGES)
        self.client.get(path, name="home page" if path.endswith("/") else "topic page")
