"""The Optimizer base class: parameter groups, per-parameter state, zero_grad, state_dict.

An optimizer owns a list of *parameter groups*. Each group is a dict holding a list of
parameters under ``"params"`` plus its own hyper-parameters (``lr``, ``momentum``, ...);
hyper-parameters a group does not name are filled in from the optimizer's defaults. This is
how one optimizer can train, say, a backbone with a small learning rate and a head with a
large one.

Per-parameter state (momentum buffers, Adam's moment estimates, step counters) lives in
``self.state``, a dict keyed by the parameter tensor itself, created lazily on the first
``step``. ``state_dict()`` replaces those tensor keys by integer positions (counted across all
groups in order) so that a saved state can be loaded into a fresh optimizer built over fresh
parameters, exactly as ``torch.optim`` does.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import whylab
from whylab.autograd.grad_reset import zero_grads


class _RequiredParameter:
    """Marker for a hyper-parameter that has no default and must be given."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class of all optimizers, following ``torch.optim.Optimizer``.

    Args:
        params: an iterable of tensors, or an iterable of dicts each defining a parameter
            group (a ``"params"`` entry plus optional per-group hyper-parameters).
        defaults: hyper-parameter values used by groups that do not set them.
    """

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        if isinstance(params, whylab.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors "
                f"or dicts, but got {type(params).__name__}"
            )
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with optional hyper-parameters) to this optimizer."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, whylab.Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets changes between runs; use a list instead"
            )
        param_group["params"] = list(params)

        for param in param_group["params"]:
            if not isinstance(param, whylab.Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    f"{type(param).__name__}"
                )
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)

        new_ids = {id(p) for p in param_group["params"]}
        for group in self.param_groups:
            if any(id(p) in new_ids for p in group["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters.

        With ``set_to_none=True`` (the default, as in torch) each ``.grad`` becomes ``None``,
        which frees its memory and lets the next backward write the gradient instead of
        adding to zeros. With ``False`` the existing gradient tensors are filled with zeros.
        """
        zero_grads([param for group in self.param_groups for param in group["params"]], set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a gradient; return the closure's loss, if any.

        The loop over groups and parameters is the same for every optimizer; what one
        parameter's update does is each optimizer's own ``_update``.
        """
        loss = self._run_closure(closure)
        with whylab.no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    # Parameters are leaves (checked when added), so ``_grad`` is what the
                    # ``grad`` property returns, read without the property's call.
                    if param._grad is not None:
                        self._update(param, group)
        return loss

    def _update(self, param, group: dict[str, Any]) -> None:
        """Update one parameter in place from its ``.grad`` and its group's settings."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _update")

    def _run_closure(self, closure):
        """Re-evaluate the model with gradients enabled, if the caller gave a closure."""
        if closure is None:
            return None
        with whylab.enable_grad():
            return closure()

    def state_dict(self) -> dict[str, Any]:
        """Return the optimizer's state as a dict: ``{"state": ..., "param_groups": ...}``.

        Parameters are replaced by their integer position across all groups, so the result
        holds no reference to the parameter tensors themselves (the state tensors are
        references, not copies, as in torch).
        """
        position_of: dict[int, int] = {}
        packed_groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            for param in group["params"]:
                position_of.setdefault(id(param), len(position_of))
            packed["params"] = [position_of[id(param)] for param in group["params"]]
            packed_groups.append(packed)
        packed_state = {
            position_of[id(param)]: param_state
            for param, param_state in self.state.items()
            if id(param) in position_of
        }
        return {"state": packed_state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state produced by :meth:`state_dict` (of an optimizer of the same shape).

        Floating-point state tensors are cast to their parameter's dtype, except ``step``
        counters, which torch also keeps as they are.
        """
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the "
                    "size of optimizer's group"
                )

        param_of_position = {}
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            for position, param in zip(saved["params"], group["params"], strict=True):
                param_of_position[_position_key(position)] = param

        new_state: defaultdict = defaultdict(dict)
        for position, param_state in state_dict["state"].items():
            key = _position_key(position)
            if key not in param_of_position:
                raise ValueError(
                    f"loaded optimizer state refers to parameter {position!r}, which no "
                    "parameter group lists"
                )
            param = param_of_position[key]
            new_state[param] = {
                name: _cast_state_value(param, name, value) for name, value in param_state.items()
            }

        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.state = new_state
        self.param_groups = new_groups

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _position_key(position) -> int:
    """Positions may come back from a file as strings ("0"); compare them as integers."""
    return int(position)


def _cast_state_value(param, name: str, value):
    """Copy one saved state entry, casting floating tensors to the parameter's dtype."""
    if isinstance(value, whylab.Tensor):
        if name != "step" and value.is_floating_point():
            return value.detach().to(param.dtype).clone()
        return value.detach().clone()
    return copy.deepcopy(value)


def check_implementation_flags(optimizer: str, capturable=False, differentiable=False) -> None:
    """torch's ``foreach=``/``fused=`` pick one of several loops with the same result; whylab
    has one, so they are accepted and change nothing. ``capturable`` (CUDA graphs) and
    ``differentiable`` (autograd through the step) are not supported: True is refused."""
    for name, value in (("capturable", capturable), ("differentiable", differentiable)):
        if value:
            raise NotImplementedError(
                f"torch.optim.{optimizer}({name}=True) is not supported yet by whylab"
            )
