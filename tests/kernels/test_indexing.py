"""Indexing (basic views and advanced copies), assignment, and the gather/scatter family."""

import numpy as np
import pytest
import torch
from engine_testing import assert_same, geometry, pair, random_array

import whylab

BASIC_INDICES = [
    1,
    -1,
    (1, 2),
    (slice(None), 1),
    (slice(1, None, 2),),
    (Ellipsis, 1),
    (None, 1),
    (slice(None), None, slice(None, None, 3)),
    (Ellipsis,),
    (),
    (1, Ellipsis, None),
    (slice(-3, -1), slice(None, None, -1 + 3)),
    (-2, slice(None), -1),
]


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_basic_indexing_is_a_view_with_torch_geometry(index):
    w, t = pair(np.arange(60.0).reshape(3, 4, 5))
    w_result, t_result = w[index], t[index]
    assert geometry(w_result) == geometry(t_result)
    assert w_result.untyped_storage() is w.untyped_storage()
    assert w_result is not w
    assert_same(w_result, t_result)


ADVANCED_INDICES = [
    [0, 2],
    ([0, 2],),
    (slice(None), [1, 3]),
    ([0, 1], [1, 2]),
    ([0, 1], slice(None), [2, 4]),
    (slice(None), [[0], [2]], [1, 3]),
    (1, [0, 3]),
    ([[0, 1], [2, 2]],),
    (Ellipsis, [4, 0]),
    (None, [0, 1]),
    (slice(0, 2), [1, 2], slice(None)),
    (-1, [-1, -2], 0),
]


@pytest.mark.parametrize("index", ADVANCED_INDICES, ids=repr)
def test_advanced_indexing_copies_like_torch(index):
    w, t = pair(np.arange(60.0).reshape(3, 4, 5))
    w_result = w[index]
    t_result = t[index]
    assert_same(w_result, t_result)
    assert w_result.untyped_storage() is not w.untyped_storage()


@pytest.mark.parametrize("index", ADVANCED_INDICES[1:8], ids=repr)
def test_advanced_indexing_keeps_torch_layout_of_transposed_source(index):
    w, t = pair(np.arange(60.0).reshape(5, 4, 3))
    w_source, t_source = w.permute(2, 1, 0), t.permute(2, 1, 0)
    w_result, t_result = w_source[index], t_source[index]
    assert_same(w_result, t_result)
    assert w_result.stride() == t_result.stride()


def test_bool_mask_and_tensor_indices():
    w, t = pair(random_array((3, 4), seed=30))
    assert_same(w[w > 0], t[t > 0])
    assert_same(w[(w > 0)[:, 0]], t[(t > 0)[:, 0]])
    assert_same(
        w[:, whylab.tensor([True, False, True, False])],
        t[:, torch.tensor([True, False, True, False])],
    )
    index_w, index_t = pair(np.array([[2, 0], [1, 1]]))
    assert_same(w[index_w], t[index_t])
    assert_same(w[index_w, 1:], t[index_t, 1:])
    assert_same(w[True], t[True])
    assert_same(w[whylab.tensor(1)], t[torch.tensor(1)])


