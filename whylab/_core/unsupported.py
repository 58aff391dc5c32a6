"""The error for a torch API whylab does not have: it names the torch API.

A program written for torch that reaches a name whylab lacks (``torch.fft``,
``torch.nn.Transformer``, ``F.grid_sample``, ``t.lu()``) gets an AttributeError
saying which torch API it asked for and that whylab does not support it yet,
instead of a bare ``module 'whylab' has no attribute``. ``tools/api_coverage.md``
lists the torch API tutorials use, with what is supported.
"""

from __future__ import annotations

COVERAGE_TABLE = "tools/api_coverage.md"


def unsupported(torch_name: str, where: str, name: str) -> AttributeError:
    """The AttributeError for ``torch_name`` (e.g. ``torch.nn.Transformer``).

    It stays an AttributeError, so ``hasattr`` and ``getattr(obj, name, default)``
    keep working and ``from torch import X`` still becomes an ImportError.
    """
    return AttributeError(
        f"{torch_name} is not supported yet by whylab ({where} has no attribute {name!r}; "
        f"see {COVERAGE_TABLE} for the torch API whylab covers)"
    )


def module_getattr(torch_module: str, module_name: str):
    """A module ``__getattr__`` that refuses every unknown public name with :func:`unsupported`."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise unsupported(f"{torch_module}.{name}", f"module {module_name!r}", name)

    return __getattr__


def tensor_getattr(self, name: str):
    """``Tensor.__getattr__``: runs only when normal lookup failed."""
    if name.startswith("_"):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")
    raise unsupported(f"torch.Tensor.{name}", f"'{type(self).__name__}' object", name)
