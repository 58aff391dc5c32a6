"""The guard in front of every route: oversized URLs refused before routing, HEAD answered
as GET without its body, and the security headers on every answer."""

from __future__ import annotations

import json

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


class GuardMiddleware:
    """Reject oversized URLs before routing, answer HEAD as GET, add security headers."""

    def __init__(self, app, max_query_bytes: int, max_path_bytes: int = 512):
        self.app = app
        self.max_query_bytes = max_query_bytes
        self.max_path_bytes = max_path_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw_path = scope.get("raw_path", b"") or scope["path"].encode()
        if (
            len(scope.get("query_string", b"")) > self.max_query_bytes
            or len(raw_path) > self.max_path_bytes
        ):
            detail = f"URL too long (query limit {self.max_query_bytes} bytes)"
            await _send_json(send, 414, detail)
            return
        if b"%2f" in raw_path.lower() or b"%5c" in raw_path.lower():
            # The server decodes %2F to "/" before routing; a slash or backslash in a
            # name is never one of ours, so it is not found rather than re-routed.
            await _send_json(send, 404, "no such path (an encoded / or \\ is not allowed)")
            return

        head = scope["method"] == "HEAD"
        if head:  # answer HEAD like GET, without the body (link checkers, curl -I)
            scope = {**scope, "method": "GET"}

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            elif head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _send_json(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
