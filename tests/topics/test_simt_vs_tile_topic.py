"""The simt-vs-tile topic: controls audited, the closed forms, and the experiments at edges."""

from __future__ import annotations

import pytest

from whylab.explorer.experiment import ParamError
from whylab.topics.simt_vs_tile import experiments as topic
from whylab.topics.simt_vs_tile.memory_experiments import sectors_per_request

BY_NAME = {e.name: e for e in topic.EXPERIMENTS}


def test_sector_closed_form_gives_the_textbook_cases():
    assert sectors_per_request(1, 0, 4) == 4  # 128 contiguous bytes
    assert sectors_per_request(1, 1, 4) == 5  # shifted by one float: one more sector
    assert sectors_per_request(2, 0, 4) == 8
    assert sectors_per_request(8, 0, 4) == 32 and sectors_per_request(1, 0, 8) == 8
    assert sectors_per_request(0, 3, 4) == 1  # every lane reads one address
    assert sectors_per_request(1, 0, 4, unit_bytes=128) == 1


@pytest.mark.parametrize(("n", "block"), [(2, "8"), (257, "128"), (1999, "64"), (33, "32")])
def test_coverage_holds_at_other_sizes(n, block):
    exp = BY_NAME["write-coverage"]
    result = exp.run(**exp.parse_params({"n": n, "block": block}))
    assert all(c.state == "passed" for c in result.checks), [
        (c.id, c.state) for c in result.checks]


def test_coverage_claims_about_the_tail_need_a_partial_block():
    exp = BY_NAME["write-coverage"]
    result = exp.run(**exp.parse_params({"n": 128, "block": "32"}))
    states = {c.id: c.state for c in result.checks}
    assert states["simt-bounds-check-once"] == states["tile-mask-once"] == "passed"
    for check_id in ("no-check-out-of-bounds", "clamp-duplicates", "floor-grid-omits"):
        assert states[check_id] == "not_applicable"


@pytest.mark.parametrize(("offset", "dtype"), [(0, "float64"), (5, "float32"), (31, "float64")])
def test_coalescing_at_other_offsets_and_types(offset, dtype):
    exp = BY_NAME["coalescing"]
    assert exp.run(**exp.parse_params({"offset": offset, "dtype": dtype})).passed


@pytest.mark.parametrize(("n", "tile", "block"), [(4, "2", "16"), (32, "16", "32"),
                                                  (37, "4", "16")])
def test_matmul_reuse_at_other_sizes(n, tile, block):
    exp = BY_NAME["matmul-reuse"]
    assert exp.run(**exp.parse_params({"n": n, "tile": tile, "block": block})).passed


def test_parameters_out_of_range_are_refused():
    with pytest.raises(ParamError, match="n: must be <= 64"):
        BY_NAME["matmul-reuse"].parse_params({"n": 65})
    with pytest.raises(ParamError, match="block: must be one of"):
        BY_NAME["write-coverage"].parse_params({"block": "48"})
