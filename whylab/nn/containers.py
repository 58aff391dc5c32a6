"""Containers that register the modules they hold: ModuleList, ModuleDict, ParameterList.

(``Sequential``, which also runs its children, is in :mod:`whylab.nn.layers`.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from .module import Module
from .parameter import Parameter


class ModuleList(Module):
    """A list of modules whose parameters belong to the parent (a plain list's would not)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, index: int) -> str:
        count = len(self._modules)
        if not -count <= index < count:
            raise IndexError(f"index {index} is out of range")
        return str(index % count)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModuleList(list(self._modules.values())[index])
        return self._modules[self._index(index)]

    def __setitem__(self, index: int, module: Module) -> None:
        self.add_module(self._index(index), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for position, item in enumerate(items):
            self.add_module(str(position), item)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward; iterate over it in yours")


class ModuleDict(Module):
    """A dict of modules, registered under their keys (insertion order kept)."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def update(self, modules) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward; index it in yours")


class ParameterList(Module):
    """A list of parameters registered on the module (named "0", "1", ...)."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        for value in values or ():
            self.append(value)

    def append(self, value) -> ParameterList:
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(str(len(self._parameters)), value)
        return self

    def __getitem__(self, index: int) -> Parameter:
        return list(self._parameters.values())[index]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())


class ParameterDict(Module):
    """A dict of parameters registered under their keys."""

    def __init__(self, values: Mapping | None = None) -> None:
        super().__init__()
        for key, value in OrderedDict(values or {}).items():
            self[key] = value

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(key, value)

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()
