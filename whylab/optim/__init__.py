"""Optimizers with torch.optim's names, arguments and update equations."""

from . import constraints
from .adam import Adam, AdamW
from .frank_wolfe import FrankWolfe, frank_wolfe
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "FrankWolfe", "frank_wolfe", "constraints"]