def test_index_errors():
    w = whylab.zeros(3, 4)
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        w[0, 0, 0]
    with pytest.raises(
        IndexError,
        match=r"select\(\): index 3 out of range for tensor of size "
        r"\[3, 4\] at dimension 0",
    ):
        w[3]
    with pytest.raises(IndexError, match="out of bounds"):
        w[[0, 5]]
    with pytest.raises(IndexError, match="shape of the mask"):
        w[whylab.tensor([True, False])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        w[::-1]
    with pytest.raises(IndexError):
        w[1.5]


SET_CASES = [
    (1, 5.0),
    ((slice(None), 2), 7.0),
    ((slice(0, 2), slice(1, 3)), "tensor22"),
    ((Ellipsis, 0), "tensor3"),
    ([0, 2], 9.0),
    (([0, 2], [1, 3]), "tensor2"),
    ("mask", -1.0),
    ((slice(None), [0, 1]), "tensor32"),
]


@pytest.mark.parametrize(("index", "value"), SET_CASES, ids=repr)
def test_setitem_matches_torch_and_bumps_version(index, value):
    w, t = pair(random_array((3, 4), seed=31))
    if isinstance(value, str):
        shape = {"tensor22": (2, 2), "tensor3": (3,), "tensor2": (2,), "tensor32": (3, 2)}[value]
        value_w, value_t = pair(random_array(shape, seed=32))
    else:
        value_w = value_t = value
    if index == "mask":
        w[w > 0] = value_w
        t[t > 0] = value_t
    else:
        w[index] = value_w
        t[index] = value_t
    assert_same(w, t)
    assert w._version_counter.value == 1


def test_setitem_through_a_view_reaches_the_base():
    w, t = pair(np.zeros((4, 4)))
    w_view, t_view = w.t()[1:], t.t()[1:]
    w_view[0, [1, 2]] = 3.0
    t_view[0, [1, 2]] = 3.0
    w_view[:, 0] = whylab.tensor([1.0, 2.0, 3.0], dtype=whylab.float64)
    t_view[:, 0] = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert_same(w, t)
    assert w._version_counter.value == 2


def test_cat_and_stack():
    pieces = [random_array((2, 3), seed=s) for s in range(3)]
    w_pieces = [whylab.tensor(p) for p in pieces]
    t_pieces = [torch.tensor(p) for p in pieces]
    for dim in (0, 1, -1):
        assert_same(whylab.cat(w_pieces, dim), torch.cat(t_pieces, dim))
        assert_same(whylab.stack(w_pieces, dim), torch.stack(t_pieces, dim))
    assert_same(
        whylab.cat([w_pieces[0].t(), w_pieces[1].t()]),
        torch.cat([t_pieces[0].t(), t_pieces[1].t()]),
    )
    mixed = whylab.cat([whylab.ones(2, dtype=whylab.int64), whylab.ones(2, dtype=whylab.float64)])
    assert mixed.dtype is whylab.float64
    assert whylab.cat([whylab.ones(2, 3), whylab.zeros(0)]).shape == (2, 3)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        whylab.cat([whylab.ones(2, 3), whylab.ones(2, 4)])
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but got "
        r"\[2, 3\] at entry 0 and \[2, 4\] at entry 1",
    ):
        whylab.stack([whylab.ones(2, 3), whylab.ones(2, 4)])


def test_gather_scatter_add_index_select():
    w, t = pair(random_array((3, 5), seed=33))
    index_w, index_t = pair(np.array([[0, 1, 2], [2, 2, 0]]))
    for dim in (0, 1):
        assert_same(w.gather(dim, index_w), t.gather(dim, index_t))
    source_w, source_t = pair(random_array((2, 3), seed=34))
    for dim in (0, 1):
        assert_same(w.scatter_add(dim, index_w, source_w), t.scatter_add(dim, index_t, source_t))
        assert_same(w.scatter(dim, index_w, source_w), t.scatter(dim, index_t, source_t))
    inplace_w, inplace_t = w.clone(), t.clone()
    inplace_w.scatter_add_(1, index_w, source_w)
    inplace_t.scatter_add_(1, index_t, source_t)
    assert_same(inplace_w, inplace_t)
    assert inplace_w._version_counter.value == 1
    rows_w, rows_t = pair(np.array([2, 0, 2]))
    for dim in (0, 1):
        assert_same(w.index_select(dim, rows_w), t.index_select(dim, rows_t))
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int64 for index"):
        w.gather(0, index_w.to(whylab.int32))
    with pytest.raises(RuntimeError, match="out of bounds"):
        w.gather(0, whylab.tensor([[5]]))


def test_masked_fill_one_hot_tril_triu_nonzero():
    w, t = pair(random_array((4, 4), seed=35))
    assert_same(w.masked_fill(w > 0, 0.5), t.masked_fill(t > 0, 0.5))
    for diagonal in (-1, 0, 2):
        assert_same(w.tril(diagonal), t.tril(diagonal))
        assert_same(whylab.triu(w, diagonal), torch.triu(t, diagonal))
    labels_w, labels_t = pair(np.array([0, 2, 1, 2]))
    assert_same(whylab.one_hot(labels_w), torch.nn.functional.one_hot(labels_t))
    assert_same(whylab.one_hot(labels_w, 5), torch.nn.functional.one_hot(labels_t, 5))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        whylab.one_hot(labels_w, 2)
    assert_same(w.nonzero(), t.nonzero())
    assert_same(whylab.masked_select(w, w > 0), torch.masked_select(t, t > 0))
