"""Optimizers with torch.optim's names, arguments and update equations, and
``lr_scheduler`` (learning-rate schedules)."""

from . import lr_scheduler
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LBFGS", "lr_scheduler"]
