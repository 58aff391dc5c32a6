"""numba's ``njit`` as this package uses it: compiled once, cached on disk where possible.

numba compiles a function the first time it is called (a second or so per
function here). ``cache=True`` keeps the machine code in a ``__pycache__``
folder next to the source, or -- when that folder is read-only, as in a
system-wide install -- in numba's user-wide cache (``NUMBA_CACHE_DIR`` or the
user's cache folder). Where no cache location can be written at all, numba
refuses ``cache=True`` when the function is declared; we then compile without a
disk cache, so the first call in each process pays the compile time and later
calls in that process do not.
"""

from __future__ import annotations

from collections.abc import Callable

import numba


def jit(function: Callable | None = None, **options) -> Callable:
    """``numba.njit(cache=True, **options)``, without ``cache`` where nothing can be cached.

    Use as ``@jit`` or ``@jit(inline="always")`` (numba then inlines the function
    into its callers, which matters for small helpers called in inner loops).
    """
    if function is None:
        return lambda f: jit(f, **options)
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(**options)(function)


def jit_contracting(function: Callable) -> Callable:
    """Like :func:`jit`, but lets LLVM fuse ``a * b + c`` into one FMA instruction.

    Only the ``contract`` fast-math flag: each fused multiply-add rounds once
    instead of twice, and nothing is reordered.
    """
    return jit(function, fastmath={"contract"})
