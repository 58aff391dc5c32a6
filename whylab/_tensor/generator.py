"""Random number generators: ``whylab.manual_seed`` and ``whylab.Generator``.

Deviation from PyTorch: numbers come from NumPy's PCG64 generator, so the same
seed gives different values than ``torch.manual_seed`` (PyTorch uses a
Mersenne Twister and its own float conversion). Seeding makes runs repeatable
within whylab, which is what the experiments need.
"""

from __future__ import annotations

import numpy as np


class Generator:
    """A seeded source of random numbers (a NumPy ``Generator`` inside)."""

    def __init__(self, device="cpu"):
        self.device = device
        self._seed = 67280421310721  # PyTorch's default seed, for familiarity
        self._numpy = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``; returns the generator, like PyTorch."""
        seed = int(seed)
        if seed < 0:
            raise RuntimeError(f"manual_seed: seed must be non-negative, got {seed}")
        self._seed = seed
        self._numpy = np.random.default_rng(seed)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Reseed from fresh entropy and return the new seed."""
        new_seed = int(np.random.SeedSequence().entropy % (2**63))
        self.manual_seed(new_seed)
        return new_seed

    def get_state(self) -> dict:
        return self._numpy.bit_generator.state

    def set_state(self, state: dict) -> Generator:
        self._numpy.bit_generator.state = state
        return self

    @property
    def numpy(self) -> np.random.Generator:
        return self._numpy


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()


def seed() -> int:
    return default_generator.seed()


def numpy_generator(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator).numpy
