"""Attacks on the HTTP server itself, on loopback: slow sockets from one address, smuggling.

Every socket stays on 127.0.0.0/8. The server listens on 127.0.0.1; an
attacker's sockets are bound to the source address 127.0.0.2 (Linux routes the
whole 127/8 block to the loopback device), so the server sees two client
addresses without believing any forwarded header.
"""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from whylab.explorer.web.conn_limits import AddressLedger, proxy_networks
from whylab.explorer.web.server import raise_descriptor_limit

ATTACKER = "127.0.0.2"
SLOW_HEAD = (
    b"POST /api/topics/tiny-demo/experiments/clock/timing-runs?n=500 HTTP/1.1\r\n"
    b"Host: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    b"Content-Length: 1000\r\n\r\nn"
)


def slow_socket(port: int) -> socket.socket | None:
    """A connection from the attacker's address that sent a request head and one body byte."""
    sock = socket.socket()
    sock.settimeout(5)
    sock.bind((ATTACKER, 0))
    try:
        sock.connect(("127.0.0.1", port))
        sock.sendall(SLOW_HEAD)
    except OSError:
        sock.close()
        return None
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (a refusal's answer and EOF, or a reset)."""
    sock.settimeout(0.0)
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_one_address_with_1000_slow_sockets_cannot_deny_another_address_its_pages(live_server):
    raise_descriptor_limit(4096)
    server = live_server(body_timeout_s=1.5, max_connections=256, max_connections_per_client=32)
    attack: list[socket.socket] = []
    try:
        for _ in range(1000):
            sock = slow_socket(server.port)
            if sock is not None:
                attack.append(sock)
        probes = []
        with httpx.Client(base_url=server.base, timeout=10) as visitor:  # from 127.0.0.1
            for index in range(20):
                for sock in attack:  # the attacker keeps its bodies trickling
                    try:
                        sock.send(b"1")
                    except OSError:
                        pass
                path = "/api/topics" if index % 2 else "/en/"
                probes.append(visitor.get(path).status_code)
        assert probes == [200] * 20, probes
        held = [sock for sock in attack if not closed_by_server(sock)]
        assert len(held) <= 32, len(held)  # the rest were answered 429 and closed
        # The bodies never finish: each held socket is closed once the body timeout passes.
        deadline = time.monotonic() + 10
        while held and time.monotonic() < deadline:
            held = [sock for sock in held if not closed_by_server(sock)]
            time.sleep(0.1)
        assert held == []
    finally:
        for sock in attack:
            sock.close()


def test_a_refused_connection_is_told_why(live_server):
    server = live_server(max_connections_per_client=2)
    held = [slow_socket(server.port) for _ in range(2)]
    try:
        refused = slow_socket(server.port)
        assert refused is not None
        with refused:
            refused.settimeout(10)
            answer = refused.recv(4096)
        assert answer.startswith(b"HTTP/1.1 429") and b"Retry-After: 1" in answer
        assert b"from one address" in answer
        # Another address is not limited by the first one's connections.
        assert httpx.get(f"{server.base}/api/topics", timeout=10).status_code == 200
    finally:
        for sock in held:
            if sock is not None:
                sock.close()


def test_an_idle_keep_alive_connection_is_closed(live_server):
    server = live_server(keep_alive_s=1)
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        sock.sendall(b"GET /api/topics HTTP/1.1\r\nHost: x\r\n\r\n")
        started = time.monotonic()
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        assert received.startswith(b"HTTP/1.1 200")
        assert time.monotonic() - started < 10  # closed by the server, not our 20 s timeout


def test_content_length_with_transfer_encoding_is_refused_and_the_connection_closed(
    live_server,
):
    server = live_server()
    smuggled = (
        b"POST /api/topics HTTP/1.1\r\nHost: x\r\nContent-Length: 44\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        b"GET /api/topics/tiny-demo HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
        sock.sendall(smuggled)
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    assert received.startswith(b"HTTP/1.1 400"), received[:200]
    assert b"connection: close" in received.lower()
    assert received.count(b"HTTP/1.1 ") == 1  # the request after it was never read
    # Each header alone is fine.
    with httpx.Client(base_url=server.base, timeout=10) as client:
        assert client.get("/api/topics").status_code == 200


def test_the_ledger_counts_each_address_and_leaves_trusted_proxies_to_the_global_cap():
    ledger = AddressLedger(2, proxy_networks(["127.0.0.8/29"]))
    assert [ledger.admit("127.0.0.2") for _ in range(3)] == [True, True, False]
    assert ledger.admit("127.0.0.3")  # another address has its own count
    assert all(ledger.admit("127.0.0.9") for _ in range(10))  # a trusted proxy's clients
    ledger.release("127.0.0.2")
    assert ledger.open_from("127.0.0.2") == 1 and ledger.admit("127.0.0.2")
    with pytest.raises(ValueError, match="not an IP address or network"):
        proxy_networks(["*"])
