"""Experiments for "the mini autograd": the recorded graph (and how control flow changes
it), forward vs reverse mode, the memory the saved tensors take (and checkpointing), the
local backward rules, softmax/cross-entropy stability, fan-out, a second backward pass and
a second derivative, finite differences and a trained two-layer classifier.

Everything runs whylab's engine: graphs come from
:func:`whylab.autograd.graph_export.to_json`, the execution order and buffer sums
from :func:`whylab.autograd.engine_trace`, gradients from ``backward()`` and
:func:`whylab.autograd.grad`. Each is compared with a reference that does not use
the engine: a formula written out in NumPy, central finite differences, or exact
decimal arithmetic, or what torch 2.13 records. A reader's "expression" is a choice
among the functions in :mod:`whylab.topics.autograd.expressions`; nothing a reader sends
is evaluated. Every check has negative controls: wrong backward rules and a wrong engine
come from :mod:`whylab.topics.autograd.sabotage`, built from outside the engine.
"""

from whylab.topics.autograd.jacobian_experiments import local_rules, modes
from whylab.topics.autograd.memory_experiments import checkpoint_experiment
from whylab.topics.autograd.numerical_experiments import finite_differences, softmax_ce_stability
from whylab.topics.autograd.recorded_graph_experiments import fan_out, graph
from whylab.topics.autograd.run_time_graph_experiments import control_flow, second_backward
from whylab.topics.autograd.training_experiment import train

EXPERIMENTS = [graph, control_flow, modes, checkpoint_experiment, local_rules,
               softmax_ce_stability, fan_out, second_backward, finite_differences, train]
