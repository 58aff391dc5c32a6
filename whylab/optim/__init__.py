"""Optimizers with torch.optim's names, arguments and update equations, ``lr_scheduler``
(learning-rate schedules), and Frank–Wolfe with its ``constraints`` (feasible sets)."""

from . import constraints, lr_scheduler
from .adadelta import Adadelta
from .adam import Adam, AdamW
from .frank_wolfe import FrankWolfe, frank_wolfe
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = [
    "Optimizer",
    "SGD",
    "Adadelta",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "LBFGS",
    "FrankWolfe",
    "frank_wolfe",
    "constraints",
    "lr_scheduler",
]
