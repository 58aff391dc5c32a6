"""A cache of experiment results: SQLite on disk, bounded, checked, and never in the way.

Deterministic experiments give the same result for the same code and the same
parameters, so a result is stored under a key made of the topic (and a hash of
its ``experiments.py``), the experiment name, the engine version and the
canonical parameters (sorted JSON). Timing experiments are never stored: their
whole point is a fresh measurement.

The cache is an optimisation, so a storage fault never becomes an error page:

* **integrity** -- each record is stored with the SHA-256 of its key and text
  and checked on every read; a record that fails (a flipped byte, a half
  write) is deleted and reads as a miss, so the run is computed again.
* **faults** -- a cache folder that cannot be created, a file that is not a
  database, a read-only or full disk, a file truncated under a running server:
  each is logged once and the cache carries on. A damaged file is rebuilt
  empty; when the disk cannot be used at all, results are kept in memory
  (bounded) until restart. A file deleted (or replaced) under a running
  server is noticed at the next write, which reopens it, so later results are
  not written into a file nobody can open again. :attr:`ResultCache.fault` says why, and
  :meth:`ResultCache.describe` is the line ``whylab serve`` prints at start-up.
* **size** -- the records' total size is bounded (``max_bytes``); beyond it the
  least recently used records go first. "Used" is refreshed at most every
  ``touch_interval_s`` per record, so a cached read costs no disk write.
* **no shared memory** -- the database uses a rollback journal, not WAL: WAL
  maps a ``-shm`` file into memory, and a fault on that file (unwritable, on a
  full disk) arrives as SIGBUS, which kills the server instead of raising.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from whylab.explorer.runs.result_json import dumps

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
MAX_MEMORY_BYTES = 64 * 1024 * 1024  # the in-memory fallback stays small
DB_NAME = "results.sqlite3"
STORAGE_ERRORS = (sqlite3.Error, OSError)


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


def record_checksum(key: str, record: str) -> str:
    """What a stored record must hash to: its key and text (a record moved to another key fails)."""
    return hashlib.sha256(f"{key}\n{record}".encode()).hexdigest()


def _identity(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_dev, status.st_ino


def _is_damage(error: BaseException) -> bool:
    """A fault of the file's contents (rebuild it), not of the disk under it."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return True
    return isinstance(error, sqlite3.DatabaseError) and "no such table" in str(error)


