"""The explorer's static files: fingerprinted URLs, so a browser keeps them for a year.

A page names each stylesheet, script and icon with ``?v=`` and a hash of the
file's bytes (:func:`fingerprint`); the math font's file name carries its own
hash (:mod:`whylab.explorer.web.fonts.subset`). A request that names the current
fingerprint is answered ``Cache-Control: public, max-age=31536000, immutable``:
when the file changes, so does every URL that names it. Any other request (no
``v``, a stale one) must revalidate (``no-cache``), with the ETag Starlette sets.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from starlette.staticfiles import StaticFiles
from starlette.types import Scope

STATIC_DIR = Path(__file__).resolve().parent / "static"
A_YEAR = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
HASHED_NAME = re.compile(r"-[0-9a-f]{10}\.[a-z0-9]+$")  # NotoSansMath-7899f5943e.woff2


@functools.cache
def fingerprint(name: str) -> str:
    """The first 10 hex digits of the SHA-256 of ``static/name`` (read once a process)."""
    return hashlib.sha256((STATIC_DIR / name).read_bytes()).hexdigest()[:10]


class FingerprintedStaticFiles(StaticFiles):
    """StaticFiles that lets browsers keep a file for a year when its URL is fingerprinted."""

    def file_response(self, full_path, stat_result, scope: Scope, status_code: int = 200):
        response = super().file_response(full_path, stat_result, scope, status_code)
        name = Path(full_path).relative_to(STATIC_DIR).as_posix()
        query = scope.get("query_string", b"").decode("latin-1")
        named = HASHED_NAME.search(name) is not None or f"v={fingerprint(name)}" in query.split("&")
        response.headers["cache-control"] = A_YEAR if named else REVALIDATE
        return response
