"""Wrong backward rules and a wrong engine, for the page's negative controls.

A control shows that a check would catch a plausible mistake in an autograd
engine. The engine itself is never edited; the mistakes are made here, from
outside, for one run:

* :func:`replace_backward` hooks every node of one name in the graph behind a
  tensor and replaces what the node computed: a wrong local derivative. It
  uses the public node post hook (``grad_fn.register_hook``), whose return
  value replaces the node's gradients, as in PyTorch.
* :func:`keep_first_gradient` is such a rule: a node with two inputs passes a
  gradient on over its first edge only, the way a backward pass that forgets
  to add up fan-out loses the second contribution.
* :func:`eager_backward` is reverse mode without dependency counts or input
  buffers: every gradient that reaches a node is pushed through it at once,
  as a naive recursive backprop does. Because every backward rule is linear
  in its incoming gradient, the leaves still receive the right sum; what goes
  wrong is the bookkeeping (nodes run once per arriving gradient, AccumulateGrad
  writes ``.grad`` several times in one pass), which is what the page's checks
  on dependency counts and buffer sums must catch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import whylab
from whylab.autograd.engine import current_trace
from whylab.autograd.memory import graph_nodes

Gradients = Sequence[whylab.Tensor | None]
Rule = Callable[[Gradients, Gradients], Gradients]


def replace_backward(output: whylab.Tensor, node_name: str, rule: Rule) -> int:
    """Make every ``node_name`` node behind ``output`` return ``rule(computed, received)``.

    ``computed`` are the gradients the node produced for its inputs, ``received``
    those it was given. Returns how many nodes were hooked; none is a bug in the
    control, so it raises LookupError.
    """
    hooked = 0
    for node in graph_nodes(output):
        if node.name() == node_name:
            node.register_hook(lambda computed, received: tuple(rule(computed, received)))
            hooked += 1
    if not hooked:
        raise LookupError(f"replace_backward: no {node_name} node in the graph")
    return hooked


def keep_first_gradient(computed: Gradients, received: Gradients) -> Gradients:
    """A rule that sends a gradient over the first edge only and drops the others."""
    return [computed[0]] + [None] * (len(computed) - 1)


def pass_through(computed: Gradients, received: Gradients) -> Gradients:
    """A rule that forgets its local derivative: the incoming gradient goes on unchanged."""
    return [received[0]] + [None] * (len(computed) - 1)


def eager_backward(output: whylab.Tensor, grad_output: whylab.Tensor) -> None:
    """Backpropagate ``grad_output`` by pushing each arriving gradient through its node at once.

    No dependency count, no input buffer: a node reached over two edges runs
    twice. Runs are recorded in the active :func:`whylab.autograd.engine_trace`
    (if any) as ``execute`` events, like the engine's. Saved tensors are not
    released. Gradients must already have their input's shape (no broadcast
    reduction is done here).
    """
    trace = current_trace()
    pending = [(output.grad_fn, [grad_output])]
    with whylab.no_grad():
        while pending:
            node, received = pending.pop()
            if trace is not None:
                trace.record("execute", node=trace.label(node), sequence_nr=node.sequence_nr)
            computed = node.apply(received)
            for (next_node, input_nr), gradient in zip(node.next_functions, computed,
                                                       strict=False):
                if next_node is None or gradient is None:
                    continue
                if tuple(gradient.shape) != tuple(next_node.input_metadata[input_nr][0]):
                    raise ValueError("eager_backward: broadcast gradients are not supported")
                slots = [None] * len(next_node.input_metadata)
                slots[input_nr] = gradient
                pending.append((next_node, slots))
