"""Backends: plain functions that compute (cpu) or only describe (meta) results.

The CUDA dispatch key exists, but no CUDA kernels are registered yet.

Kernels take and return whylab Tensors but know nothing of dispatch keys; the op
table, ``whylab/dispatch/native_functions.py``, registers them with the dispatcher.
``rules.py`` holds the dtype and shape rules both real and meta kernels follow.
"""
