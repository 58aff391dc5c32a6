"""Views: sizes, strides and storage offsets must equal PyTorch's, and views never copy.

Hypothesis draws a random shape and a random chain of view operations; each
step is applied to a whylab tensor and a torch tensor holding the same data.
"""

import numpy as np
import pytest
import torch
from engine_testing import geometry, pair
from hypothesis import given
from hypothesis import strategies as st

import whylab


def _factorizations(n: int, parts: int, draw) -> tuple:
    """A random shape with ``parts`` dimensions whose product is ``n`` (allowing -1)."""
    sizes = []
    remaining = n
    for _ in range(parts - 1):
        divisors = [d for d in range(1, remaining + 1) if remaining % d == 0] or [1]
        d = draw(st.sampled_from(divisors)) if remaining else draw(st.sampled_from([0, 1, 2]))
        sizes.append(d)
        remaining = remaining // d if d else remaining
    sizes.append(remaining if all(sizes) else draw(st.integers(0, 3)))
    return tuple(sizes)


def _view_step(draw, w, t):
    """Draw one view operation valid for the current shape and apply it to both tensors."""
    ndim = w.ndim
    shape = tuple(w.shape)
    choices = ["unsqueeze", "view", "flatten"]
    if ndim >= 1:
        choices += [
            "transpose",
            "permute",
            "slice",
            "select",
            "narrow",
            "squeeze",
            "expand",
            "getitem",
            "unfold",
            "split",
            "movedim",
        ]
    if ndim >= 2:
        choices += ["diagonal", "mT"]
    if ndim <= 2:
        choices += ["t"]
    name = draw(st.sampled_from(choices))
    dim = draw(st.integers(-ndim, ndim - 1)) if ndim else 0
    if name == "unsqueeze":
        d = draw(st.integers(-ndim - 1, ndim))
        return name, w.unsqueeze(d), t.unsqueeze(d)
    if name == "view":
        numel = int(np.prod(shape)) if shape else 1
        target = _factorizations(numel, draw(st.integers(1, 3)), draw)
        if draw(st.booleans()) and numel:
            index = draw(st.integers(0, len(target) - 1))
            target = target[:index] + (-1,) + target[index + 1 :]
        return name, target, None
    if name == "flatten":
        if ndim == 0:
            return name, w.flatten(), t.flatten()
        start = draw(st.integers(0, ndim - 1))
        end = draw(st.integers(start, ndim - 1))
        return name, w.flatten(start, end), t.flatten(start, end)
    if name == "transpose":
        other = draw(st.integers(-ndim, ndim - 1))
        return name, w.transpose(dim, other), t.transpose(dim, other)
    if name == "permute":
        order = draw(st.permutations(range(ndim)))
        return name, w.permute(*order), t.permute(*order)
    if name == "slice":
        size = shape[dim]
        start = draw(st.integers(-size - 1, size + 1))
        stop = draw(st.integers(-size - 1, size + 1))
        step = draw(st.integers(1, 3))
        index = (slice(None),) * (dim % ndim) + (slice(start, stop, step),)
        return name, w[index], t[index]
    if name == "select":
        if shape[dim] == 0:
            return "noop", w, t
        i = draw(st.integers(-shape[dim], shape[dim] - 1))
        return name, w.select(dim, i), t.select(dim, i)
    if name == "narrow":
        start = draw(st.integers(0, shape[dim]))
        length = draw(st.integers(0, shape[dim] - start))
        return name, w.narrow(dim, start, length), t.narrow(dim, start, length)
    if name == "squeeze":
        if draw(st.booleans()):
            return name, w.squeeze(), t.squeeze()
        return name, w.squeeze(dim), t.squeeze(dim)
    if name == "expand":
        target = tuple(draw(st.integers(1, 3)) if s == 1 else s for s in shape)
        lead = tuple(draw(st.lists(st.integers(0, 2), max_size=1)))
        return name, w.expand(*(lead + target)), t.expand(*(lead + target))
    if name == "getitem":
        index = []
        for s in shape[: draw(st.integers(0, ndim))]:
            kind = draw(st.sampled_from(["int", "slice", "none", "all"]))
            if kind == "int" and s > 0:
                index.append(draw(st.integers(-s, s - 1)))
            elif kind == "slice":
                index.append(slice(draw(st.integers(-s, s)), None, draw(st.integers(1, 2))))
            elif kind == "none":
                index.extend([None, slice(None)])
            else:
                index.append(slice(None))
        if draw(st.booleans()):
            index.insert(draw(st.integers(0, len(index))), Ellipsis)
        index = tuple(index)
        try:
            t_result = t[index]
        except IndexError:  # e.g. an int meant for one dim lands on another after "..."
            with pytest.raises(IndexError):
                w[index]
            return "noop", w, t
        return name, w[index], t_result
    if name == "unfold":
        size = draw(st.integers(0, shape[dim]))
        step = draw(st.integers(1, 3))
        return name, w.unfold(dim, size, step), t.unfold(dim, size, step)
    if name == "split":
        size = draw(st.integers(1, max(shape[dim], 1)))
        pieces_w, pieces_t = w.split(size, dim), t.split(size, dim)
        k = draw(st.integers(0, len(pieces_t) - 1))
        assert len(pieces_w) == len(pieces_t)
        return name, pieces_w[k], pieces_t[k]
    if name == "movedim":
        target = draw(st.integers(-ndim, ndim - 1))
        return name, w.movedim(dim, target), t.movedim(dim, target)
    if name == "diagonal":
        d1, d2 = draw(st.permutations(range(ndim)))[:2]
        offset = draw(st.integers(-3, 3))
        return name, w.diagonal(offset, d1, d2), t.diagonal(offset, d1, d2)
    if name == "mT":
        return name, w.mT, t.mT
    return name, w.t(), t.t()


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@given(shape=shapes, data=st.data())
def test_view_chains_match_torch_geometry(shape, data):
    values = np.arange(int(np.prod(shape)) if shape else 1, dtype=np.float64).reshape(shape)
    w0, t0 = pair(values)
    w, t = w0, t0
    for _ in range(data.draw(st.integers(1, 4))):
        name, w_next, t_next = _view_step(data.draw, w, t)
        if name == "view":
            target = w_next
            try:
                t_next = t.view(target)
            except RuntimeError:
                with pytest.raises(RuntimeError, match="view size is not compatible"):
                    w.view(target)
                return
            w_next = w.view(target)
        w, t = w_next, t_next
        assert geometry(w) == geometry(t), name
        assert w.is_contiguous() == t.is_contiguous(), name
        if t.numel() > 0:
            torch_shares = t.untyped_storage().data_ptr() == t0.untyped_storage().data_ptr()
            assert (w.untyped_storage() is w0.untyped_storage()) == torch_shares, name
        assert (w._base is w0) == (t._base is t0), name
    np.testing.assert_array_equal(w.numpy(), t.numpy())


