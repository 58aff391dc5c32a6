"""``torch.backends``: the flags programs set and the availability questions they ask.

The flags are plain attributes (nothing reads them: whylab has no cuDNN or MPS
backend); ``mps.is_available()`` and ``cuda.is_built()`` answer False.
"""

from __future__ import annotations

from types import SimpleNamespace

cudnn = SimpleNamespace(
    enabled=True,
    benchmark=False,
    deterministic=False,
    allow_tf32=True,
    is_available=lambda: False,
)
mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
cuda = SimpleNamespace(
    is_built=lambda: False,
    matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
)
