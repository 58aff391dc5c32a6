"""Python protocols of torch's Tensor that are no operator: ``format(t, spec)``, and the
error for a Tensor attribute whylab lacks (``tensor_getattr``, naming the torch API)."""

from __future__ import annotations

from whylab._core.unsupported import tensor_getattr
from whylab._tensor.tensor import Tensor

__all__ = ["format_", "tensor_getattr"]


def format_(self, format_spec: str) -> str:
    """``f"{loss:.4f}"``: a 0-d tensor formats as its Python number, as in torch.

    Any other tensor (and a subclass such as ``Parameter``, as in torch) takes
    ``object.__format__``: its ``str`` for an empty spec, a TypeError for any other.
    """
    if self.dim() == 0 and self.device.type != "meta" and type(self) is Tensor:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)
