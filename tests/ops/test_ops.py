"""Every operator in the OpInfo table against torch 2.13: forward, Meta, gradients,
second order, in-place and method variants; and the table's coverage of the dispatcher.

Each test is parametrized over (OpInfo, Sample). Float64 results must match to
rtol 1e-10 / atol 1e-12: the two libraries compute the same formulas in double
precision, so they differ by a few rounding steps (~1e-15 relative); the bound leaves
five orders of margin yet fails for any wrong formula. Integer and bool results must
be equal.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import pytest
import torch

import whylab
from whylab.dispatch import all_ops, trace

from .core import (
    ERROR_KINDS,
    Materialized,
    OpInfo,
    Sample,
    assert_results_equal,
    assert_tensor_equal,
    call_both,
    gradient_tolerances,
    method_caller,
    node_names,
    run_both,
    sample_arrs,
    tensors_of,
)
from .opinfo import NARROW, OP_DB, SKIPS
from .samples import Maker


def _seed(*parts) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def _describe(sample: Sample) -> str:
    parts = []
    for arr in sample_arrs(sample)[:3]:
        shape = "x".join(map(str, arr.shape)) or "0d"
        parts.append(shape if arr.layout == "contiguous" else f"{shape}{arr.layout}")
    parts += [
        f"{key}={value}"
        for key, value in sample.kwargs.items()
        if key != "weight" and not sample_arrs(Sample(value))
    ]
    if sample.name:
        parts.append(sample.name)
    return "-".join(parts) or "call"


def samples_of(info: OpInfo) -> list[tuple[str, Sample]]:
    """(dtype, sample) pairs of one entry, with fixed seeds, named uniquely."""
    out = []
    for dtype in info.dtypes:
        maker = Maker(np.random.default_rng(_seed(info.id, dtype)), dtype)
        samples = info.samples(maker)
        if dtype != "float64":  # the layouts are float64's business: a few, plus named cases
            samples = samples[:3] + [s for s in samples[3:] if s.name or s.xfail]
        out += [(dtype, sample) for sample in samples]
    seen: dict[str, int] = {}
    for dtype, sample in out:
        base = f"{dtype}-{_describe(sample)}"
        seen[base] = seen.get(base, 0) + 1
        sample.name = base if seen[base] == 1 else f"{base}-{seen[base]}"
    return out


SAMPLES = {info.id: samples_of(info) for info in OP_DB}
FLOATS = ("float64", "float32")  # the dtypes the gradient tests run on
# What float32 and int32 samples are checked for (the rest - Meta, second order, node
# names, variants - does not depend on the width of the dtype, and would double the time)
NARROW_KINDS = ("forward", "strides", "grad")


def params(kind: str, select=lambda info: True, float_only=False, first_dtype=False):
    """pytest params (info, sample) for one test kind; a sample's ``xfail`` for the kind
    becomes a strict xfail mark."""
    out = []
    for info in OP_DB:
        if not select(info):
            continue
        for dtype, sample in SAMPLES[info.id]:
            if (float_only and dtype not in FLOATS) or (first_dtype and dtype != info.dtypes[0]):
                continue
            if dtype in NARROW.values() and kind not in NARROW_KINDS:
                continue
            marks = ()
            if kind in sample.xfail:
                marks = (pytest.mark.xfail(strict=True, reason=sample.xfail[kind]),)
            out.append(pytest.param(info, sample, id=f"{info.id}-{sample.name}", marks=marks))
    return out


# ------------------------------------------------------------------------ forward


def _storage_shared(result, argument) -> bool:
    if isinstance(result, torch.Tensor):
        return result.untyped_storage().data_ptr() == argument.untyped_storage().data_ptr()
    return result.untyped_storage() is argument.untyped_storage()


def _check_view_geometry(w_result, t_result, w_args, t_args, what):
    """A view op's results share their input's storage exactly when torch's do, at
    torch's storage offset."""
    w_input = w_args.input if not isinstance(w_args.input, list) else w_args.input[0]
    t_input = t_args.input if not isinstance(t_args.input, list) else t_args.input[0]
    for index, (w, t) in enumerate(zip(tensors_of(w_result), tensors_of(t_result), strict=True)):
        if t.numel() == 0:
            continue
        shared = _storage_shared(t, t_input)
        assert _storage_shared(w, w_input) == shared, f"{what} output {index}: sharing storage"
        if shared:
            assert w.storage_offset() == t.storage_offset(), f"{what} output {index}: offset"


