"""The real HTTP server (uvicorn with whylab's settings) on loopback: proxies, slow heads, caps."""

from __future__ import annotations

import socket
import threading
import time

import httpx

API = "/api/topics/tiny-demo/experiments"


def test_forwarded_for_is_ignored_unless_the_proxy_is_trusted(live_server):
    base = live_server(rate_burst=0.02, rate_per_s=0.001).base
    statuses = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for index in range(8):  # each spoofs a new address; each run costs >= 10 ms
            spoofed = {"X-Forwarded-For": f"10.0.0.{index + 1}"}
            statuses.append(client.get(f"{API}/sine?cycles={index + 1}", headers=spoofed))
    codes = [r.status_code for r in statuses]
    assert codes[0] == 200 and codes.count(429) >= 5, codes


def test_a_named_proxy_is_believed(live_server):
    base = live_server(rate_burst=0.02, rate_per_s=0.001, trusted_proxies=("127.0.0.1",)).base
    with httpx.Client(base_url=base, timeout=30) as client:
        codes = [
            client.get(
                f"{API}/sine?cycles={index + 1}",
                headers={"X-Forwarded-For": f"10.0.0.{index + 1}"},
            ).status_code
            for index in range(6)
        ]
    assert codes == [200] * 6  # six clients behind the proxy, one run each


def test_a_half_sent_request_head_is_closed_after_the_header_timeout(live_server):
    server = live_server(header_timeout_s=0.5)
    base, port = server.base, server.port
    with socket.create_connection(("127.0.0.1", port), timeout=20) as slow:
        slow.sendall(b"GET /api/topics HTTP/1.1\r\nHost: x\r\n")  # the blank line never comes
        assert slow.recv(1024) == b""  # closed by the server, long before our 20 s
    with socket.create_connection(("127.0.0.1", port), timeout=20) as silent:
        assert silent.recv(1024) == b""  # a connection that never sends is closed too
    assert httpx.get(f"{base}/api/topics", timeout=20).status_code == 200


def test_connections_past_the_cap_are_refused_at_once(live_server):
    server = live_server(max_connections=3)
    base, port = server.base, server.port
    idle = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(3)]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=20) as extra:
            answer = extra.recv(1024)
        assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in answer
    finally:
        for sock in idle:
            sock.close()
    for _ in range(100):  # the server notices the closed sockets a moment later
        response = httpx.get(f"{base}/api/topics", timeout=20)
        if response.status_code == 200:
            break
        time.sleep(0.05)
    assert response.status_code == 200


def test_a_request_whose_client_left_is_dropped_from_the_queue(live_server):
    server = live_server(workers=1)
    pool = server.app.state.pool
    request = b"GET " + API.encode() + b"/sleepy?seconds=0.3 HTTP/1.1\r\nHost: x\r\n\r\n"
    with httpx.Client(base_url=server.base, timeout=30) as client:
        blocker = threading.Thread(target=client.get, args=(f"{API}/sleepy?seconds=0.8",))
        blocker.start()
        for _ in range(500):  # until the one worker is busy with the blocker
            if pool.stats.jobs:
                break
            time.sleep(0.01)
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as leaver:
            leaver.sendall(request)
            for _ in range(500):  # until it waits in the queue; then its client hangs up
                if pool.queued:
                    break
                time.sleep(0.01)
        blocker.join()
        for _ in range(500):
            if pool.stats.abandoned:
                break
            time.sleep(0.01)
        assert client.get("/api/topics").status_code == 200
    assert pool.stats.abandoned == 1 and pool.queued == 0
    assert pool.stats.jobs == 1  # the abandoned run never reached a worker
