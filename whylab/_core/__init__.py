"""The bottom layer of the engine: what the tensor and everything above it build on.

PyTorch keeps its dispatch keys in ``c10/core``, below ``TensorImpl``: a tensor
records its key set, so the keys cannot live in the dispatcher that sits above
the tensor. whylab does the same. This package imports nothing else of whylab:

* :mod:`whylab._core.keys` -- dispatch keys and key-set bitmasks;
* :mod:`whylab._core.thread_state` -- every per-thread store of the engine.
"""
