"""Imported by the worker pool's fork server: importing it compiles the numba kernels.

A fork server takes only module names to preload, so this module's import is
the warm-up (:func:`whylab.numerics.kernel_warmup.warm`); every worker forked
afterwards has the kernels compiled. A failure here is logged, never raised:
it would stop the fork server, and the kernels still compile on first use.
"""

import logging

from whylab.numerics.kernel_warmup import warm

try:
    warm()
except Exception:  # noqa: BLE001 - a warm-up that failed must not take the fork server down
    logging.getLogger(__name__).exception("numba kernels not compiled ahead of use")
