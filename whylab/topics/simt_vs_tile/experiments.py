"""Experiments for "SIMT vs tile kernels": output coverage, coalescing, data reuse, and the
executors against numba's CUDA simulator and Triton's interpreter.

Kernels come from :mod:`whylab.gpu.simt_kernels` and :mod:`whylab.gpu.tile_kernels`,
run by :mod:`whylab.gpu.simt` and :mod:`whylab.gpu.tile`; every count is read from
their access logs:

* ``coverage_experiment``: write maps with and without bounds checks and masks;
* ``memory_experiments``: sectors per warp request; loads per output in three matmuls;
* ``simulators_experiment``: outputs and write maps against the two simulators.
"""

from whylab.topics.simt_vs_tile.coverage_experiment import write_coverage
from whylab.topics.simt_vs_tile.memory_experiments import coalescing, matmul_reuse
from whylab.topics.simt_vs_tile.simulators_experiment import simulators_agree

EXPERIMENTS = [write_coverage, coalescing, matmul_reuse, simulators_agree]
