"""``autograd.Function``: user-defined operations with a hand-written backward.

Subclass :class:`Function`, write ``forward(ctx, *args)`` and
``backward(ctx, *grad_outputs)`` as static methods, and call ``MyFn.apply``::

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

As in PyTorch, ``ctx`` *is* the graph node: ``y.grad_fn`` is the object that
``forward`` received, its class is named ``SquareBackward``, and what was
saved with ``save_for_backward`` is checked for in-place changes and freed
after backward like any other saved tensor. ``forward`` runs with grad mode
off; ``backward`` runs with grad mode on only under ``create_graph=True``, so
a backward written with whylab ops is itself differentiable.

``backward`` returns one value per argument of ``forward`` (None for
arguments that are not tensors or need no gradient).

Not supported (PyTorch has them): the ``setup_context`` style of ``forward``
without ``ctx``, ``vmap``/``jvp`` and ``once_differentiable``.
"""

from __future__ import annotations

from whylab._tensor.tensor import Tensor
from whylab.autograd import anomaly, grad_mode
from whylab.autograd._ops import ops
from whylab.autograd.graph import ERR_BACKWARD_TWICE, Node, SavedTensor, gradient_edge

__all__ = ["Function", "FunctionCtx", "BackwardCFunction"]


class FunctionCtx:
    """The methods ``ctx`` offers inside ``forward`` (mixed into the node class)."""

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (or None) for ``backward``; read them with ``ctx.saved_tensors``."""
        for tensor in tensors:
            if tensor is not None and not isinstance(tensor, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(tensor)} is of type {type(tensor).__name__}"
                )
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs that never get a gradient (e.g. indices); they do not require grad."""
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors) -> None:
        """Inputs that ``forward`` modified in place (their history is rebased)."""
        self._dirty = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` sees None (not zeros) for outputs that got no gradient."""
        self._materialize_grads = bool(value)


_NONE_MARKED = frozenset()


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``Function.apply`` call; also the ``ctx`` of its forward."""

    _forward_cls = None

    def __init__(self):
        super().__init__()
        self._to_save = ()
        self._saved = None
        # Shared empty sets until mark_non_differentiable / mark_dirty assign new ones:
        # a set per call would be two more objects for the cyclic collector to track.
        self._non_differentiable = _NONE_MARKED
        self._dirty = _NONE_MARKED
        self._materialize_grads = True
        self._tensor_positions = ()
        self._released = False
        self.needs_input_grad = ()

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked for in-place changes."""
        if self._released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self._saved is None:  # still inside forward, or nothing recorded
            return tuple(self._to_save)
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    @property
    def saved_variables(self) -> tuple:
        """Old PyTorch name for :attr:`saved_tensors`."""
        return self.saved_tensors

    def apply(self, grad_outputs):
        if self._materialize_grads:
            grad_outputs = [
                g if g is not None else _zeros(meta)
                for g, meta in zip(grad_outputs, self.input_metadata, strict=True)
            ]
        result = self._forward_cls.backward(self, *grad_outputs)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self.needs_input_grad)
        if len(result) < expected or any(r is not None for r in result[expected:]):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(result)})"
            )
        return [result[position] for position in self._tensor_positions]

    def release_variables(self) -> None:
        if self._saved is not None:
            for saved in self._saved:
                if saved is not None:
                    saved.release()
            self._released = True

    def saved_tensor_items(self):
        if self._saved is None:
            return ()
        return [(f"saved_tensors[{i}]", s) for i, s in enumerate(self._saved) if s is not None]


def _zeros(metadata):
    shape, dtype = metadata
    return ops.zeros(shape, dtype, None)


class _FunctionMeta(type):
    """Gives each Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        cls._backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {"_forward_cls": cls, "__module__": cls.__module__},
        )


class Function(metaclass=_FunctionMeta):
    """Base class for operations with a custom backward (see the module docstring)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, when some tensor argument requires grad, record the node."""
        ctx = cls._backward_cls()
        state = grad_mode._state
        # Plain loops rather than generator expressions: this runs once per call, and a
        # generator costs a Python call per item.
        positions, requires_grad = [], []
        for i, arg in enumerate(args):
            is_tensor = isinstance(arg, Tensor)
            if is_tensor:
                positions.append(i)
            requires_grad.append(is_tensor and arg._requires_grad)
        tensor_positions = tuple(positions)
        record = state.enabled and any(requires_grad)
        ctx.needs_input_grad = tuple(requires_grad) if record else (False,) * len(args)
        # forward runs in no_grad mode (switched here directly: a no_grad() context
        # object per call costs more than the rest of this bookkeeping).
        previous = state.enabled
        state.enabled = False
        try:
            outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            state.enabled = previous
        if not record:
            return outputs
        ctx._tensor_positions = tensor_positions
        ctx.next_functions = tuple([gradient_edge(args[i]) for i in tensor_positions])
        if anomaly.is_anomaly_enabled():
            ctx._anomaly_trace = anomaly.forward_stack()
        is_tuple = isinstance(outputs, tuple)
        output_list = list(outputs) if is_tuple else [outputs]
        inputs_by_id = {id(args[i]): args[i] for i in tensor_positions}
        metadata = []
        for output_nr, output in enumerate(output_list):
            if not isinstance(output, Tensor):
                metadata.append(((), None))
                continue
            metadata.append((output._sizes, output.dtype))
            output_list[output_nr] = _attach_output(ctx, output, output_nr, inputs_by_id)
        ctx.input_metadata = tuple(metadata)
        ctx._saved = tuple([_save(ctx, t, output_list) for t in ctx._to_save])
        ctx._to_save = ()
        return tuple(output_list) if is_tuple else output_list[0]


def _attach_output(ctx, output, output_nr, inputs_by_id):
    """Make ``ctx`` the history of one output of ``forward``."""
    if id(output) in ctx._non_differentiable or not output.dtype.is_floating_point:
        return output
    if id(output) in ctx._dirty:
        from whylab.autograd.inplace import check_inplace, rebase_history

        check_inplace(output)
        rebase_history(output, ctx)
        output._output_nr = output_nr
        return output
    if id(output) in inputs_by_id:
        # Returned an input unchanged: hand out an alias so the input keeps its history.
        output = output.detach()
    output.grad_fn = ctx
    output._output_nr = output_nr
    output._requires_grad = True
    return output


def _save(ctx, tensor, outputs):
    if tensor is None:
        return None
    is_output = False
    if tensor.grad_fn is ctx:
        for output in outputs:  # identity, not ==: a loop rather than a generator's calls
            if output is tensor:
                is_output = True
                break
    return SavedTensor(tensor, is_output=is_output)
