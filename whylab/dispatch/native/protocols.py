"""Python protocols of torch's Tensor that are no operator: ``format(t, spec)``."""

from __future__ import annotations

from whylab._tensor.tensor import Tensor


def format_(self, format_spec: str) -> str:
    """``f"{loss:.4f}"``: a 0-d tensor formats as its Python number, as in torch.

    Any other tensor (and a subclass such as ``Parameter``, as in torch) takes
    ``object.__format__``: its ``str`` for an empty spec, a TypeError for any other.
    """
    if self.dim() == 0 and self.device.type != "meta" and type(self) is Tensor:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)
