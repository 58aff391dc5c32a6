"""Experiments for "torch.matmul from the call to the kernel".

``one-call`` follows a @ b from the binding to the BLAS call (call_experiment),
``backward`` follows its gradient through MmBackward0 and AccumulateGrad
(backward_experiment), and ``roofline`` times the BLAS call against this
machine's dgemm peak and memory bandwidth (roofline_experiment).
"""

from whylab.topics.matmul_end_to_end.backward_experiment import backward
from whylab.topics.matmul_end_to_end.call_experiment import one_call
from whylab.topics.matmul_end_to_end.roofline_experiment import roofline

EXPERIMENTS = [one_call, backward, roofline]
