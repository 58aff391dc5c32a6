"""The strided-tensors topic: defaults, every choice, bounds, checks that can fail,
and the page's layout formulas against PyTorch itself."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import whylab
from whylab.explorer.experiment import ParamError, T, switched_on
from whylab.topics import shared
from whylab.topics.strided_tensors import costs, writes
from whylab.topics.strided_tensors import experiments as topic
from whylab.topics.strided_tensors import layout as formulas
from whylab.topics.strided_tensors.chains import CHAINS, STARTING_LAYOUTS, TARGET_SHAPES

BY_NAME = {e.name: e for e in topic.EXPERIMENTS}
NAME = T("claim", "断言")
# copy-cost's checks that do not compare wall-clock times (tests never assert on those).
STRUCTURAL_COPY_CHECKS = ("contiguous-returns-self", "contiguous-copies-transposed",
                          "same-values", "transpose-allocates-nothing")
UNTIMED = ["view-chain", "view-or-copy", "mm-operands", "expanded-write", "version-counter"]


def failed(result):
    return [f"{c.name.en}: {c.measured_in('en')}" for c in result.checks if not c.passed]


def torch_layout(t: torch.Tensor) -> formulas.Layout:
    return formulas.Layout(tuple(t.shape), tuple(t.stride()), t.storage_offset())


# ---------------------------------------------------------------- runs


@pytest.mark.parametrize("name", UNTIMED)
def test_defaults_pass_every_check(name):
    result = BY_NAME[name].run(**BY_NAME[name].defaults())
    assert result.checks and result.passed, failed(result)


@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("shape", [(2, 2, 2), (2, 3, 4), (5, 5, 5), (5, 2, 3)])
def test_view_chain_every_chain_and_extreme_shapes(chain, shape):
    exp = BY_NAME["view-chain"]
    params = exp.parse_params({"chain": chain, "n0": shape[0], "n1": shape[1], "n2": shape[2],
                               "seed": 2**31 - 1})
    result = exp.run(**params)
    assert result.passed, failed(result)
    diagram = result.figures[0]
    steps = len(CHAINS[chain].steps)
    assert len(diagram.nodes) == steps + 2  # the storage, x, one tensor per step
    assert {source for source, _, _ in diagram.edges} == {"storage"}
    assert [n.order for n in diagram.nodes if n.layer == 1] == list(range(steps + 1))
    assert len(result.tables[1].rows) == min(np.prod(shape), topic.MAX_LISTED_CELLS)


def test_view_chain_tables_show_the_transpose():
    result = BY_NAME["view-chain"].run(**BY_NAME["view-chain"].defaults())
    steps = result.tables[0].rows
    assert steps[0][:4] == ["x", "(2, 3, 4)", "(12, 4, 1)", 0]
    assert steps[1][:4] == ["x.transpose(0, 1)", "(3, 2, 4)", "(4, 12, 1)", 0]
    storage_map = result.tables[1].rows
    # Cell 4 is x[0, 1, 0], which the transposed view calls (1, 0, 0).
    assert storage_map[4][0] == 4 and storage_map[4][2] == "(1, 0, 0)"


def test_view_chain_expand_reads_cells_several_times():
    result = BY_NAME["view-chain"].run(**BY_NAME["view-chain"].parse_params({"chain": "expand"}))
    assert result.metrics["elements_in_view"] == 3 * result.metrics["distinct_cells_read"]
    readers = {row[0]: row[2] for row in result.tables[1].rows}
    assert readers[0] == "·"  # x[0] is sliced away
    assert readers[12] == "(0, 0, 0, 0) (0, 0, 1, 0) (0, 0, 2, 0)"


@pytest.mark.parametrize("layout", list(STARTING_LAYOUTS))
@pytest.mark.parametrize("target", ["24", "4x3x2", "1x24x1"])
def test_view_or_copy_every_layout(layout, target):
    exp = BY_NAME["view-or-copy"]
    result = exp.run(**exp.parse_params({"layout": layout, "target": target}))
    assert result.passed, failed(result)
    assert result.tables[0].rows[0][0] == formulas._tuple(TARGET_SHAPES[target])
    assert len(result.tables[0].rows) == len(TARGET_SHAPES)


def test_view_or_copy_reports_the_engine_error_for_the_chosen_target():
    result = BY_NAME["view-or-copy"].run(layout="transposed", target="24")
    assert result.metrics["views_possible"] == 3  # (4, 3, 2), (2, 2, 6), (2, 2, 3, 2)
    assert "view size is not compatible" in result.notes[-1].en
    assert result.notes[-1].zh.startswith("view(24,) 报错")
    result = BY_NAME["view-or-copy"].run(layout="step-sliced", target="24")
    assert result.metrics["views_possible"] == len(TARGET_SHAPES)
    assert len(result.notes) == 1  # no error to report


@pytest.mark.parametrize("view, op", list(itertools.product(topic.WRITABLE_VIEWS,
                                                            topic.IN_PLACE_OPS)))
@pytest.mark.parametrize("writes", [1, 5])
def test_version_counter_every_view_and_op(view, op, writes):
    result = BY_NAME["version-counter"].run(view=view, op=op, writes=writes, seed=3)
    assert result.passed, failed(result)
    assert result.metrics["final_version"] == writes
    assert result.metrics["version_at_backward"] == writes
    assert [row[1] for row in result.tables[0].rows] == list(range(writes + 1))


@pytest.mark.parametrize("op", list(costs.LONE_OPS))
def test_copy_cost_structure_at_small_sizes(op):
    exp = BY_NAME["copy-cost"]
    result = exp.run(**exp.parse_params({"op": op, "max_log2n": 8, "rounds": 1}))
    structural = [result.check(i) for i in STRUCTURAL_COPY_CHECKS]
    assert all(c.passed for c in structural), failed(result)
    assert len(result.checks) == 9
    chart = result.figures[0]
    assert chart.log_x and chart.log_y
    assert [list(s.x) for s in chart.series] == [[128, 256]] * len(costs.SERIES)
    assert all(y > 0 for s in chart.series for y in s.y)
    assert result.metrics["view_bytes_at_most"] <= costs.HEADER_BYTES_AT_MOST


def test_a_copying_transpose_fails_the_headline_checks():
    # Bytes never depend on the clock: a transpose that copies allocates 8n² at every n.
    exp = BY_NAME["copy-cost"]
    with switched_on("copying-transpose"):
        result = exp.run(**exp.parse_params({"max_log2n": 8, "rounds": 1}))
    check = result.check("transpose-allocates-nothing")
    assert check.state == "failed" and "x.t(): 525" in check.measured_in("en")  # ≥ 8 · 256²
    assert costs.bytes_allocated(whylab.zeros(128, 128, dtype=whylab.float64).t) \
        <= costs.HEADER_BYTES_AT_MOST


def test_timing_experiments_are_declared_as_timing_and_the_rest_are_not():
    assert BY_NAME["copy-cost"].timing
    assert not any(BY_NAME[n].timing for n in UNTIMED)


def test_out_of_range_and_unknown_params_are_rejected():
    chain = BY_NAME["view-chain"]
    with pytest.raises(ParamError, match="n0: must be <= 5"):
        chain.parse_params({"n0": 6})
    with pytest.raises(ParamError, match="n2: must be >= 2"):
        chain.parse_params({"n2": 1})
    with pytest.raises(ParamError, match="chain: must be one of"):
        chain.parse_params({"chain": "__import__('os').system('true')"})
    with pytest.raises(ParamError, match="unknown parameter"):
        chain.parse_params({"code": "x.t()"})
    with pytest.raises(ParamError, match="target: must be one of"):
        BY_NAME["view-or-copy"].parse_params({"target": "5x5"})
    with pytest.raises(ParamError, match="max_log2n: must be <= 11"):
        BY_NAME["copy-cost"].parse_params({"max_log2n": 12})
    with pytest.raises(ParamError, match="writes: must be <= 5"):
        BY_NAME["version-counter"].parse_params({"writes": 6})
    assert all(any(p.seed for p in BY_NAME[n].params) for n in ("view-chain", "version-counter"))


# ---------------------------------------------------------------- the checks can fail


def test_address_check_catches_a_wrong_layout():
    storage = np.arange(24.0)
    right = formulas.Layout((3, 2, 4), (4, 12, 1), 0)
    values = [float(a) for a in formulas.addresses(right)]
    assert topic.address_mismatches(values, storage, right) == 0
    assert topic.address_check([(values, right)], storage).passed
    swapped = formulas.Layout((3, 2, 4), (12, 4, 1), 0)
    assert topic.address_mismatches(values, storage, swapped) > 0
    assert not topic.address_check([(values, swapped)], storage).passed
    shifted = formulas.Layout((3, 2, 4), (4, 12, 1), 1)
    assert topic.address_mismatches(values, storage, shifted) == 24  # last one is off the end
    assert topic.address_mismatches(values[:-1], storage, right) == 24
    assert not topic.address_check([], storage).passed


def test_layout_check_and_storage_check_can_fail():
    a = formulas.Layout((2, 3), (3, 1), 0)
    assert topic.layout_check([a], [a]).passed
    assert not topic.layout_check([a], [formulas.Layout((2, 3), (3, 1), 1)]).passed
    assert not topic.layout_check([], []).passed
    assert not topic.layout_check([a, a], [a]).passed
    assert topic.shared_storage_check(100, 24, [100, 100], [24, 24]).passed
    assert not topic.shared_storage_check(100, 24, [100, 200], [24, 24]).passed
    assert not topic.shared_storage_check(100, 24, [100], [12]).passed
    assert not topic.shared_storage_check(100, 24, [], []).passed


def test_write_and_value_checks_can_fail():
    assert topic.write_through_check("(0,)", [5], 5, True).passed
    assert not topic.write_through_check("(0,)", [5, 6], 5, True).passed
    assert not topic.write_through_check("(0,)", [4], 5, True).passed
    assert not topic.write_through_check("(0,)", [5], 5, False).passed
    assert not topic.write_through_check("()", [], None, False).passed
    assert topic.values_check(NAME, [1.0, 2.0], np.array([1.0, 2.0])).passed
    assert not topic.values_check(NAME, [1.0, 2.0], np.array([2.0, 1.0])).passed
    assert not topic.values_check(NAME, [1.0], np.array([1.0, 2.0])).passed


def test_agreement_sequence_and_error_checks_can_fail():
    assert topic.predictions_check("a", NAME, [True, False], [True, False], ["a", "b"]).passed
    check = topic.predictions_check("a", NAME, [True, True], [True, False], ["a", "b"])
    assert not check.passed and "b" in check.measured_in('en')
    assert topic.sequence_check("s", NAME, [0, 1, 2], [0, 1, 2]).passed
    assert not topic.sequence_check("s", NAME, [0, 1, 1], [0, 1, 2]).passed
    message = ("one of the variables needed for gradient computation has been modified by an "
               "inplace operation: [x], which is output 0 of ExpBackward0, is at version 2; "
               "expected version 0 instead.")
    assert topic.saved_tensor_error_check(message, 2, 0).passed
    assert not topic.saved_tensor_error_check(message, 3, 0).passed
    assert not topic.saved_tensor_error_check(None, 2, 0).passed
    assert not topic.saved_tensor_error_check("some other error", 2, 0).passed
    assert shared.relative_error(np.ones(3), np.ones(4)) == float("inf")
    assert shared.relative_error(np.array([1.0, 2.0]), np.array([1.0, 4.0])) == 0.5
    assert costs.timing_check("r", NAME, [1.9] * 9, at_least=2.0).state == "failed"
    assert costs.timing_check("r", NAME, [4.1] * 9, at_most=4.0).state == "failed"
    assert not costs.all_sizes_check("a", NAME, []).passed


def test_the_error_check_accepts_pytorchs_own_message():
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    y = a.exp()
    loss = y.sum()
    y.diagonal().mul_(2)
    y[0].add_(1)
    with pytest.raises(RuntimeError) as error:
        loss.backward()
    assert topic.saved_tensor_error_check(str(error.value), 2, 0).passed


# ---------------------------------------------------------------- formulas against PyTorch


@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("shape", [(2, 3, 4), (5, 2, 3), (3, 5, 2)])
def test_predicted_layouts_match_pytorch_step_by_step(chain, shape):
    """Each step's code is valid PyTorch too: torch's layouts equal the page's formulas."""
    x = torch.randn(*shape, dtype=torch.float64)
    storage = x.reshape(-1)  # x is contiguous with offset 0: this is its storage in order
    t, predicted = x, formulas.contiguous(shape)
    assert torch_layout(t) == predicted
    for step in CHAINS[chain].steps:
        t = step.engine(t)
        predicted = step.predict(predicted)
        assert torch_layout(t) == predicted, step.code
        # And torch's elements sit where the address formula says.
        assert torch.equal(t.reshape(-1), storage[formulas.addresses(predicted)])