class MemoryStore:
    """Least-recently-used key -> text in memory, at most ``max_bytes`` of text."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, str] = OrderedDict()
        self._bytes = 0

    def get(self, key: str) -> str | None:
        record = self._entries.get(key)
        if record is not None:
            self._entries.move_to_end(key)
        return record

    def put(self, key: str, record: str) -> None:
        size = len(record.encode())
        if size > self.max_bytes:
            return
        self.discard(key)
        self._entries[key] = record
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= len(evicted.encode())

    def discard(self, key: str) -> None:
        previous = self._entries.pop(key, None)
        if previous is not None:
            self._bytes -= len(previous.encode())

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0


class ResultCache:
    """key -> JSON text, safe to share between threads; see the module docstring."""

    def __init__(
        self,
        directory: Path,
        max_bytes: int = DEFAULT_MAX_BYTES,
        touch_interval_s: float = 60.0,
    ):
        if max_bytes < 1:
            raise ValueError(f"a result cache needs max_bytes >= 1, got {max_bytes}")
        self.path = Path(directory) / DB_NAME
        self.max_bytes = max_bytes
        self.touch_interval_s = touch_interval_s
        self.fault: str | None = None  # why the disk is not (fully) used, once there is a reason
        self._memory = MemoryStore(min(max_bytes, MAX_MEMORY_BYTES))
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._writable = True
        self._rebuilt = False
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file opened
        with self._lock:
            try:
                self._db = self._open()
            except STORAGE_ERRORS as error:
                self._recover("open", error)

    # -- opening and recovering

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=5)
        try:
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect on a new file only
            db.execute("PRAGMA journal_mode=DELETE")  # no WAL: no -shm mapping (see above)
            db.execute("PRAGMA mmap_size=0")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("DROP TABLE IF EXISTS results")  # the first layout, without checksums
            db.execute(
                "CREATE TABLE IF NOT EXISTS records ("
                " key TEXT PRIMARY KEY, topic TEXT NOT NULL, experiment TEXT NOT NULL,"
                " record TEXT NOT NULL, checksum TEXT NOT NULL, size INTEGER NOT NULL,"
                " used REAL NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS records_by_use ON records (used)")
            self._identity = _identity(self.path)
        except BaseException:
            db.close()
            raise
        return db

    def _reopen_if_gone(self) -> None:
        """Reopen the file if it was deleted or replaced since it was opened (put only)."""
        try:
            current = _identity(self.path)
        except OSError:
            current = None
        if current == self._identity or self._db is None:
            return
        log.warning("result cache: %s was deleted or replaced; opened it again", self.path)
        self._db.close()
        self._db = None
        self._db = self._open()

    def _recover(self, action: str, error: BaseException) -> None:
        """A storage fault: rebuild a damaged file once, else keep results in memory."""
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        if _is_damage(error) and not self._rebuilt:
            self._rebuilt = True
            try:
                for suffix in ("", "-journal", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
                self._db = self._open()
            except STORAGE_ERRORS as again:
                error = again
            else:
                self._note_fault(f"{self.path} was damaged ({error}) and was rebuilt empty")
                return
        self._note_fault(
            f"cannot {action} {self.path} ({type(error).__name__}: {error}); "
            "results are kept in memory until restart"
        )

    def _note_fault(self, message: str) -> None:
        if self.fault is None:
            log.warning("result cache: %s", message)
        self.fault = message

    # -- reading and writing

    def get(self, key: str) -> str | None:
        """The record stored under ``key``, or None (also for a record that fails its checksum)."""
        with self._lock:
            if self._db is None:
                return self._memory.get(key)
            try:
                return self._read(self._db, key)
            except STORAGE_ERRORS as error:
                self._recover("read", error)
                return self._memory.get(key)

    def _read(self, db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute(
            "SELECT record, checksum, used FROM records WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return self._memory.get(key)
        record, checksum, used = row
        if not isinstance(record, str) or record_checksum(key, record) != checksum:
            log.warning("result cache: record %s failed its checksum; dropped", key[:12])
            self._try_write(db, "DELETE FROM records WHERE key = ?", (key,))
            return None
        now = time.time()
        if now - used >= self.touch_interval_s:
            self._try_write(db, "UPDATE records SET used = ? WHERE key = ?", (now, key))
        return record

    def _try_write(self, db: sqlite3.Connection, statement: str, values: tuple) -> None:
        """A write made while reading: on a fault, stop writing to disk and carry on."""
        if not self._writable:
            return
        try:
            db.execute(statement, values)
        except STORAGE_ERRORS as error:
            self._stop_writing(error)

    def put(self, key: str, topic: str, experiment: str, record: str) -> None:
        """Store ``record``; on a write fault it goes to memory instead (logged once)."""
        with self._lock:
            if self._db is None or not self._writable:
                self._memory.put(key, record)
                return
            try:
                self._reopen_if_gone()
                assert self._db is not None
                self._write(self._db, key, topic, experiment, record)
            except STORAGE_ERRORS as error:
                if self._db is None:
                    self._recover("open", error)
                else:
                    self._stop_writing(error)
                self._memory.put(key, record)

    def _stop_writing(self, error: BaseException) -> None:
        self._writable = False
        self._note_fault(
            f"cannot write {self.path} ({type(error).__name__}: {error}); "
            "new results are kept in memory until restart"
        )

    def _write(self, db: sqlite3.Connection, key: str, topic: str, experiment: str, record: str):
        size = len(record.encode())
        if size > self.max_bytes:
            return
        checksum = record_checksum(key, record)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, topic, experiment, record, checksum, size, time.time()),
            )
            evicted = self._evict(db)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        if evicted:
            db.execute("PRAGMA incremental_vacuum")

    def _evict(self, db: sqlite3.Connection) -> int:
        """Delete least recently used records until the total fits ``max_bytes``."""
        (total,) = db.execute("SELECT COALESCE(SUM(size), 0) FROM records").fetchone()
        excess = total - self.max_bytes
        if excess <= 0:
            return 0
        doomed = []
        for key, size in db.execute("SELECT key, size FROM records ORDER BY used, rowid"):
            doomed.append((key,))
            excess -= size
            if excess <= 0:
                break
        db.executemany("DELETE FROM records WHERE key = ?", doomed)
        return len(doomed)

    # -- bookkeeping

    def describe(self) -> str:
        """One line for the start-up banner: where results are kept, or why only in memory."""
        if self._db is None or not self._writable:
            return f"result cache in memory only: {self.fault}"
        limit = f"at most {self.max_bytes / 2**20:g} MiB"
        if self.fault:
            return f"result cache {self.path} ({limit}; {self.fault})"
        return f"result cache {self.path} ({limit}, least recently used first out)"

    def __len__(self) -> int:
        with self._lock:
            on_disk = 0
            if self._db is not None:
                try:
                    on_disk = self._db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
                except STORAGE_ERRORS as error:
                    self._recover("read", error)
            return on_disk + len(self._memory)

    def clear(self) -> None:
        with self._lock:
            self._memory.clear()
            if self._db is not None and self._writable:
                try:
                    self._db.execute("DELETE FROM records")
                except STORAGE_ERRORS as error:
                    self._recover("write", error)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
