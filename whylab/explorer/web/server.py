"""The HTTP server's own limits: who the client is, how long a request head may take, how many.

``whylab serve`` runs the app on uvicorn with :func:`server_settings`:

* **forwarded headers** -- uvicorn believes ``X-Forwarded-For`` from
  127.0.0.1 unless told otherwise, so any local caller could pick its own
  address and step around the per-client rate limit. Here the header is
  believed only from the proxies the operator names (``--trusted-proxy``);
  with none named, a client is the address of its socket.
* **header timeout** -- uvicorn closes an idle keep-alive connection
  (``timeout_keep_alive``) but has no limit on a request head sent slowly:
  a half-sent request stays open for as long as its sender likes
  (slowloris). :class:`GuardedH11Protocol` closes a connection whose request
  head is not complete ``header_timeout_s`` after its first byte (or after the
  connection opened).
* **connection cap** -- each open connection holds a file descriptor; past
  ``max_connections`` a new connection is answered 503 and closed at once, so
  idle sockets cannot use up the descriptors every other client needs.
  (uvicorn's ``limit_concurrency`` answers 503 per *request* but keeps the
  connection, and so its descriptor.)
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 25\r\n\r\ntoo many open connections"
)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head timeout and a cap on open connections."""

    header_timeout_s: float = 10.0
    max_connections: int = 256

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.write(BUSY_RESPONSE)
            transport.close()
            return
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        waiting_for_head = self.conn.their_state is h11.IDLE
        if waiting_for_head and self.conn.trailing_data[0]:
            self._arm_header_timer()  # part of a head came: the clock runs from here on
        elif not waiting_for_head:
            self._cancel_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._head_too_slow)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _head_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.info("closing a connection whose request head took too long")
            self.transport.close()


def guarded_protocol(header_timeout_s: float, max_connections: int) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` class with these limits (uvicorn takes a class)."""
    if not header_timeout_s > 0 or max_connections < 1:
        raise ValueError("a header timeout > 0 s and at least one connection are needed")
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"header_timeout_s": header_timeout_s, "max_connections": max_connections},
    )


def server_settings(config: Any) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run``/``uvicorn.Config`` from an ``ExplorerConfig``."""
    trusted = list(config.trusted_proxies)
    return {
        "http": guarded_protocol(config.header_timeout_s, config.max_connections),
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted,
        "timeout_keep_alive": config.keep_alive_s,
        "server_header": False,
    }


def raise_descriptor_limit(wanted: int) -> int:
    """Raise this process's soft open-file limit towards ``wanted`` (within the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft
