"""Dispatch keys and key sets."""

import pytest

import whylab
from whylab.dispatch import DispatchKey, DispatchKeySet


def test_key_order_matches_contract():
    order = [
        DispatchKey.CPU,
        DispatchKey.CUDA,
        DispatchKey.Meta,
        DispatchKey.ADInplaceOrView,
        DispatchKey.Autograd,
        DispatchKey.Tracer,
    ]
    assert sorted(order) == order


def test_keyset_operations():
    ks = DispatchKeySet(DispatchKey.CPU, DispatchKey.Autograd)
    assert ks.highest() is DispatchKey.Autograd
    assert DispatchKey.CPU in ks and DispatchKey.Meta not in ks
    assert list(ks) == [DispatchKey.Autograd, DispatchKey.CPU]
    assert ks.add(DispatchKey.Tracer).highest() is DispatchKey.Tracer
    assert ks.remove(DispatchKey.Autograd) == DispatchKeySet(DispatchKey.CPU)
    assert (ks | DispatchKey.Meta) == DispatchKeySet(
        DispatchKey.CPU, DispatchKey.Meta, DispatchKey.Autograd
    )
    assert (ks & DispatchKeySet(DispatchKey.CPU)) == DispatchKeySet(DispatchKey.CPU)
    assert ks.below(DispatchKey.Autograd) == DispatchKeySet(DispatchKey.CPU)
    assert DispatchKeySet().highest() is None
    assert repr(ks) == "DispatchKeySet(Autograd, CPU)"
    assert len(ks) == 2
    with pytest.raises(AttributeError):
        ks.other = 1


@pytest.mark.parametrize(
    ("make", "backend"),
    [
        (lambda: whylab.ones(2), DispatchKey.CPU),
        (lambda: whylab.ones(2, device="meta"), DispatchKey.Meta),
        (lambda: whylab.ones(3, 4).t(), DispatchKey.CPU),
        (lambda: whylab.ones(3, device="meta")[1:], DispatchKey.Meta),
    ],
)
def test_tensor_keyset_is_backend_plus_autograd_keys(make, backend):
    t = make()
    expected = DispatchKeySet(backend, DispatchKey.ADInplaceOrView, DispatchKey.Autograd)
    assert DispatchKeySet.from_bits(t._keys) == expected
