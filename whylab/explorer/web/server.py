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
* **body timeout** -- likewise a request body sent a byte at a time: the body
  must be complete ``body_timeout_s`` after its head, or the connection is
  closed. (Between requests, uvicorn's ``timeout_keep_alive`` closes an idle
  connection; once the next head starts, the header timeout runs.)
* **connections per client address** -- at most ``max_connections_per_client``
  open connections from one address (trusted proxies excepted, see
  :mod:`whylab.explorer.web.conn_limits`); past it a new one is answered 429 and
  closed, so one address cannot fill the server-wide cap below.
* **connection cap** -- each open connection holds a file descriptor; past
  ``max_connections`` a new connection is answered 503 and closed at once, so
  idle sockets cannot use up the descriptors every other client needs.
  (uvicorn's ``limit_concurrency`` answers 503 per *request* but keeps the
  connection, and so its descriptor.)
* **framing** -- a request with both ``Content-Length`` and
  ``Transfer-Encoding`` is answered 400 and its connection closed (request
  smuggling, :class:`~whylab.explorer.web.conn_limits.StrictH11Connection`).
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE, H11Protocol

from whylab.explorer.web.conn_limits import AddressLedger, StrictH11Connection, proxy_networks

BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 25\r\n\r\ntoo many open connections"
)
ADDRESS_BUSY_RESPONSE = (
    b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 42\r\n\r\n"
    b"too many open connections from one address"
)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with head and body timeouts and caps on open connections."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    max_connections: int = 256
    ledger: AddressLedger = AddressLedger(32)  # one per server: see guarded_protocol

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit = self.config.h11_max_incomplete_event_size
        self.conn = StrictH11Connection(
            h11.SERVER, DEFAULT_MAX_INCOMPLETE_EVENT_SIZE if limit is None else limit
        )

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_timer: asyncio.TimerHandle | None = None
        self._timing_phase: object = None  # the h11 state the timer is armed for
        self._counted_as: str | None = None
        super().connection_made(transport)
        address = self.client[0] if self.client else ""
        if len(self.connections) > self.max_connections:
            refusal = BUSY_RESPONSE
        elif not self.ledger.admit(address):
            refusal = ADDRESS_BUSY_RESPONSE
        else:
            self._counted_as = address
            self._arm_header_timer()
            return
        self.connections.discard(self)  # a refused connection holds no slot of the cap
        transport.write(refusal)
        transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE and self.conn.trailing_data[0]:
            self._arm_header_timer()  # part of a head came: the clock runs from here on
        elif state is h11.SEND_BODY:
            self._arm_timer(self.body_timeout_s, h11.SEND_BODY)  # from the head's end on
        elif state is not h11.IDLE:
            self._cancel_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        if self._counted_as is not None:
            self.ledger.release(self._counted_as)
            self._counted_as = None
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._arm_timer(self.header_timeout_s, h11.IDLE)

    def _arm_timer(self, seconds: float, phase: object) -> None:
        if self._header_timer is not None and self._timing_phase is not phase:
            self._cancel_header_timer()  # the head is in: the body's own clock starts
        if self._header_timer is None:
            self._timing_phase = phase
            self._header_timer = self.loop.call_later(seconds, self._too_slow)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is self._timing_phase and not self.transport.is_closing():
            part = "head" if self._timing_phase is h11.IDLE else "body"
            self.logger.info("closing a connection whose request %s took too long", part)
            self.transport.close()


def guarded_protocol(
    header_timeout_s: float,
    max_connections: int,
    body_timeout_s: float = 10.0,
    per_client: int = 32,
    trusted_proxies: tuple[str, ...] = (),
) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` class with these limits (uvicorn takes a class).

    Each class has its own :class:`AddressLedger`: call this once per server.
    """
    if not header_timeout_s > 0 or not body_timeout_s > 0 or max_connections < 1:
        raise ValueError("header and body timeouts > 0 s and at least one connection are needed")
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {
            "header_timeout_s": header_timeout_s,
            "body_timeout_s": body_timeout_s,
            "max_connections": max_connections,
            "ledger": AddressLedger(per_client, proxy_networks(trusted_proxies)),
        },
    )


def server_settings(config: Any) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run``/``uvicorn.Config`` from an ``ExplorerConfig``."""
    trusted = list(config.trusted_proxies)
    return {
        "http": guarded_protocol(
            config.header_timeout_s,
            config.max_connections,
            config.body_timeout_s,
            config.max_connections_per_client,
            tuple(trusted),
        ),
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