TORCH_TWINS = {  # the page's starting layouts, built in PyTorch
    "contiguous": lambda: torch.arange(24.0).reshape(4, 6),
    "transposed": lambda: torch.arange(24.0).reshape(6, 4).t(),
    "step-sliced": lambda: torch.arange(48.0).reshape(4, 12)[:, ::2],
    "column-sliced": lambda: torch.arange(32.0).reshape(4, 8)[:, 1:7],
    "size-one": lambda: torch.arange(24.0).reshape(4, 6, 1).transpose(1, 2),
    "expanded": lambda: torch.arange(6.0).expand(4, 6),
}


@pytest.mark.parametrize("layout", list(STARTING_LAYOUTS))
def test_view_rule_matches_pytorch_on_the_page_layouts(layout):
    t = TORCH_TWINS[layout]()
    assert torch_layout(t) == topic.layout_of(STARTING_LAYOUTS[layout].engine())
    assert np.array_equal(t.numpy(), STARTING_LAYOUTS[layout].reference())
    for shape in TARGET_SHAPES.values():
        predicted = formulas.view_layout(torch_layout(t), shape)
        try:
            viewed = t.view(shape)
        except RuntimeError:
            viewed = None
        assert (viewed is None) == (predicted is None), shape
        if viewed is not None:
            assert formulas.same_addressing(torch_layout(viewed), predicted)