@given(shape=shapes, data=st.data())
def test_writes_through_views_reach_the_base(shape, data):
    values = np.zeros(shape)
    w0, t0 = pair(values)
    w, t = w0, t0
    for _ in range(data.draw(st.integers(1, 3))):
        name, w_next, t_next = _view_step(data.draw, w, t)
        if name in ("view", "expand", "unfold", "noop"):
            continue
        w, t = w_next, t_next
    overlapping = any(st_ == 0 and sz > 1 for sz, st_ in zip(t.shape, t.stride(), strict=True))
    if overlapping or t.numel() == 0:
        return
    w.fill_(7.0)
    t.fill_(7.0)
    np.testing.assert_array_equal(w0.numpy(), t0.numpy())
    if w.untyped_storage() is w0.untyped_storage():
        assert w0._version_counter.value == t0._version == 1


@given(shape=shapes, data=st.data())
def test_reshape_copies_exactly_when_torch_does(shape, data):
    values = np.arange(int(np.prod(shape)) if shape else 1, dtype=np.float64).reshape(shape)
    w, t = pair(values)
    for _ in range(data.draw(st.integers(0, 2))):
        name, w_next, t_next = _view_step(data.draw, w, t)
        if name != "view":
            w, t = w_next, t_next
    numel = t.numel()
    target = _factorizations(numel, data.draw(st.integers(1, 3)), data.draw)
    w_reshaped, t_reshaped = w.reshape(target), t.reshape(target)
    torch_shares = t_reshaped.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    whylab_shares = w_reshaped.untyped_storage() is w.untyped_storage()
    if numel > 0:
        assert whylab_shares == torch_shares
    assert geometry(w_reshaped) == geometry(t_reshaped)
    np.testing.assert_array_equal(w_reshaped.numpy(), t_reshaped.numpy())


