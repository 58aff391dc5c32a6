"""Module: the base class of every layer and model, following ``torch.nn.Module``.

A module keeps three ordered registries, filled automatically by attribute assignment:

* ``_parameters`` - :class:`Parameter` tensors the optimizer trains
  (``self.weight = Parameter(...)``);
* ``_buffers``    - tensors that are part of the state but not trained (``register_buffer``);
* ``_modules``    - child modules (``self.fc1 = Linear(...)``).

Everything else in this file walks those registries: ``named_parameters`` yields
``"fc1.weight"``-style dotted names in registration order, ``state_dict`` collects parameters and
persistent buffers under those names, ``load_state_dict`` copies them back in place and names
missing and unexpected keys, ``train``/``eval`` flip the ``training`` flag recursively (which
changes what :class:`Dropout` does), and ``to(dtype)`` converts floating parameters while
keeping each Parameter object, so an optimizer built before the conversion still holds them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import whylab
from whylab._tensor.device import CUDA_NOT_COMPILED
from whylab.autograd.grad_reset import zero_grads

from .parameter import Parameter


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` reports: keys the module expected but did not get, and keys
    the state dict had that the module does not know."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class for all neural-network modules.

    Subclasses call ``super().__init__()`` first, assign parameters and sub-modules as
    attributes, and implement :meth:`forward`. Calling the module runs ``forward``.
    """

    training: bool

    def __init__(self) -> None:
        # object.__setattr__ bypasses our own __setattr__, which needs these dicts to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())

    # ----------------------------------------------------------------- forward / call
    def forward(self, *args, **kwargs):
        """Compute the module's output. Every subclass defines this."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    # ----------------------------------------------------------------- hooks
    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces ``args``."""
        return RemovableHandle.add(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a non-None result replaces
        the output."""
        return RemovableHandle.add(self._forward_hooks, hook)

    def register_full_backward_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect to
        the module's tensor inputs are computed; a non-None result replaces ``grad_input``."""
        return RemovableHandle.add(self._backward_hooks, hook)

    # ----------------------------------------------------------------- registration
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or ``None``, a declared-but-absent parameter such as a bias)."""
        self._check_new_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(whylab.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                "be created explicitly; to express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a tensor that belongs to the module's state but is not trained.

        A persistent buffer (the default) appears in :meth:`state_dict`; a non-persistent
        one is kept only on the module.
        """
        self._check_new_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, whylab.Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(whylab Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (what ``self.name = module`` does)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string, got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f'module name can\'t contain ".", nor be empty, got "{name}"')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def _check_new_name(self, name: str, kind: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f'{kind} name can\'t contain ".", nor be empty, got "{name}"')
        own_registry = self._parameters if kind == "parameter" else self._buffers
        if hasattr(self, name) and name not in own_registry:
            raise KeyError(f"attribute '{name}' already exists")

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(whylab.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            self._modules[name] = value
        elif name in self.__dict__.get("_modules", {}):
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(whylab.nn.Module or None expected)"
                )
            self._modules[name] = None
        elif name in self.__dict__.get("_buffers", {}):
            if value is not None and not isinstance(value, whylab.Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(whylab Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        """Remove ``name`` from every place an attribute can live, before re-registering it."""
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            self.__dict__[registry].pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for registered entries.
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__[registry]
            if name in entries:
                del entries[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(
            set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules)
        )

    # ----------------------------------------------------------------- traversal
    def named_modules(
        self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Yield ``(dotted_name, module)`` for this module and every descendant, depth first.

        The root's name is ``""``. A module reachable along two paths is yielded once.
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            child_prefix = f"{prefix}.{name}" if prefix else name
            yield from child.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """Yield this module and every descendant."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Yield ``(name, module)`` for the direct children only."""
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        """Yield the direct children only."""
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen: set[int] = set()
        owners = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for owner_prefix, owner in owners:
            for name, tensor in owner.__dict__[registry].items():
                if tensor is None:
                    continue
                if remove_duplicate:
                    if id(tensor) in seen:
                        continue
                    seen.add(id(tensor))
                full_name = f"{owner_prefix}.{name}" if owner_prefix else name
                yield full_name, tensor

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(dotted_name, parameter)`` in registration order, each parameter once
        (a weight shared by two layers appears under its first name)."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Yield the parameters, in the order of :meth:`named_parameters`."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        """Yield ``(dotted_name, buffer)`` for all buffers, persistent or not."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Any]:
        """Yield all buffers."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # ----------------------------------------------------------------- modes and grads
    def train(self, mode: bool = True) -> Module:
        """Set training mode (``True``) or evaluation mode (``False``) here and below."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Switch to evaluation mode; same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Turn gradient recording for all parameters on or off (e.g. to freeze a layer)."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (see ``Optimizer.zero_grad``)."""
        zero_grads(self.parameters(), set_to_none)

    # ----------------------------------------------------------------- state dict
    def state_dict(
        self, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict:
        """Return an ordered dict of parameters and persistent buffers by dotted name.

        The tensors share memory with the module (they are detached, not copied), unless
        ``keep_vars=True``, which returns the Parameter objects themselves.
        """
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` into this module, in place.

        Args:
            state_dict: a mapping from dotted names to tensors (e.g. from :meth:`state_dict`
                or ``whylab.load``).
            strict: if True, missing or unexpected keys raise a RuntimeError naming them.
            assign: if True, the loaded tensors replace the module's tensors instead of
                being copied into them.

        Returns:
            ``IncompatibleKeys(missing_keys, unexpected_keys)``.
        """
        if not hasattr(state_dict, "items"):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict).__name__}."
            )
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        expected = self.state_dict(keep_vars=True)

        for key, target in expected.items():
            if key not in state_dict:
                missing.append(key)
                continue
            source = state_dict[key]
            if not isinstance(source, whylab.Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected a whylab Tensor '
                    f"from the checkpoint but received {type(source).__name__}"
                )
                continue
            if tuple(source.shape) != tuple(target.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{tuple(source.shape)} from checkpoint, the shape in current model is "
                    f"{tuple(target.shape)}."
                )
                continue
            if assign:
                self._assign_loaded(key, source)
            else:
                with whylab.no_grad():
                    target.copy_(source)
        unexpected = [key for key in state_dict if key not in expected]

        if strict:
            if unexpected:
                names = ", ".join(f'"{key}"' for key in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {names}. ")
            if missing:
                names = ", ".join(f'"{key}"' for key in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {names}. ")
        if errors:
            details = "\n\t".join(errors)
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t{details}"
            )
        return IncompatibleKeys(missing, unexpected)

    def _assign_loaded(self, key: str, source) -> None:
        """Replace the tensor registered under dotted ``key`` by ``source`` (``assign=True``)."""
        *path, name = key.split(".")
        owner = self
        for part in path:
            owner = owner._modules[part]
        if name in owner._parameters:
            current = owner._parameters[name]
            owner._parameters[name] = Parameter(source, requires_grad=current.requires_grad)
        else:
            owner._buffers[name] = source

    # ----------------------------------------------------------------- conversions
    def _apply(self, convert: Callable) -> Module:
        """Convert every parameter, its gradient, and every buffer with ``convert``.

        Parameters keep their identity: the converted values are swapped in through
        ``param.data``, as torch does, so optimizers keep pointing at the same objects.
        """
        for module in self.modules():
            for param in module._parameters.values():
                if param is None:
                    continue
                with whylab.no_grad():
                    param.data = convert(param.data)
                    if param.grad is not None:
                        param.grad = convert(param.grad)
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    module._buffers[name] = convert(buffer)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every descendant and then on this module (e.g. for custom init)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs) -> Module:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(tensor)``, in place.

        Floating-point parameters and buffers take ``dtype``; integer buffers (counters)
        keep theirs, as in torch. Every tensor moves to ``device`` (only "cpu" and "meta"
        exist: "cuda" raises, as torch does without a GPU).
        """
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}"
            )

        def convert(tensor):
            if dtype is not None and tensor.is_floating_point():
                tensor = tensor.to(dtype)
            return tensor if device is None else tensor.to(device)

        return self._apply(convert)

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU (where they already are)."""
        return self.to("cpu")

    def cuda(self, device=None) -> Module:
        """Move to a CUDA device: raises, as torch does on a machine without one."""
        raise AssertionError(CUDA_NOT_COMPILED)

    def half(self) -> Module:
        """Convert floating parameters and buffers to float16."""
        return self.to(whylab.float16)

    def double(self) -> Module:
        """Convert floating parameters and buffers to float64."""
        return self.to(whylab.float64)

    def float(self) -> Module:
        """Convert floating parameters and buffers to float32."""
        return self.to(whylab.float32)

    # ----------------------------------------------------------------- printing
    def extra_repr(self) -> str:
        """One line describing this module's own settings; layers override it."""
        return ""

    def __repr__(self) -> str:
        own = self.extra_repr()
        own_lines = own.split("\n") if own else []
        child_lines = []
        for name, child in self._modules.items():
            child_text = _indent_following_lines(repr(child), 2)
            child_lines.append(f"({name}): {child_text}")
        if not child_lines and len(own_lines) <= 1:
            return f"{type(self).__name__}({own})"
        body = "\n  ".join(own_lines + child_lines)
        return f"{type(self).__name__}(\n  {body}\n)"


def _parse_to(args, kwargs):
    """``(device, dtype)`` from the arguments of ``Module.to`` (either may be None)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, whylab.dtype):
            dtype = arg
        elif isinstance(arg, whylab.Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, (str, whylab.device)):
            device = whylab.device(arg)
        elif not isinstance(arg, bool):  # non_blocking given positionally
            raise TypeError(f"to() received an invalid argument {arg!r}")
    return device, dtype


class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: dict, key: int):
        self._hooks = hooks
        self.id = key

    @classmethod
    def add(cls, hooks: dict, hook: Callable) -> RemovableHandle:
        key = cls._next_id
        cls._next_id += 1
        hooks[key] = hook
        return cls(hooks, key)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def call_with_hooks(module: Module, args: tuple, kwargs: dict):
    """``module(*args)`` with its forward-pre, forward and full backward hooks."""
    for hook in list(module._forward_pre_hooks.values()):
        replaced = hook(module, args)
        if replaced is not None:
            args = replaced if isinstance(replaced, tuple) else (replaced,)
    if module._backward_hooks:
        from whylab.nn._backward_hooks import BackwardHookState

        state = BackwardHookState(module)
        args = state.wrap_inputs(args)
        output = module.forward(*args, **kwargs)
        output = state.wrap_outputs(output)
    else:
        output = module.forward(*args, **kwargs)
    for hook in list(module._forward_hooks.values()):
        replaced = hook(module, args, output)
        if replaced is not None:
            output = replaced
    return output


def _indent_following_lines(text: str, spaces: int) -> str:
    """Indent every line but the first, so a nested repr lines up under its parent."""
    first, *rest = text.split("\n")
    pad = " " * spaces
    return "\n".join([first] + [pad + line if line.strip() else "" for line in rest])
