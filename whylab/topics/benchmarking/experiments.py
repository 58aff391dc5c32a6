"""Experiments for "How do you benchmark honestly?": the clock, warm-up, the spread of
samples, interleaving, equal answers, and what the standard tools do.

Every timing runs :mod:`whylab.bench`, the harness the rest of whylab's benchmarks use,
on this machine while the page is served; each experiment lives in its own module:

* ``timer_experiment``: clock cost and resolution; blocks amortise both;
* ``warmup_experiment``: a numba JIT's first call, CPython's specialising interpreter,
  first-touch page faults;
* ``samples_experiment``: the distribution of per-call times, median and quartiles
  against mean and standard deviation, the adaptive IQR/median stop;
* ``interleaving_experiment``: back to back against interleaved rounds under a
  background load of the experiment's own (``load``);
* ``equivalence_experiment``: compare(..., check_equal=True) refuses a fast wrong answer;
* ``tools_experiment``: timeit, pyperf, torch.utils.benchmark, Triton, Google Benchmark.
"""

from whylab.topics.benchmarking.equivalence_experiment import same_answer
from whylab.topics.benchmarking.interleaving_experiment import interleaving
from whylab.topics.benchmarking.samples_experiment import repeated_samples
from whylab.topics.benchmarking.timer_experiment import timer_overhead
from whylab.topics.benchmarking.tools_experiment import standard_tools
from whylab.topics.benchmarking.warmup_experiment import (
    first_touch,
    interpreter_warm_up,
    jit_warm_up,
)

EXPERIMENTS = [
    timer_overhead,
    jit_warm_up,
    interpreter_warm_up,
    first_touch,
    repeated_samples,
    interleaving,
    same_answer,
    standard_tools,
]
