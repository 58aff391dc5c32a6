"""whylab.utils.data against torch.utils.data: datasets, samplers, collate, DataLoader."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import whylab
import whylab.utils.data as data


def _pairs(framework):
    features = framework.tensor(np.arange(20.0).reshape(10, 2))
    labels = framework.tensor(np.arange(10))
    return features, labels


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (10, True)])
def test_sequential_batches_match_torch(batch_size, drop_last):
    ours = data.DataLoader(data.TensorDataset(*_pairs(whylab)), batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(tdata.TensorDataset(*_pairs(torch)), batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    for (x, y), (tx, ty) in zip(ours, theirs, strict=True):
        assert x.tolist() == tx.tolist() and y.tolist() == ty.tolist()
        assert x.dtype.name == str(tx.dtype).split(".")[1]


class Records:
    """Samples of every structure default_collate handles."""

    def __init__(self, framework):
        self.framework = framework

    def __len__(self):
        return 5

    def __getitem__(self, i):
        f = self.framework
        return {
            "x": f.tensor([float(i), 2.0 * i]),
            "pair": (i, 0.5 * i),
            "name": f"item{i}",
            "array": np.full(2, i, dtype=np.float32),
        }


def test_collate_of_dicts_tuples_numbers_strings_and_arrays_matches_torch():
    ours = next(iter(data.DataLoader(Records(whylab), batch_size=4)))
    theirs = next(iter(tdata.DataLoader(Records(torch), batch_size=4)))
    assert ours["x"].tolist() == theirs["x"].tolist()
    assert [t.tolist() for t in ours["pair"]] == [t.tolist() for t in theirs["pair"]]
    assert [t.dtype.name for t in ours["pair"]] == [str(t.dtype)[6:] for t in theirs["pair"]]
    assert ours["name"] == theirs["name"]
    assert ours["array"].tolist() == theirs["array"].tolist()


def test_shuffle_visits_every_sample_once_and_follows_its_generator():
    dataset = data.TensorDataset(*_pairs(whylab))
    first = [
        int(v)
        for _, y in data.DataLoader(
            dataset, 4, shuffle=True, generator=whylab.Generator().manual_seed(3)
        )
        for v in y
    ]
    again = [
        int(v)
        for _, y in data.DataLoader(
            dataset, 4, shuffle=True, generator=whylab.Generator().manual_seed(3)
        )
        for v in y
    ]
    assert sorted(first) == list(range(10)) and first == again and first != list(range(10))


def test_random_split_subsets_samplers_and_concat():
    dataset = data.TensorDataset(*_pairs(whylab))
    parts = data.random_split(dataset, [0.7, 0.3], generator=whylab.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [7, 3]
    seen = sorted(int(parts[k][i][1]) for k in range(2) for i in range(len(parts[k])))
    assert seen == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(dataset, [5, 4])
    assert len(data.ConcatDataset([dataset, dataset])) == 20
    assert int((dataset + dataset)[13][1]) == 3
    batches = list(data.BatchSampler(data.SequentialSampler(range(7)), 3, drop_last=False))
    assert batches == list(tdata.BatchSampler(tdata.SequentialSampler(range(7)), 3, False))
    draws = list(data.RandomSampler(range(5), replacement=True, num_samples=12))
    assert len(draws) == 12 and set(draws) <= set(range(5))
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        data.BatchSampler(data.SequentialSampler(range(3)), 0, False)
    with pytest.raises(ValueError, match="mutually exclusive"):
        data.DataLoader(dataset, sampler=data.SequentialSampler(dataset), shuffle=True)


def test_iterable_dataset_batches():
    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(whylab.tensor([float(i)]) for i in range(5))

    shapes = [tuple(b.shape) for b in data.DataLoader(Stream(), batch_size=2)]
    assert shapes == [(2, 1), (2, 1), (1, 1)]
