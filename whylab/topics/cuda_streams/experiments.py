"""Experiments for "CUDA streams and events": which boundary a timing measures, overlap,
idle devices, tensor lifetime across streams, and precision.

All run on :mod:`whylab.gpu`'s model of a host and a device (no GPU needed):

* ``timing_experiments``: host timer with and without synchronisation, events, warm-up;
  two overlapping streams; the idle fraction of many tiny kernels against CUDA graphs;
* ``memory_experiment``: the record_stream hazard and the race detector;
* ``precision_experiment``: TF32 against FP32, computed in NumPy.
"""

from whylab.topics.cuda_streams.memory_experiment import record_stream_hazard
from whylab.topics.cuda_streams.precision_experiment import tf32_precision
from whylab.topics.cuda_streams.timing_experiments import (
    idle_device,
    overlapping_streams,
    timing_boundaries,
)

EXPERIMENTS = [
    timing_boundaries,
    overlapping_streams,
    idle_device,
    record_stream_hazard,
    tf32_precision,
]
