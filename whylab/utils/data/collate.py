"""``default_collate``: a list of samples becomes one batch, keeping the samples' structure.

Tensors are stacked along a new first dimension; Python floats become a float64
tensor and ints an int64 one; NumPy arrays become tensors and are stacked;
tuples, lists and dicts are collated field by field; strings stay a list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from whylab._tensor.dtypes import float64, int64
from whylab._tensor.tensor import Tensor
from whylab.dispatch.native_functions import FUNCTIONS

# whylab.stack, whylab.as_tensor and whylab.tensor, from the op table the facade exports
# them from (this module sits below the facade, which imports it).
stack, as_tensor, tensor = FUNCTIONS["stack"], FUNCTIONS["as_tensor"], FUNCTIONS["tensor"]


def default_collate(batch):
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch), 0)
    if isinstance(first, np.ndarray):
        return stack([as_tensor(item) for item in batch], 0)
    if isinstance(first, bool):
        return tensor(list(batch))
    if isinstance(first, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(first, int):
        return tensor(list(batch), dtype=int64)
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a named tuple
        return type(first)(*(default_collate(list(field)) for field in zip(*batch, strict=True)))
    if isinstance(first, Sequence):
        sizes = {len(sample) for sample in batch}
        if len(sizes) != 1:
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(field)) for field in zip(*batch, strict=True)]
        return columns if isinstance(first, list) else tuple(columns)
    raise TypeError(
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
        f"lists; found {type(first).__name__}"
    )