@st.composite
def strided_torch_tensors(draw):
    """A view of a small torch tensor: permuted, maybe stepped, maybe expanded."""
    ndim = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    t = torch.arange(float(np.prod(sizes) * 2)).reshape(*sizes, 2)[..., draw(st.integers(0, 1))]
    t = t.permute(*draw(st.permutations(range(ndim))))
    dim = draw(st.integers(0, ndim - 1))
    if draw(st.booleans()) and t.shape[dim] > 2:
        t = t.narrow(dim, 1, t.shape[dim] - 1)[(slice(None),) * dim + (slice(None, None, 2),)]
    if draw(st.booleans()):
        repeat = draw(st.integers(1, 3))
        t = t.narrow(dim, 0, 1).expand(*[repeat if d == dim else -1 for d in range(ndim)])
    return t


@st.composite
def factorisations(draw, numel: int):
    """A random shape with ``numel`` elements, with a few size-1 dimensions mixed in."""
    factors, rest = [], numel
    while rest > 1:
        factor = draw(st.sampled_from([k for k in range(2, rest + 1) if rest % k == 0]))
        factors.append(factor)
        rest //= factor
    for _ in range(draw(st.integers(0, 2))):
        factors.insert(draw(st.integers(0, len(factors))), 1)
    return tuple(draw(st.permutations(factors)))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_view_rule_matches_pytorch_on_random_layouts(data):
    t = data.draw(strided_torch_tensors())
    shape = data.draw(factorisations(t.numel()))
    predicted = formulas.view_layout(torch_layout(t), shape)
    try:
        viewed = t.view(shape)
    except RuntimeError:
        viewed = None
    assert (viewed is None) == (predicted is None)
    if viewed is not None:
        assert formulas.same_addressing(torch_layout(viewed), predicted)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_whylab_view_agrees_with_the_rule_on_random_layouts(data):
    t = data.draw(strided_torch_tensors())
    shape = data.draw(factorisations(t.numel()))
    # The same layout in whylab, over a storage as long as torch's.
    cells = t.untyped_storage().nbytes() // t.element_size()
    w = whylab.arange(cells, dtype=whylab.float32).as_strided(
        tuple(t.shape), tuple(t.stride()), t.storage_offset())
    assert topic.layout_of(w) == torch_layout(t)
    predicted = formulas.view_layout(topic.layout_of(w), shape)
    try:
        viewed = w.view(shape)
    except RuntimeError:
        viewed = None
    assert (viewed is None) == (predicted is None)
    if viewed is not None:
        assert formulas.same_addressing(topic.layout_of(viewed), predicted)
        assert np.array_equal(viewed.numpy(), t.reshape(shape).numpy())


