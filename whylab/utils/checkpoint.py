"""Activation checkpointing: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` normally but keeps *none* of the tensors
its operations save for backward; it keeps only ``args``. When the backward
pass first needs one of those tensors, ``fn`` is run again on the same inputs
(with the random-number state it had the first time, so dropout draws the same
mask), and the saved tensors of that second run are handed to the original
graph's nodes in the same order.

This is PyTorch's *non-reentrant* checkpoint (``use_reentrant=False``), built
the same way, on :class:`whylab.autograd.graph.saved_tensors_hooks`: the pack
hook stores a small handle instead of a tensor, the unpack hook recomputes.

Measure what it saves with :func:`whylab.autograd.saved_tensors_bytes`.

Deviation from PyTorch: ``use_reentrant=True`` (the older implementation that
runs a nested backward) is not provided; passing it raises ValueError.
"""

from __future__ import annotations

from whylab.autograd import grad_mode
from whylab.autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputation did not save the same tensors as the original forward."""


def _get_rng_state():
    from whylab._tensor.generator import default_generator

    return default_generator.get_state()


def _set_rng_state(state) -> None:
    from whylab._tensor.generator import default_generator

    default_generator.set_state(state)


class _Handle:
    """Stored in place of the ``index``-th tensor the checkpointed region saved."""

    __slots__ = ("frame", "index")

    def __init__(self, frame, index):
        self.frame = frame
        self.index = index

    def held_tensors(self):
        """What this handle keeps alive: the region's inputs (counted once per region)."""
        return self.frame.held_tensors()


class _Frame:
    """One checkpointed call: its inputs, the RNG state, and recomputed tensors."""

    def __init__(self, function, args, kwargs, rng_state):
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.count = 0
        self.metadata = []
        self.recomputed = {}

    def held_tensors(self):
        import whylab

        return [a for a in self.args if isinstance(a, whylab.Tensor)]

    def pack(self, tensor):
        handle = _Handle(self, self.count)
        self.metadata.append((tensor._sizes, tensor.dtype))
        self.count += 1
        return handle

    def unpack(self, handle):
        if handle.index not in self.recomputed:
            self.recompute()
        return self.recomputed.pop(handle.index)

    def recompute(self) -> None:
        saved = []

        def capture(tensor):
            saved.append(tensor)
            return tensor

        def give_back(tensor):
            return tensor

        current_rng = _get_rng_state() if self.rng_state is not None else None
        try:
            if self.rng_state is not None:
                _set_rng_state(self.rng_state)
            with grad_mode.enable_grad(), saved_tensors_hooks(capture, give_back):
                self.function(*self.args, **self.kwargs)
        finally:
            if current_rng is not None:
                _set_rng_state(current_rng)
        if len(saved) != self.count:
            raise CheckpointError(
                "whylab.utils.checkpoint: the recomputation saved a different number of tensors "
                f"({len(saved)}) than the original forward ({self.count}). The checkpointed "
                "function must do the same operations every time it runs."
            )
        for index, tensor in enumerate(saved):
            if (tensor._sizes, tensor.dtype) != self.metadata[index]:
                raise CheckpointError(
                    f"whylab.utils.checkpoint: recomputed tensor {index} has shape "
                    f"{list(tensor._sizes)} and dtype {tensor.dtype}, but the original had "
                    f"shape {list(self.metadata[index][0])} and dtype {self.metadata[index][1]}."
                )
            self.recomputed[index] = tensor


def checkpoint(
    function, *args, use_reentrant: bool = False, preserve_rng_state: bool = True, **kwargs
):
    """Run ``function(*args, **kwargs)``, saving only its inputs for backward.

    The result and the gradients are the same as without checkpointing; the
    tensors the region's operations would have saved are recomputed in
    backward instead of being kept.
    """
    if use_reentrant:
        raise ValueError(
            "whylab.utils.checkpoint supports only use_reentrant=False (the non-reentrant "
            "implementation PyTorch recommends)"
        )
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)
    frame = _Frame(function, args, kwargs, _get_rng_state() if preserve_rng_state else None)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)
