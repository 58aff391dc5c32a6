"""Neural-network building blocks with torch.nn's names: Module, Parameter, layers,
``functional`` (stateless functions and losses) and ``init`` (weight initialisation)."""

from . import functional, init
from .layers import (
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    Linear,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)
from .module import Module
from .parameter import Parameter

__all__ = [
    "Module",
    "Parameter",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Identity",
    "Sequential",
    "Dropout",
    "LayerNorm",
    "Embedding",
    "Flatten",
    "functional",
    "init",
]