def test_merging_blocks_of_the_pages_examples():
    transposed = formulas.Layout((4, 6), (1, 4), 0)
    assert [(b.numel, b.stride) for b in formulas.mergeable_blocks(transposed)] == [(4, 1), (6, 4)]
    stepped = formulas.Layout((4, 6), (12, 2), 0)
    assert [(b.numel, b.stride) for b in formulas.mergeable_blocks(stepped)] == [(24, 2)]
    expanded = formulas.Layout((4, 6), (0, 1), 0)
    assert formulas.view_layout(expanded, (24,)) is None
    assert formulas.view_layout(expanded, (2, 2, 6)).strides == (0, 0, 1)
    # Size-1 dimensions never matter, whatever their stride.
    assert formulas.mergeable_blocks(formulas.Layout((2, 1, 3), (3, 99, 1), 0))[0].numel == 6
    with pytest.raises(ValueError):
        formulas.view_layout(transposed, (5, 5))


def test_address_formula_and_contiguous_strides():
    assert formulas.contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert formulas.contiguous_strides(()) == ()
    layout = formulas.Layout((2, 3), (1, 2), 5)
    assert formulas.addresses(layout) == [5, 7, 9, 6, 8, 10]
    assert not formulas.is_row_major(layout)
    assert formulas.is_row_major(formulas.Layout((1, 3), (99, 1), 0))
    with pytest.raises(ValueError):
        formulas.Layout((2, 3), (1,), 0)


