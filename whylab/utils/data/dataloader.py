"""The DataLoader: iterate a dataset in batches, in order or shuffled."""

from __future__ import annotations

from whylab.utils.data.collate import default_collate
from whylab.utils.data.dataset import IterableDataset
from whylab.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    """Batches of ``dataset``: ``batch_size`` samples each, collated by ``collate_fn``.

    ``shuffle=True`` draws a new order each epoch from ``generator``; ``sampler``
    or ``batch_sampler`` replace the order altogether; ``drop_last`` drops a
    final short batch; ``batch_size=None`` yields single samples, uncollated
    by ``default_collate``. Deviation: ``num_workers``, ``pin_memory`` and the
    other multiprocessing options are accepted and ignored (everything runs in
    this process).
    """

    def __init__(
        self,
        dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn=None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        generator=None,
        **_multiprocessing_options,
    ):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            self.batch_size = None
            self.drop_last = False
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None and not self._iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_sampler is None and batch_size is not None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_size is not None else None)

    def __iter__(self):
        if self._iterable:
            yield from self._iterate_stream()
            return
        if self.batch_sampler is None:
            for index in self.sampler:
                sample = self.dataset[index]
                yield sample if self.collate_fn is None else self.collate_fn(sample)
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def _iterate_stream(self):
        if self.batch_size is None:
            yield from iter(self.dataset)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            raise TypeError("a DataLoader over an IterableDataset has no length")
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
