"""Per-connection rules of the HTTP server: connections per client address, message framing.

Used by :mod:`whylab.explorer.web.server`'s protocol class:

* :class:`AddressLedger` counts the open connections of each client address, so
  one address cannot hold every slot of the server-wide cap (each slow socket
  it keeps open is one slot fewer for everybody else). Connections from a
  trusted proxy are not counted per address: they carry many clients, and the
  proxy limits its own.
* :class:`StrictH11Connection` is h11's server connection refusing a request
  head that names both ``Content-Length`` and ``Transfer-Encoding``. h11 would
  frame such a message by ``Transfer-Encoding`` and keep the connection for the
  next request; a proxy in front that framed it by ``Content-Length`` would then
  see a different next request than we do (request smuggling). RFC 9112 §6.1
  lets a server reject it, and requires closing the connection either way; the
  protocol answers the refusal 400 and closes.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Iterable

import h11

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def proxy_networks(proxies: Iterable[str]) -> tuple[Network, ...]:
    """``--trusted-proxy`` values as networks; a value that is no address nor network raises.

    ``10.0.0.5`` is one host; ``10.0.0.0/8`` a network. Names and ``*`` are refused:
    believing ``X-Forwarded-For`` from anything would let any caller pick its address.
    """
    networks = []
    for proxy in proxies:
        try:
            networks.append(ipaddress.ip_network(proxy.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"trusted proxy {proxy!r} is not an IP address or network (like 10.0.0.5 "
                "or 10.0.0.0/8)"
            ) from None
    return tuple(networks)


def is_within(address: str, networks: tuple[Network, ...]) -> bool:
    """Whether ``address`` (a socket peer's host) lies in one of ``networks``."""
    try:
        host = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(host in network for network in networks)


class AddressLedger:
    """Open connections by client address, each admitted only under ``per_address``."""

    def __init__(self, per_address: int, exempt: tuple[Network, ...] = ()):
        if per_address < 1:
            raise ValueError("at least one connection per client address is needed")
        self.per_address = per_address
        self.exempt = exempt
        self._open: Counter[str] = Counter()

    def admit(self, address: str) -> bool:
        """Count one more connection of ``address``; False (and not counted) past the limit."""
        if is_within(address, self.exempt):
            return True
        if self._open[address] >= self.per_address:
            return False
        self._open[address] += 1
        return True

    def release(self, address: str) -> None:
        """One connection of ``address``, admitted before, has closed."""
        if address in self._open:
            self._open[address] -= 1
            if self._open[address] <= 0:
                del self._open[address]

    def open_from(self, address: str) -> int:
        return self._open[address]


def is_ambiguously_framed(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request head names both a Content-Length and a Transfer-Encoding."""
    names = {name.lower() for name, _ in headers}
    return b"content-length" in names and b"transfer-encoding" in names


class StrictH11Connection(h11.Connection):
    """h11's connection, refusing a request framed by both Content-Length and Transfer-Encoding.

    The refusal is h11's own ``RemoteProtocolError``, raised as the request
    arrives and before the application sees it, which uvicorn answers 400
    with ``Connection: close`` and then closes, so nothing after it on the
    connection is read as a request.
    """

    def next_event(self):  # type: ignore[override]
        event = super().next_event()
        if isinstance(event, h11.Request) and is_ambiguously_framed(event.headers):
            raise h11.RemoteProtocolError(
                "a request with both Content-Length and Transfer-Encoding", 400
            )
        return event
