"""The worker pool's waiting line: one line per client, served round robin, bounded.

A client may hold only its share of the room (:func:`client_share`), and the last
places are kept for clients with nothing waiting (:func:`newcomer_room`); the Redis
queue (:mod:`whylab.explorer.runs.redis.queue`) applies the same two rules across
servers.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any


@dataclass(eq=False)
class _Entry:
    job: Any  # a whylab.explorer.runs.workers.Job
    future: asyncio.Future
    client: str
    enqueued: float
    started: bool = False


def client_share(max_size: int, max_per_client: int, others: int) -> int:
    """The runs one client may have waiting while ``others`` other clients have some.

    Alone, ``max_per_client``; else ``max_size // (others + 2)`` (at most
    ``max_per_client``, at least 1): ``k`` clients each at their share hold at
    most ``k / (k + 1)`` of the room, so a newcomer finds a place.
    """
    if others == 0:
        return max_per_client
    return max(1, min(max_per_client, max_size // (others + 2)))


def newcomer_room(max_size: int) -> int:
    """Places of a queue of ``max_size`` kept for clients with nothing waiting yet (an eighth)."""
    return max_size // 8


class FairQueue:
    """Waiting jobs in one line per client, served round robin across clients.

    One client asking for many runs waits behind its own runs only: each
    :meth:`get` takes the oldest job of the client next in turn. An entry whose
    caller went away (its future is done) is removed at once by
    :meth:`discard`, so an abandoned request keeps no place in the queue.

    A client may queue its share of the room only (:func:`client_share`): with
    ``k`` other clients waiting, ``max_size // (k + 2)``; and the last
    :func:`newcomer_room` places are kept for clients with nothing waiting, so
    however hard a few clients push, another finds a place.
    """

    def __init__(self, max_size: int, max_per_client: int):
        if max_size < 1 or max_per_client < 1:
            raise ValueError("a queue needs room for at least one job (per client too)")
        self.max_size = max_size
        self.max_per_client = max_per_client
        self._lines: OrderedDict[str, deque[_Entry]] = OrderedDict()
        self._size = 0
        self._getters: deque[asyncio.Future] = deque()

    def __len__(self) -> int:
        return self._size

    def put(self, entry: _Entry) -> bool:
        """Add ``entry`` at the back of its client's line; False when there is no room."""
        line = self._lines.get(entry.client)
        others = len(self._lines) - (line is not None)
        share = client_share(self.max_size, self.max_per_client, others)
        room = self.max_size - (newcomer_room(self.max_size) if line is not None else 0)
        if self._size >= room or (line is not None and len(line) >= share):
            return False
        if line is None:
            line = self._lines[entry.client] = deque()
        line.append(entry)
        self._size += 1
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                break
        return True

    def discard(self, entry: _Entry) -> None:
        """Take ``entry`` out of its line if it is still waiting there."""
        line = self._lines.get(entry.client)
        if line is not None and entry in line:
            line.remove(entry)
            self._size -= 1
            if not line:
                del self._lines[entry.client]

    async def get(self) -> _Entry:
        """The next job: the oldest of the client whose turn it is."""
        while not self._lines:
            getter = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except asyncio.CancelledError:
                if getter.done() and not getter.cancelled():
                    self._pass_on_wakeup()
                raise
        client, line = next(iter(self._lines.items()))
        entry = line.popleft()
        self._size -= 1
        del self._lines[client]
        if line:  # back of the round
            self._lines[client] = line
        return entry

    def _pass_on_wakeup(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return
