"""Experiments for "spiking neurons": LIF dynamics, BPTT with surrogate gradients, STDP,
EventProp, UltraLIF, the Yin-Yang data set and the networks trained on it.

Every experiment runs :mod:`whylab.snn`; the negative controls reach it through
:mod:`.under_test`. The experiments live in modules by subject; this one lists them
in the order the prose places them.
"""

from __future__ import annotations

from whylab.topics.spiking_neurons.data import yin_yang_data
from whylab.topics.spiking_neurons.events import eventprop_gradient, yin_yang_eventprop
from whylab.topics.spiking_neurons.gradients import bptt_surrogate
from whylab.topics.spiking_neurons.learning import yin_yang_bptt
from whylab.topics.spiking_neurons.neuron import fi_curve, integrator_order
from whylab.topics.spiking_neurons.plasticity import stdp_window
from whylab.topics.spiking_neurons.soft import ultralif_bounds, yin_yang_ultralif

EXPERIMENTS = [
    fi_curve, integrator_order, bptt_surrogate, stdp_window, yin_yang_data, yin_yang_bptt,
    eventprop_gradient, yin_yang_eventprop, ultralif_bounds, yin_yang_ultralif,
]
