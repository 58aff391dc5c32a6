"""An on-disk cache of experiment results (SQLite).

Deterministic experiments give the same result for the same code and the same
parameters, so a result is stored under a key made of the topic (and a hash of
its ``experiments.py``), the experiment name, the engine version and the
canonical parameters (sorted JSON). Timing experiments are never stored: their
whole point is a fresh measurement.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from whylab.explorer.serialization import dumps


def default_cache_dir() -> Path:
    """``$WHYLAB_CACHE_DIR``, else the user's cache dir (``~/.cache/whylab``), else ``./var/``."""
    configured = os.environ.get("WHYLAB_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    candidate = Path(base) / "whylab"
    try:
        candidate.mkdir(parents=True, exist_ok=True)
        if os.access(candidate, os.W_OK):
            return candidate
    except OSError:
        pass
    return Path("var") / "cache"


def cache_key(
    topic: str, source_hash: str, experiment: str, engine_version: str, params: dict[str, Any]
) -> str:
    """A stable key: the same inputs always give the same key, any change gives another."""
    canonical = dumps([topic, source_hash, experiment, engine_version, params])
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResultCache:
    """A key -> JSON text store in one SQLite file, safe to share between threads."""

    def __init__(self, directory: Path):
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "results.sqlite3"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS results ("
            " key TEXT PRIMARY KEY, topic TEXT NOT NULL, experiment TEXT NOT NULL,"
            " record TEXT NOT NULL, created REAL NOT NULL)"
        )

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT record FROM results WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, topic: str, experiment: str, record: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                (key, topic, experiment, record, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM results")

    def close(self) -> None:
        with self._lock:
            self._db.close()
