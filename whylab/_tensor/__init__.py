"""The tensor layer: a strided view over a flat storage, and what describes it.

``tensor.py`` defines :class:`~whylab._tensor.tensor.Tensor` (sizes, strides and
offset over a :class:`~whylab._tensor.storage.Storage`, plus its key set); next to
it are dtypes and promotion (``dtypes.py``), devices and the backend key each one
means (``device.py``), stride arithmetic (``geometry.py``), random generators
(``generator.py``) and printing (``printing.py``). This layer sits on
``whylab._core`` only; the dispatcher, the kernels and autograd are built on it.
"""
