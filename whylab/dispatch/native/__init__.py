"""The hand-written parts of the native operators, one module per family.

The op table, ``whylab/dispatch/native_functions.py``, lists every operator with
its schema, kernels and Python names; :mod:`~whylab.dispatch.native.codegen`
turns it into operators, public functions and Tensor methods. The modules here
hold what the table references and cannot generate: composite kernels written in
terms of other operators (``matmul``, ``reshape``, ``stack``...) and bindings whose
Python signature is not a plain call in schema order (``Tensor.view(*shape)``,
``max(t, dim)``, the factories with ``*size``). Importing this package registers
nothing; importing the table does.
"""
