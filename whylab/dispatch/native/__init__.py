"""The native operators: schemas, the kernels registered for each key, and Python bindings.

One module per family plays the role of PyTorch's ``native_functions.yaml`` entry
plus its generated Python binding: it ``define``s each schema, registers the
CPU and Meta kernels (and CUDA ones when CuPy is present), and provides the
public functions (``whylab.add``) and Tensor methods (``Tensor.add``, ``+``).
Importing this package registers every operator.
"""

from whylab.dispatch.native import (  # noqa: F401  (imported for their registrations)
    backward_ops,
    elementwise,
    factory,
    indexing,
    legacy,
    linalg,
    loss,
    ordering,
    reduction,
    sampling,
    shape,
)
