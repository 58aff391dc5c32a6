"""``torch.utils.data``: datasets, samplers, batching and the DataLoader.

Reading order: :mod:`.dataset` (what a dataset is), :mod:`.sampler` (the order
of indices), :mod:`.collate` (how samples become a batch), :mod:`.dataloader`
(the loop that ties them together). ``num_workers`` > 0 is accepted and runs in
the main process (whylab has no worker processes for data loading).
"""

from whylab.utils.data.collate import default_collate
from whylab.utils.data.dataloader import DataLoader
from whylab.utils.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from whylab.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "default_collate",
    "random_split",
]
