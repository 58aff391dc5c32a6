"""A small in-memory cache of rendered result blocks (HTML text), least recently used first out.

A deterministic result, once in the result cache (:mod:`whylab.explorer.cache`),
renders to the same HTML every time for one language: the checks, the tables and
the SVG figures, which take a few milliseconds to draw (a big butterfly diagram,
ten). Keeping the rendered text skips the SQLite lookup, the JSON parse and the
drawing. Only blocks rendered from a *cached* record go in -- their run note
says "result from cache", which stays true -- and never a timing experiment's,
whose point is a fresh measurement.

The cache is bounded twice: by the number of blocks and by their total size in
characters, so a few huge diagrams cannot crowd out memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass


@dataclass
class FragmentCacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0


class FragmentCache:
    """Least-recently-used map of key -> HTML text, at most ``max_entries`` and ``max_chars``."""

    def __init__(self, max_entries: int = 256, max_chars: int = 16_000_000):
        if max_entries < 1 or max_chars < 1:
            raise ValueError("a fragment cache needs room for at least one entry")
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.stats = FragmentCacheStats()
        self._entries: OrderedDict[Hashable, str] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> str | None:
        """The text stored under ``key`` (now the most recently used), or None."""
        with self._lock:
            text = self._entries.get(key)
            if text is None:
                self.stats.misses += 1
                return None
            self._entries.move_to_end(key)
            self.stats.hits += 1
            return text

    def put(self, key: Hashable, text: str) -> None:
        """Store ``text``, evicting the least recently used entries until both bounds hold.

        A text larger than an eighth of ``max_chars`` is not stored: it would
        push out many others for one page.
        """
        if len(text) > self.max_chars // 8:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._chars -= len(previous)
            self._entries[key] = text
            self._chars += len(text)
            while len(self._entries) > self.max_entries or self._chars > self.max_chars:
                _, evicted = self._entries.popitem(last=False)
                self._chars -= len(evicted)
                self.stats.evictions += 1

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def chars(self) -> int:
        """Total size of the stored texts, in characters."""
        return self._chars
