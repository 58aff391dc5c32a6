"""The result cache on Redis: one cache for every ``whylab serve`` of a deployment.

It keeps the contract of :class:`whylab.explorer.runs.cache.ResultCache` (the
embedded SQLite cache) and its ideas, reused rather than rewritten: the same
keys (:func:`~whylab.explorer.runs.cache.cache_key`), the same record checksum
(:func:`~whylab.explorer.runs.cache.record_checksum`, checked on every read; a record
that fails is deleted and reads as a miss, so the run is computed again), the
same bounded in-memory fallback (:class:`~whylab.explorer.runs.cache.MemoryStore`)
and a size bound with least-recently-used eviction.

Layout (all under the ``whylab:`` prefix):

* ``whylab:result:<key>`` -- a hash: ``record`` (the JSON text), ``checksum``, ``size``;
* ``whylab:results:used`` -- a sorted set of keys by last use (refreshed at most every
  ``touch_interval_s``, so a cached read costs no write);
* ``whylab:results:bytes`` -- the records' total size.

A write and its evictions run as one Lua script, so several servers writing at
once keep the total right. The script touches keys it computes (the evicted
records), so this needs a single Redis server, not Redis Cluster.

When Redis cannot be reached, reads miss (or find what this server kept in
memory meanwhile) and writes go to memory; :class:`~whylab.explorer.runs.redis.link.RedisLink`
logs the outage once.
"""

from __future__ import annotations

import logging
import time

from whylab.explorer.runs.cache import (
    DEFAULT_MAX_BYTES,
    MAX_MEMORY_BYTES,
    MemoryStore,
    record_checksum,
)
from whylab.explorer.runs.redis.link import RedisLink

log = logging.getLogger(__name__)

# KEYS: record hash, use index, byte total. ARGV: key, record, checksum, size, now,
# max bytes, the record key prefix. Returns how many records were evicted.
_PUT = """
local old = redis.call('HGET', KEYS[1], 'size')
if old then redis.call('DECRBY', KEYS[3], old) end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'checksum', ARGV[3], 'size', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
local total = redis.call('INCRBY', KEYS[3], ARGV[4])
local evicted = 0
while total > tonumber(ARGV[6]) do
  local oldest = redis.call('ZPOPMIN', KEYS[2])
  if #oldest == 0 then break end
  local victim = ARGV[7] .. oldest[1]
  local size = tonumber(redis.call('HGET', victim, 'size')) or 0
  redis.call('DEL', victim)
  total = redis.call('DECRBY', KEYS[3], size)
  evicted = evicted + 1
end
return evicted
"""

# KEYS: record hash, use index, byte total. ARGV: key.
_DROP = """
local size = tonumber(redis.call('HGET', KEYS[1], 'size')) or 0
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DECRBY', KEYS[3], size)
return size
"""


class RedisResultCache:
    """key -> JSON text on a shared Redis; the same methods as ``ResultCache``."""

    def __init__(
        self, link: RedisLink, max_bytes: int = DEFAULT_MAX_BYTES, touch_interval_s: float = 60.0
    ):
        if max_bytes < 1:
            raise ValueError(f"a result cache needs max_bytes >= 1, got {max_bytes}")
        self.link = link
        self.max_bytes = max_bytes
        self.touch_interval_s = touch_interval_s
        self.fault: str | None = None  # the last fault of a single call (not an outage)
        self._memory = MemoryStore(min(max_bytes, MAX_MEMORY_BYTES))
        self._record_prefix = link.key("result", "")
        self._used = link.key("results", "used")
        self._bytes = link.key("results", "bytes")
        self._put = link.sync.register_script(_PUT)
        self._drop = link.sync.register_script(_DROP)

    def _keys(self, key: str) -> list[str]:
        return [self._record_prefix + key, self._used, self._bytes]

    def get(self, key: str) -> str | None:
        """The record stored under ``key``, or None (also for a record that fails its checksum)."""
        if not self.link.usable():
            return self._memory.get(key)
        try:
            with self.link.sync.pipeline(transaction=False) as pipe:
                pipe.hmget(self._record_prefix + key, "record", "checksum")
                pipe.zscore(self._used, key)
                (record, checksum), used = pipe.execute()
            self.link.worked()
            if record is None:
                return self._memory.get(key)
            text = record.decode("utf-8", errors="replace")
            if checksum is None or record_checksum(key, text) != checksum.decode(
                "ascii", "replace"
            ):
                log.warning("result cache: record %s failed its checksum; dropped", key[:12])
                self._drop(keys=self._keys(key), args=[key])
                return None
            now = time.time()
            if used is None or now - used >= self.touch_interval_s:
                self.link.sync.zadd(self._used, {key: now}, xx=used is not None)
            return text
        except self.link.errors as error:
            self._fault("read", error)
            return self._memory.get(key)

    def put(self, key: str, topic: str, experiment: str, record: str) -> None:
        """Store ``record`` (evicting the least recently used beyond ``max_bytes``)."""
        size = len(record.encode())
        if size > self.max_bytes:
            return
        if not self.link.usable():
            self._memory.put(key, record)
            return
        try:
            self._put(
                keys=self._keys(key),
                args=[
                    key,
                    record,
                    record_checksum(key, record),
                    size,
                    time.time(),
                    self.max_bytes,
                    self._record_prefix,
                ],
            )
            self.link.worked()
        except self.link.errors as error:
            self._fault("write", error)
            self._memory.put(key, record)

    def _fault(self, action: str, error: BaseException) -> None:
        if isinstance(error, self.link.outage_errors):
            self.link.failed(error)
            return
        message = f"cannot {action} a record on {self.link.where} ({type(error).__name__}: {error})"
        if message != self.fault:
            log.warning("result cache: %s", message)
        self.fault = message

    def describe(self) -> str:
        """One line for the start-up banner."""
        limit = f"at most {self.max_bytes / 2**20:g} MiB"
        return f"result cache shared on {self.link.where} ({limit}, least recently used first out)"

    def __len__(self) -> int:
        try:
            return int(self.link.sync.zcard(self._used)) + len(self._memory)
        except self.link.errors as error:
            self._fault("count", error)
            return len(self._memory)

    def clear(self) -> None:
        self._memory.clear()
        try:
            keys = [
                self._record_prefix + k.decode() for k in self.link.sync.zrange(self._used, 0, -1)
            ]
            self.link.sync.delete(self._used, self._bytes, *keys)
        except self.link.errors as error:
            self._fault("clear", error)

    def close(self) -> None:
        """Nothing to release here: the link is closed with the app."""