@pytest.mark.parametrize(("info", "sample"), params("forward"))
def test_forward_matches_torch(info: OpInfo, sample: Sample):
    w, t, w_args, t_args = run_both(info, sample)
    if t is None:  # the sample's claim is the error: torch raised, and run_both checked
        assert w is None  # that whylab raised the same kind
        return
    # random or uninitialised values: the shape and dtype must match, not the numbers
    assert_results_equal(w, t, info, "forward", strides=False, values=not info.random)
    if info.is_view:
        _check_view_geometry(w, t, w_args, t_args, "forward")
    if info.mutates:
        assert w is w_args.input, "an in-place op returns its input"
        assert_tensor_equal(w_args.input, t_args.input, info, "mutated input")


@pytest.mark.parametrize(("info", "sample"), params("strides", lambda info: info.check_strides))
def test_forward_strides_match_torch(info: OpInfo, sample: Sample):
    """The result's layout is torch's (elementwise results follow their inputs' layout,
    as TensorIterator lays them out; views have the strides of the viewed geometry)."""
    w, t, _, _ = run_both(info, sample)
    if t is None:
        pytest.skip("torch raises on this sample: test_forward_matches_torch compares the error")
    assert_results_equal(w, t, info, "forward", strides=True, values=False)


# ------------------------------------------------------------------------ Meta


def _on_meta(sample: Sample) -> Sample:
    """Factories take device="meta"; ops get meta tensors (materialized on meta)."""
    if sample_arrs(sample):
        return sample
    return dataclasses.replace(sample, kwargs={**sample.kwargs, "device": "meta"})


@pytest.mark.parametrize(("info", "sample"), params("meta", lambda info: info.supports_meta))
def test_meta_matches_torch(info: OpInfo, sample: Sample):
    meta_sample = _on_meta(sample)
    # torch's meta errors come from its Python reference kernels and may be of another
    # class than its CPU errors (ValueError for RuntimeError); any error kind will do
    w, t, _, _ = run_both(info, meta_sample, same_kind=False, device="meta")
    if t is None:  # the claim is the error: torch's meta kernel raised, and so did whylab's
        assert w is None
        return
    # torch's meta strides are its contract for views; for computed results whylab's
    # meta kernel predicts whylab's CPU kernel (whose strides the forward test compares
    # with torch's CPU), since torch's own meta and CPU kernels differ on some size-1 dims
    assert_results_equal(w, t, info, "meta", strides=info.is_view)
    for out in tensors_of(w):
        assert out.device.type == "meta" and out._array is None
    if info.check_strides and not info.is_view:
        try:
            cpu = Materialized(whylab, sample).call(info.op)
        except ERROR_KINDS:  # a data-dependent error (class index too big): forward's part
            pytest.skip("the CPU kernel raises on these values: no CPU strides to compare")
        for index, (meta_out, cpu_out) in enumerate(
            zip(tensors_of(w), tensors_of(cpu), strict=True)
        ):
            if cpu_out.numel():
                assert meta_out.stride() == cpu_out.stride(), f"meta output {index}: strides"


# ------------------------------------------------------------------------ gradients


def _differentiable_outputs(w, t):
    w_outs, t_outs = tensors_of(w), tensors_of(t)
    assert [o.requires_grad for o in w_outs] == [o.requires_grad for o in t_outs], (
        "which outputs require grad"
    )
    return [o for o in w_outs if o.requires_grad], [o for o in t_outs if o.requires_grad]


def _grad_outputs(outputs, rng, requires_grad=False):
    """Random incoming gradients, each in its output's dtype."""
    values = [
        rng.standard_normal(tuple(o.shape)).astype(str(o.dtype).removeprefix("torch."))
        for o in outputs
    ]
    return (
        [whylab.tensor(v, requires_grad=requires_grad) for v in values],
        [torch.tensor(v, requires_grad=requires_grad) for v in values],
    )


def _assert_grads_equal(w_grads, t_grads, shapes, info, what):
    for index, (w, t, shape) in enumerate(zip(w_grads, t_grads, shapes, strict=True)):
        rtol, atol = gradient_tolerances(t.dtype if t is not None else w, info)
        w = np.zeros(shape) if w is None else w.detach().numpy()
        # torch answers some zero derivatives with an "efficient zero tensor" (no data)
        t = np.zeros(shape) if t is None or t._is_zerotensor() else t.detach().numpy()
        assert w.shape == t.shape, f"{what} {index}: shape {w.shape} != {t.shape}"
        np.testing.assert_allclose(w, t, rtol=rtol, atol=atol, err_msg=f"{what} {index}")


def _differentiated(info: OpInfo, sample: Sample):
    """The outputs that require grad, in whylab and torch; skips the test when torch raises
    or no output requires grad (after checking whylab agrees which outputs do)."""
    w, t, w_args, t_args = run_both(info, sample, requires_grad=True, clone=info.mutates)
    if t is None:
        pytest.skip("torch raises on this sample: test_forward_matches_torch compares the error")
    w_outs, t_outs = _differentiable_outputs(w, t)
    if not t_outs:
        pytest.skip("no output requires grad (whylab agrees, checked): nothing to differentiate")
    return w_outs, t_outs, w_args, t_args


def _autograd_params():
    return params("grad", lambda info: info.supports_autograd, float_only=True)


@pytest.mark.parametrize(("info", "sample"), _autograd_params())
def test_gradients_match_torch(info: OpInfo, sample: Sample):
    w_outs, t_outs, w_args, t_args = _differentiated(info, sample)
    w_seeds, t_seeds = _grad_outputs(t_outs, np.random.default_rng(_seed("grad", sample.name)))
    w_grads, t_grads = call_both(  # torch refuses some backward passes; whylab must too
        lambda: whylab.autograd.grad(w_outs, w_args.leaves, w_seeds, allow_unused=True),
        lambda: torch.autograd.grad(t_outs, t_args.leaves, t_seeds, allow_unused=True),
    )
    if t_grads is None:  # the claim is the refusal: torch refused this backward, whylab too
        assert w_grads is None
        return
    shapes = [tuple(leaf.shape) for leaf in t_args.leaves]
    _assert_grads_equal(w_grads, t_grads, shapes, info, "gradient of input")


@pytest.mark.parametrize(
    ("info", "sample"), params("nodes", lambda info: info.supports_autograd, float_only=True)
)
def test_recorded_nodes_match_torch(info: OpInfo, sample: Sample):
    """Every node reachable from each output's ``grad_fn`` has torch's name: a composite
    records the operators torch's composite calls, an operator torch's node."""
    w_outs, t_outs, _, _ = _differentiated(info, sample)
    for index, (w, t) in enumerate(zip(w_outs, t_outs, strict=True)):
        assert node_names(w.grad_fn) == node_names(t.grad_fn), f"output {index}"


def _second_order(lib, outs, leaves, seeds, directions):
    """d/d(leaves, seeds) of sum(grad(outs, leaves, seeds) * directions)."""
    grads = lib.autograd.grad(outs, leaves, seeds, create_graph=True, allow_unused=True)
    terms = [
        (g * d).sum()
        for g, d in zip(grads, directions, strict=True)
        if g is not None and g.requires_grad
    ]
    if not terms:
        return [None] * (len(leaves) + len(seeds))
    return lib.autograd.grad(sum(terms), leaves + seeds, allow_unused=True)


@pytest.mark.parametrize(
    ("info", "sample"),
    params("gradgrad", lambda info: info.supports_autograd and info.supports_gradgrad,
           float_only=True),
)
def test_second_order_matches_torch(info: OpInfo, sample: Sample):
    w_outs, t_outs, w_args, t_args = _differentiated(info, sample)
    rng = np.random.default_rng(_seed("gradgrad", sample.name))
    w_seeds, t_seeds = _grad_outputs(t_outs, rng, requires_grad=True)
    shapes = [tuple(leaf.shape) for leaf in t_args.leaves]
    directions = [rng.standard_normal(shape) for shape in shapes]
    w_second, t_second = call_both(
        lambda: _second_order(
            whylab, w_outs, w_args.leaves, w_seeds, [whylab.tensor(d) for d in directions]
        ),
        lambda: _second_order(
            torch, t_outs, t_args.leaves, t_seeds, [torch.tensor(d) for d in directions]
        ),
    )
    if t_second is None:  # the claim is the refusal: torch refused, and so did whylab
        assert w_second is None
        return
    shapes += [tuple(seed.shape) for seed in t_seeds]
    _assert_grads_equal(w_second, t_second, shapes, info, "second derivative, input")


# ------------------------------------------------------------------------ variants


def _as_method(info: OpInfo, name: str) -> OpInfo:
    return dataclasses.replace(info, op=method_caller(name), ref=method_caller(name))


@pytest.mark.parametrize(("info", "sample"), params("inplace", lambda info: info.inplace))
def test_inplace_variant_matches_out_of_place(info: OpInfo, sample: Sample):
    inplace = _as_method(info, info.inplace)
    t_args = Materialized(torch, sample)
    w_args = Materialized(whylab, sample)
    before = w_args.input._version
    w, t = call_both(lambda: w_args.call(inplace.op), lambda: t_args.call(inplace.ref))
    if t is None:  # the claim is the error: torch's in-place form raised, and so did whylab's
        assert w is None
        return
    assert w is w_args.input, f"{info.inplace} returns its input"
    assert w._version == before + 1, f"{info.inplace} bumps the version counter"
    assert_tensor_equal(w, t, info, f"{info.inplace} vs torch")
    expected = Materialized(whylab, sample).call(info.op)
    np.testing.assert_allclose(
        w.numpy(), expected.numpy().astype(w.numpy().dtype), rtol=info.rtol, atol=info.atol,
        err_msg=f"{info.inplace} vs {info.name}",
    )


@pytest.mark.parametrize(
    ("info", "sample"), params("method", lambda info: info.method, first_dtype=True)
)
def test_method_variant_matches_function(info: OpInfo, sample: Sample):
    as_method = _as_method(info, info.method)
    w, t, _, _ = run_both(as_method, sample)
    if t is None:  # the claim is the error: torch's method raised, and so did whylab's
        assert w is None
        return
    assert_results_equal(w, t, info, f"Tensor.{info.method} vs torch", strides=False)
    function = Materialized(whylab, sample).call(info.op)
    for index, (m_out, f_out) in enumerate(zip(tensors_of(w), tensors_of(function), strict=True)):
        assert tuple(m_out.shape) == tuple(f_out.shape) and m_out.dtype is f_out.dtype
        assert m_out.stride() == f_out.stride(), f"method output {index}: strides"
        np.testing.assert_array_equal(
            m_out.detach().numpy(), f_out.detach().numpy(), err_msg=f"method output {index}"
        )


# ------------------------------------------------------------------------ coverage


def _registered() -> set[str]:
    return {op.name for op in all_ops() if not op.name.startswith("test_op_")}


def _claimed(info: OpInfo) -> set[str]:
    return {info.name, *info.covers, *info.backward_ops} | ({info.inplace} - {None})


def test_every_operator_has_an_entry_or_a_reasoned_skip():
    claimed = set().union(*(_claimed(info) for info in OP_DB))
    registered = _registered()
    missing = registered - claimed - set(SKIPS)
    assert not missing, f"operators with no OpInfo entry and no skip: {sorted(missing)}"
    unknown = (claimed | set(SKIPS)) - registered
    assert not unknown, f"entries or skips for operators that are not registered: {unknown}"
    assert not claimed & set(SKIPS), "an operator is both tested and skipped"
    assert all(reason.strip() for reason in SKIPS.values())


@pytest.mark.parametrize("info", OP_DB, ids=lambda info: info.id)
def test_entry_reaches_the_operators_it_claims(info: OpInfo):
    """A dispatch trace of the entry's samples (of its first dtype) shows its operator, the ones it
    ``covers`` and its in-place variant; a trace of their backward shows ``backward_ops``."""
    forward, backward = set(), set()
    for dtype, sample in SAMPLES[info.id]:
        if dtype != info.dtypes[0]:
            continue
        for fn in [info.op] + ([_as_method(info, info.inplace).op] if info.inplace else []):
            grad = info.supports_autograd and fn is info.op and dtype == "float64"
            args = Materialized(whylab, sample, requires_grad=grad, clone=info.mutates)
            try:
                with trace() as forward_trace:
                    result = args.call(fn)
            except Exception:  # error samples: the forward test checks their errors
                continue
            forward |= set(forward_trace.ops())
            outputs = [o for o in tensors_of(result) if o.requires_grad]
            if info.backward_ops and outputs and fn is info.op:
                seeds = [whylab.ones(tuple(o.shape), dtype=o.dtype) for o in outputs]
                with trace() as backward_trace:
                    whylab.autograd.grad(outputs, args.leaves, seeds, allow_unused=True)
                backward |= set(backward_trace.ops())
    expected_forward = {info.name, *info.covers} | ({info.inplace} - {None})
    assert expected_forward <= forward, f"not reached: {sorted(expected_forward - forward)}"
    assert set(info.backward_ops) <= backward, (
        f"backward never ran: {sorted(set(info.backward_ops) - backward)}"
    )
