"""The worker pool's waiting line: one line per client, served round robin, bounded."""

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


class FairQueue:
    """Waiting jobs in one line per client, served round robin across clients.

    One client asking for many runs waits behind its own runs only: each
    :meth:`get` takes the oldest job of the client next in turn. An entry whose
    caller went away (its future is done) is removed at once by
    :meth:`discard`, so an abandoned request keeps no place in the queue.
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
        if self._size >= self.max_size or (line is not None and len(line) >= self.max_per_client):
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
