"""Running a coroutine from a test while another event loop may be running in this thread.

Playwright's sync API (the browser tests' session fixtures) keeps an event loop running
in the main thread, so a plain ``asyncio.run`` there raises "cannot be called from a
running event loop" once a browser test has run earlier in the session.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_async(scenario):
    """``asyncio.run(scenario())`` in a thread of its own (a loop may be left running here)."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, scenario()).result()
