"""Experiments for "What happens when you call a @ b?": the hops of one matmul, the key
set of a call under each guard, and what the dispatcher costs per call.

Everything runs whylab's real dispatcher and reads what it did from
``whylab.dispatch.trace()``. The rules it is compared with -- torch.matmul's rank
table and the key-set formula -- are written out separately from the engine, in
:mod:`~whylab.topics.dispatcher.matmul_rules` and
:mod:`~whylab.topics.dispatcher.key_rules`. Reader choices select among
predefined cases; nothing a reader sends is evaluated.

The experiments live in their own modules (``matmul_experiment``,
``key_set_experiment``, ``overhead_experiment``, ``hop_experiment``); the diagram and the hop tables
are drawn by ``trace_view``.
"""

from whylab.topics.dispatcher.hop_experiment import hop_cost
from whylab.topics.dispatcher.key_set_experiment import key_set
from whylab.topics.dispatcher.matmul_experiment import matmul_trace
from whylab.topics.dispatcher.overhead_experiment import overhead

EXPERIMENTS = [matmul_trace, key_set, overhead, hop_cost]