def test_view_error_message_matches_pytorch_kind():
    x = whylab.zeros(3, 4).t()
    with pytest.raises(RuntimeError, match=r"view size is not compatible .*Use \.reshape"):
        x.view(12)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 12"):
        whylab.zeros(3, 4).view(5, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        whylab.zeros(3, 4).view(-1, -1)


@pytest.mark.parametrize("sizes", [(-4, -3), (-2, -6), (-3, 2, -2)])
def test_negative_sizes_whose_product_matches_are_refused_as_torch_refuses_them(sizes):
    # The product of these sizes is the element count, 12: a fast path that checks
    # only the product would accept them; torch names the first bad dimension.
    with pytest.raises(RuntimeError) as from_torch:
        torch.zeros(3, 4).view(*sizes)
    assert f"invalid shape dimension {sizes[0]}" in str(from_torch.value)
    for op in ("view", "reshape"):
        with pytest.raises(RuntimeError, match=f"{op}: invalid shape dimension {sizes[0]}"):
            getattr(whylab.zeros(3, 4), op)(*sizes)


def test_expand_uses_stride_zero_and_rejects_bad_sizes():
    x = whylab.zeros(3, 1)
    y = x.expand(2, 3, 4)
    assert y.stride() == (0, 1, 0)
    with pytest.raises(
        RuntimeError,
        match=r"expanded size of the tensor \(5\) must match the "
        r"existing size \(3\)",
    ):
        x.expand(5, 4)
    assert whylab.broadcast_to(x, (3, 2)).shape == (3, 2)


def test_as_strided_and_bounds():
    w, t = pair(np.arange(12.0))
    assert geometry(w.as_strided((3, 2), (2, 3), 1)) == geometry(t.as_strided((3, 2), (2, 3), 1))
    np.testing.assert_array_equal(
        w.as_strided((3, 2), (2, 3), 1).numpy(), t.as_strided((3, 2), (2, 3), 1).numpy()
    )
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        w.as_strided((4, 4), (4, 1))


def test_chunk_split_unbind_match_torch():
    w, t = pair(np.arange(30.0).reshape(5, 6))
    for args in [(2,), (2, 1), (4, 1), (5, 0)]:
        assert [geometry(p) for p in w.chunk(*args)] == [geometry(p) for p in t.chunk(*args)]
    assert [geometry(p) for p in w.split([1, 4])] == [geometry(p) for p in t.split([1, 4])]
    assert [geometry(p) for p in w.unbind(1)] == [geometry(p) for p in t.unbind(1)]
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum"):
        w.split([1, 2])


def test_contiguous_copies_only_when_needed_and_clone_preserves_layout():
    w = whylab.zeros(3, 4)
    assert w.contiguous() is w
    wt = w.t()
    c = wt.contiguous()
    assert c.is_contiguous() and c.untyped_storage() is not w.untyped_storage()
    tt = torch.zeros(3, 4).t()
    assert wt.clone().stride() == tt.clone().stride()
    assert w[:, ::2].clone().stride() == torch.zeros(3, 4)[:, ::2].clone().stride()


def test_storage_and_data_ptr_are_shared_by_views():
    w = whylab.arange(12.0).reshape(3, 4)
    v = w[1:, 2:]
    assert v.untyped_storage() is w.untyped_storage()
    assert v.untyped_storage().data_ptr() == w.untyped_storage().data_ptr()
    assert v.data_ptr() == w.data_ptr() + v.storage_offset() * 4
    assert v.storage_offset() == 6


def test_numpy_is_zero_copy_both_ways():
    w = whylab.zeros(2, 3)
    array = w.numpy()
    array[0, 1] = 5
    assert w[0, 1].item() == 5
    source = np.zeros((2, 3))
    shared = whylab.from_numpy(source)
    shared[1, 2] = 3
    assert source[1, 2] == 3
    transposed = whylab.from_numpy(source.T)
    assert transposed.stride() == (1, 3)
    assert whylab.as_tensor(source).untyped_storage().data is not None


VIEWS_OF_ONE_TENSOR = {
    "t": lambda t: t.t(),
    "view": lambda t: t.view(12),
    "select": lambda t: t[0],
    "slice": lambda t: t[:, 1:],
    "expand": lambda t: t[0].expand(2, 4),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "diagonal": lambda t: t.diagonal(),
    "unfold": lambda t: t.unfold(1, 2, 1),
}


@pytest.mark.parametrize("view", list(VIEWS_OF_ONE_TENSOR))
def test_a_view_of_an_inference_tensor_is_an_inference_tensor_like_torch(view):
    # A view carries its base's key set (torch builds view TensorImpls with self.key_set()),
    # also outside inference_mode, where no ADInplaceOrView kernel runs for it.
    with torch.inference_mode():
        theirs = torch.ones(3, 4)
    with whylab.inference_mode():
        ours = whylab.ones(3, 4)
    make = VIEWS_OF_ONE_TENSOR[view]
    assert make(theirs).is_inference() and make(ours).is_inference()
    ordinary = whylab.ones(3, 4)
    assert not make(ordinary).is_inference() and make(ordinary)._keys == ordinary._keys
