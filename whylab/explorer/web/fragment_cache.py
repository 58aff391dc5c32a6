"""Small in-memory caches of rendered HTML, least recently used first out, each entry checked.

A deterministic result, once in the result cache (:mod:`whylab.explorer.runs.cache`),
renders to the same HTML every time for one language: the checks, the tables and
the SVG figures, which take a few milliseconds to draw (a big butterfly diagram,
ten). Keeping the rendered text skips the SQLite lookup, the JSON parse and the
drawing. Only blocks rendered from a *cached* record go in -- their run note
says "result from cache", which stays true -- and never a timing experiment's,
whose point is a fresh measurement.

Whole topic pages are kept the same way, as bytes once per encoding (UTF-8 and
gzip: :func:`page_encodings`), when every block on them came from the cache: a
page view is then a lookup, with no template rendering and no compression. The
home page and its card list (keyed by language, search text and tag) are kept
so too, and the not-found page as text; the app sends a kept page's digest as
its ETag. ``whylab serve`` fills this cache at start-up
(:mod:`whylab.explorer.runs.warm_up`).

The cache is bounded twice: by the number of entries and by their total size in
characters (bytes for a page), so a few huge diagrams cannot crowd out memory.
Like the result cache, each entry is stored with a SHA-256 digest of its key and
content and checked on every read: an entry that no longer matches (memory
corrupted, a bug that mutated it) is dropped and counts as a miss, so it is
rendered again rather than served wrong.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

# Pages are compressed once, when kept, so a higher level than the middleware's costs little.
PAGE_GZIP_LEVEL = 6
ENCODINGS = ("gzip", "identity")


def page_encodings(html: str) -> dict[str, bytes]:
    """A page's body as each encoding sends it: UTF-8, and that gzip-compressed."""
    body = html.encode()
    return {"gzip": gzip.compress(body, compresslevel=PAGE_GZIP_LEVEL, mtime=0), "identity": body}


Entry = str | bytes


def _digest(key: Hashable, value: Entry) -> bytes:
    content = value.encode() if isinstance(value, str) else value
    kind = b"s" if isinstance(value, str) else b"b"
    return hashlib.sha256(repr(key).encode() + kind + content).digest()


@dataclass
class FragmentCacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    corrupt: int = 0  # entries whose digest no longer matched (dropped)


class FragmentCache:
    """Least-recently-used map of key -> HTML text (or a page's bytes), at most
    ``max_entries`` entries and ``max_chars`` characters (bytes for pages) in all."""

    def __init__(self, max_entries: int = 256, max_chars: int = 16_000_000):
        if max_entries < 1 or max_chars < 1:
            raise ValueError("a fragment cache needs room for at least one entry")
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.stats = FragmentCacheStats()
        self._entries: OrderedDict[Hashable, tuple[Entry, bytes]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Entry | None:
        """The entry stored under ``key`` (now the most recently used), or None when there is
        none or it fails its check (then it is dropped)."""
        found = self.get_with_digest(key)
        return None if found is None else found[0]

    def get_with_digest(self, key: Hashable) -> tuple[Entry, bytes] | None:
        """Like :meth:`get`, with the entry's SHA-256 digest (a page's ETag is made from it)."""
        with self._lock:
            stored = self._entries.get(key)
            if stored is None:
                self.stats.misses += 1
                return None
            value, digest = stored
            if _digest(key, value) != digest:
                del self._entries[key]
                self._chars -= len(value)
                self.stats.corrupt += 1
                self.stats.misses += 1
                return None
            self._entries.move_to_end(key)
            self.stats.hits += 1
            return value, digest

    def put(self, key: Hashable, value: Entry) -> bytes | None:
        """Store ``value``, evicting the least recently used entries until both bounds hold;
        returns its digest, or None when it was not stored.

        An entry larger than an eighth of ``max_chars`` is not stored: it would
        push out many others for one page.
        """
        if len(value) > self.max_chars // 8:
            return None
        digest = _digest(key, value)
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._chars -= len(previous[0])
            self._entries[key] = (value, digest)
            self._chars += len(value)
            while len(self._entries) > self.max_entries or self._chars > self.max_chars:
                _, (evicted, _) = self._entries.popitem(last=False)
                self._chars -= len(evicted)
                self.stats.evictions += 1
        return digest

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def chars(self) -> int:
        """Total size of the stored entries, in characters (bytes for pages)."""
        return self._chars