# ---------------------------------------------------------------- audit defects, against torch


def test_the_size_one_exception_is_pytorchs_rule():
    t = TORCH_TWINS["size-one"]()
    layout = torch_layout(t)
    assert layout == formulas.Layout((4, 1, 6), (6, 1, 1), 0)
    assert t.view(24).shape == (24,)  # torch views it ...
    assert formulas.view_layout(layout, (24,)) is not None  # ... as the rule predicts,
    assert formulas.view_layout(layout, (24,), skip_size_one=False) is None  # the bare one not
    with switched_on("merge-without-size-one-exception"):
        result = BY_NAME["view-or-copy"].run(layout="transposed", target="24")
    assert result.check("size-one-exception").state == "failed"


@pytest.mark.parametrize("op", list(writes.IN_PLACE_WRITES))
def test_an_overlapping_in_place_write_is_refused_with_torchs_message(op):
    expanded = torch.arange(6.0, dtype=torch.float64).expand(4, 6)
    torch_write = {"add_": lambda t: t.add_(1), "mul_": lambda t: t.mul_(2),
                   "copy_": lambda t: t.copy_(torch.ones(4, 6, dtype=torch.float64))}[op]
    with pytest.raises(RuntimeError) as error:
        torch_write(expanded)
    assert writes.TORCH_OVERLAP_MESSAGE in str(error.value)
    result = BY_NAME["expanded-write"].run(op=op, rows=3, n=5)
    assert result.passed, failed(result)
    assert writes.TORCH_OVERLAP_MESSAGE in result.notes[0].en


def test_fill_and_one_element_writes_into_an_expanded_view_are_allowed_as_in_torch():
    ours, theirs = whylab.arange(3.0).expand(2, 3), torch.arange(3.0).expand(2, 3)
    ours.fill_(7.0)
    theirs.fill_(7.0)
    ours[0, 1] = 5.0
    theirs[0, 1] = 5.0
    assert ours.tolist() == theirs.tolist() == [[7.0, 5.0, 7.0], [7.0, 5.0, 7.0]]


MM_LAYOUTS_IN_TORCH = {  # the four operands of mm-operands, as torch tensors
    "row-major": lambda x, w, n: x,
    "transposed": lambda x, w, n: x.t(),
    "column-slice": lambda x, w, n: w[:, :n],
    "every-2nd-column": lambda x, w, n: w[:, ::2],
}


@pytest.mark.parametrize("name", list(costs.OPERAND_LAYOUTS))
def test_torch_mm_copies_exactly_where_its_rule_says(name):
    from torch.profiler import profile

    n = 32
    x, w = torch.rand(n, n, dtype=torch.float64), torch.rand(n, 2 * n, dtype=torch.float64)
    b = torch.rand(n, n, dtype=torch.float64)
    a = MM_LAYOUTS_IN_TORCH[name](x, w, n)
    with profile() as prof:
        torch.mm(a, b)
    copied = any(event.name in ("aten::clone", "aten::copy_") for event in prof.events())
    assert copied == costs.torch_mm_copies(tuple(a.stride()), tuple(a.shape))


@pytest.mark.parametrize("name", list(costs.OPERAND_LAYOUTS))
def test_numpy_dot_copies_exactly_where_its_rule_says(name):
    n = 64
    x, w = np.random.rand(n, n), np.random.rand(n, 2 * n)
    a = MM_LAYOUTS_IN_TORCH[name](x.T.T, w, n) if name != "transposed" else x.T
    allocated = costs.bytes_allocated(lambda: np.dot(a, x))
    strides = tuple(s // a.itemsize for s in a.strides)
    assert (allocated > 1.5 * 8 * n * n) == costs.numpy_dot_copies(strides, a.shape)


def test_a_transpose_reaches_blas_uncopied_and_a_copying_mm_is_caught():
    result = BY_NAME["mm-operands"].run(n=64)
    assert result.passed, failed(result)
    copies = {row[0]: row[3] for row in result.tables[0].rows}
    assert copies == {"x": 0, "x.t()": 0, "w[:, :n]": 1, "w[:, ::2]": 1}
    with switched_on("mm-makes-operands-contiguous"):
        result = BY_NAME["mm-operands"].run(n=64)
    assert result.check("transposed-operand-not-copied").state == "failed"
