"""Spiking neurons on whylab: LIF, surrogate-gradient BPTT, STDP, EventProp, UltraLIF, Yin-Yang.

* :mod:`whylab.snn.lif` -- the LIF neuron on a grid: Euler and exact integration,
  spikes locked to the grid or interpolated, the closed-form f–I curve;
* :mod:`whylab.snn.surrogate` -- spike functions with surrogate gradients
  (autograd Functions);
* :mod:`whylab.snn.network` -- :class:`Leaky` (snnTorch's LIF step) and the
  Yin-Yang :class:`SpikingClassifier`, trained by BPTT through whylab's engine;
* :mod:`whylab.snn.stdp` -- pair-based STDP with online traces and its analytic window;
* :mod:`whylab.snn.yinyang` -- the Yin-Yang data set and latency coding;
* :mod:`whylab.snn.eventprop` -- EventProp: event-driven LIF networks and their exact
  adjoint gradients;
* :mod:`whylab.snn.ultralif` -- UltraLIF's soft max-plus neuron;
* :mod:`whylab.snn.training` -- a small Adam training loop for the classifiers.

The library depends on neither snnTorch nor Brian2; the tests compare it with both.
"""

from whylab.snn.eventprop import EventLIF, EventNetwork, SpikeTimeLoss
from whylab.snn.lif import EULER, EXACT, LIFParams, firing_rate, rheobase, simulate
from whylab.snn.network import Leaky, SpikingClassifier, decay_factor
from whylab.snn.stdp import STDP
from whylab.snn.surrogate import spike_function
from whylab.snn.ultralif import UltraLIF, UltraLIFClassifier, soft_max_plus
from whylab.snn.yinyang import latency_code, spike_raster, yin_yang

__all__ = [
    "EULER",
    "EXACT",
    "EventLIF",
    "EventNetwork",
    "LIFParams",
    "Leaky",
    "STDP",
    "SpikeTimeLoss",
    "SpikingClassifier",
    "UltraLIF",
    "UltraLIFClassifier",
    "decay_factor",
    "firing_rate",
    "latency_code",
    "rheobase",
    "simulate",
    "soft_max_plus",
    "spike_function",
    "spike_raster",
    "yin_yang",
]
