"""The dispatcher: schemas, kernel tables, fallthrough, redispatch, TLS, fallbacks, trace."""

import numpy as np
import pytest

import whylab
from whylab._core.keys import DispatchKeySet
from whylab.dispatch import (
    CompositeImplicitAutograd,
    DispatchKey,
    define,
    exclude_keys,
    excluded_keys,
    get_op,
    include_keys,
    included_keys,
    parse_schema,
    register_fallback,
    register_fallthrough_for_all,
    trace,
)

_counter = iter(range(10**6))


def fresh_op(schema_tail="(Tensor self) -> Tensor"):
    """A new operator with a unique name, so tests never share tables."""
    return define(f"test_op_{next(_counter)}{schema_tail}")


def test_parse_schema_alias_annotations():
    schema = parse_schema("add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert schema.name == "add_"
    assert [a.name for a in schema.arguments] == ["self", "other", "alpha"]
    assert schema.arguments[2].keyword_only and schema.arguments[2].default == "1"
    assert schema.is_inplace and not schema.is_view
    view = parse_schema("transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
    assert view.is_view and not view.is_inplace
    lists = parse_schema("cat(Tensor[] tensors, int dim=0) -> Tensor")
    assert lists.arguments[0].is_tensor_list
    with pytest.raises(ValueError, match="cannot parse"):
        parse_schema("not a schema")


def test_define_twice_returns_same_operator_and_conflict_raises():
    op = fresh_op()
    assert define(op.schema.text) is op
    with pytest.raises(ValueError, match="already defined"):
        define(f"{op.name}(Tensor self, int x) -> Tensor")


def test_highest_key_runs_and_fallthrough_skips():
    op = fresh_op()
    calls = []
    op.register(DispatchKey.CPU, lambda self: calls.append("cpu") or "cpu")
    assert op(whylab.ones(1)) == "cpu"

    def autograd_kernel(keyset, self):
        calls.append("autograd")
        assert DispatchKeySet.from_bits(keyset) == DispatchKeySet(
            DispatchKey.CPU, DispatchKey.ADInplaceOrView
        )
        return op.redispatch(keyset, self)

    op.register(DispatchKey.Autograd, autograd_kernel)
    assert op(whylab.ones(1)) == "cpu"
    assert calls == ["cpu", "autograd", "cpu"]
    op.register_fallthrough(DispatchKey.Autograd)
    calls.clear()
    op(whylab.ones(1))
    assert calls == ["cpu"]
    assert op.kernel_name(DispatchKey.Autograd) == "fallthrough"


def test_backend_is_chosen_by_tensor_device():
    op = fresh_op()
    op.register(DispatchKey.CPU, lambda self: "cpu")
    op.register(DispatchKey.Meta, lambda self: "meta")
    assert op(whylab.ones(1)) == "cpu"
    assert op(whylab.ones(1, device="meta")) == "meta"


def test_missing_kernel_names_op_and_keys():
    op = fresh_op()
    op.register(DispatchKey.CPU, lambda self: "cpu")
    with pytest.raises(NotImplementedError, match=f"{op.name}: no kernel .*Meta"):
        op(whylab.ones(1, device="meta"))


def test_tls_exclude_and_include():
    op = fresh_op()
    op.register(DispatchKey.CPU, lambda self: "cpu")
    op.register(DispatchKey.Autograd, lambda ks, self: "autograd")
    op.register(DispatchKey.Tracer, lambda ks, self: "tracer")
    x = whylab.ones(1)
    assert op(x) == "autograd"
    with exclude_keys(DispatchKey.Autograd):
        assert DispatchKey.Autograd in excluded_keys()
        assert op(x) == "cpu"
        with include_keys(DispatchKey.Tracer):
            assert DispatchKey.Tracer in included_keys()
            assert op(x) == "tracer"
        assert op(x) == "cpu"
    assert op(x) == "autograd"
    assert DispatchKey.Autograd not in excluded_keys()


def test_redispatch_accepts_keyset_object():
    op = fresh_op()
    op.register(DispatchKey.CPU, lambda self: "cpu")
    op.register(DispatchKey.Meta, lambda self: "meta")
    x = whylab.ones(1)
    assert op.redispatch(DispatchKeySet(DispatchKey.Meta, DispatchKey.CPU), x) == "meta"
    assert op.redispatch(DispatchKeySet(DispatchKey.CPU), x) == "cpu"


def test_global_fallback_is_boxed_and_own_kernel_wins():
    op = fresh_op()
    other = fresh_op()
    op.register(DispatchKey.CPU, lambda self: "cpu")
    other.register(DispatchKey.CPU, lambda self: "cpu")
    other.register(DispatchKey.Autograd, lambda ks, self: "own autograd kernel")
    seen = []

    def fallback(operator, keyset, *args, **kwargs):
        seen.append(operator.name)
        return operator.redispatch(keyset, *args, **kwargs)

    x = whylab.ones(1)
    register_fallback(DispatchKey.Autograd, fallback)
    try:
        assert op(x) == "cpu"
        assert other(x) == "own autograd kernel"
        assert seen == [op.name]
        assert op.kernel_name(DispatchKey.Autograd).startswith("fallback ")
    finally:
        register_fallthrough_for_all(DispatchKey.Autograd)
    seen.clear()
    op(x)
    assert seen == []


def test_composite_fills_autograd_and_backend_slots():
    inner = fresh_op()
    inner.register(DispatchKey.CPU, lambda self: "inner cpu")
    outer = fresh_op()
    outer.register(CompositeImplicitAutograd, lambda self: inner(self))
    for key in (DispatchKey.Autograd, DispatchKey.CPU, DispatchKey.Meta):
        assert outer.has_kernel(key)
    assert outer(whylab.ones(1)) == "inner cpu"
    with exclude_keys(DispatchKey.Autograd):
        assert outer(whylab.ones(1)) == "inner cpu"


def test_view_op_sets_base_and_shares_version():
    x = whylab.zeros(3, 4)
    y = x.t()
    assert y._base is x and y._version_counter is x._version_counter
    z = y[1:]
    assert z._base is x, "a view of a view records the root base, as in PyTorch"
    assert get_op("t").has_kernel(DispatchKey.ADInplaceOrView)
    assert not get_op("add").has_kernel(DispatchKey.ADInplaceOrView)


def test_inplace_op_bumps_shared_version():
    x = whylab.zeros(3, 4)
    view = x[0]
    before = x._version_counter.value
    view.add_(1)
    assert x._version_counter.value == before + 1
    x.mul_(2)
    x[1] = 5.0
    assert x._version_counter.value == before + 3
    assert view._version_counter is x._version_counter


def test_detach_shares_storage_and_version_but_not_base():
    x = whylab.ones(2, 2)
    d = x.detach()
    assert d._base is None and d._version_counter is x._version_counter
    assert d.untyped_storage() is x.untyped_storage()
    d.add_(1)
    assert x._version_counter.value == 1
    assert x.data._version_counter is not x._version_counter


def test_trace_of_matmul_shows_mm():
    a, b = whylab.ones(2, 3), whylab.ones(3, 4)
    with trace() as t:
        a @ b
    assert [(e.op, e.key, e.depth) for e in t.events] == [
        ("matmul", "Tracer", 0),
        ("matmul", "Autograd", 0),
        ("mm", "Tracer", 1),
        ("mm", "Autograd", 1),  # autograd's kernel: nothing to record, redispatches
        ("mm", "CPU", 1),
    ]
    assert t.events[-1].kernel == "whylab.kernels.cpu.linalg.mm"
    assert t.events[0].inputs == ("Tensor[2, 3] float32", "Tensor[3, 4] float32")
    assert t.ops() == ["matmul", "mm"]
    assert "mm @ CPU" in t.format()


def test_trace_records_view_hops_and_stops_after_exit():
    x = whylab.ones(2, 3)
    with trace() as t:
        x.t()
    assert [(e.op, e.key) for e in t.events] == [
        ("t", "Tracer"),
        ("t", "Autograd"),  # autograd's kernel: nothing to record, redispatches
        ("t", "ADInplaceOrView"),
        ("t", "CPU"),
    ]
    x.t()
    assert len(t.events) == 4
    assert DispatchKey.Tracer not in included_keys()


def test_trace_of_batched_matmul_goes_through_bmm():
    with trace() as t:
        whylab.ones(5, 2, 3) @ whylab.ones(5, 3, 4)
    assert "bmm" in t.ops()


def test_ops_namespace_and_get_op():
    assert whylab.ops.mm is get_op("mm")
    with pytest.raises(AttributeError, match="no operator named 'no_such_op'"):
        whylab.ops.__getattr__("no_such_op")
    with pytest.raises(KeyError):
        get_op("no_such_op")


def test_kwargs_reach_kernels_by_schema_name():
    a = whylab.ones(2)
    np.testing.assert_allclose(whylab.ops.add(a, a, alpha=3).numpy(), [4.0, 4.0])


def test_factory_dispatches_on_device_argument():
    with trace() as t:
        whylab.zeros(2, device="meta")
    assert [(e.op, e.key) for e in t.events] == [("zeros", "Tracer"), ("zeros", "Meta")]


def test_bad_argument_type_names_the_op():
    with pytest.raises(TypeError, match="exp"):
        whylab.exp(3.0)
