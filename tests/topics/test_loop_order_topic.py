"""The loop-order topic: controls audited, the pencil model, and the experiments at edges."""

from __future__ import annotations

import pytest

from whylab.explorer.experiment import ParamError
from whylab.numerics.loops import LOOP_ORDERS
from whylab.topics.loop_order import experiments as topic
from whylab.topics.loop_order import model

# These tests run live timing experiments (see tests/conftest.py for the reruns).
pytestmark = pytest.mark.wallclock

BY_NAME = {e.name: e for e in topic.EXPERIMENTS}
# CS:APP 3rd ed. §6.6.2, misses per inner-loop iteration (32-byte lines, a row does not fit)
CSAPP_TOTALS = {"ijk": 1.25, "jik": 1.25, "ikj": 0.5, "kij": 0.5, "jki": 2.0, "kji": 2.0}


def failed(result):
    return [c.id for c in result.checks if c.state != "passed"]


def test_pencil_model_gives_the_books_numbers():
    for order, total in CSAPP_TOTALS.items():
        per_array = [model.book_misses(order, a, 32, 100) for a in "ABC"]
        assert sum(per_array) == total
        assert tuple(per_array) == model.CSAPP_32_BYTE_LINES[order]
        assert sum(model.fits_misses(order, a, 32) for a in "ABC") == 0.25


def test_secret_swap_always_changes_the_miss_class():
    for order, other in topic.SECRET_SWAP.items():
        assert CSAPP_TOTALS[order] != CSAPP_TOTALS[other]


@pytest.mark.parametrize("order", LOOP_ORDERS)
@pytest.mark.parametrize("n", [4, 9, 16])
def test_access_pattern_every_order_and_size(order, n):
    exp = BY_NAME["access-pattern"]
    result = exp.run(**exp.parse_params({"order": order, "n": n}))
    assert result.passed and not failed(result), failed(result)


@pytest.mark.parametrize(("params", "premise_missed"), [
    ({"n": 36, "line_bytes": "32", "ways": "4"}, "inner-loops-fit"),
    ({"n": 72, "line_bytes": "32", "ways": "8"}, None),
    ({"n": 100, "line_bytes": "64", "ways": "8"}, None),
    # legal parameters at which "fits" once showed ✗: conflict misses, now not applicable
    ({"n": 100, "line_bytes": "32", "ways": "2"}, "inner-loops-fit"),
    ({"n": 60, "line_bytes": "16", "ways": "2"}, "inner-loops-fit"),
    ({"n": 48, "line_bytes": "16", "ways": "4"}, "inner-loops-fit"),
    # 64-byte lines, n = 64: 16 KiB is too small for the inner loops, 32 KiB holds a matrix
    ({"n": 64, "line_bytes": "64", "ways": "4"}, "inner-loops-fit"),
])
def test_misses_by_order_at_other_geometries(params, premise_missed):
    exp = BY_NAME["misses-by-order"]
    result = exp.run(**exp.parse_params(params))
    states = {c.id: c.state for c in result.checks}
    for check_id, state in states.items():
        assert state == ("not_applicable" if check_id == premise_missed else "passed"), states


def test_the_reported_two_way_case_is_not_applicable_rather_than_failed():
    # n = 32, 16-byte lines, 2 ways: "fits" by capacity, failed (✗) on conflict misses
    exp = BY_NAME["misses-by-order"]
    result = exp.run(**exp.parse_params({"n": 32, "line_bytes": "16", "ways": "2"}))
    check = result.check("inner-loops-fit")
    assert check.state == "not_applicable" and "fall in one set" in check.when_applicable.en


def test_rows_that_fit_make_the_book_table_not_applicable():
    exp = BY_NAME["misses-by-order"]
    # 64-byte lines with 8 ways: the smallest cache is 512 bytes, more than a 32-element row
    result = exp.run(**exp.parse_params({"n": 32, "line_bytes": "64", "ways": "8"}))
    assert result.check("csapp-table").state == "not_applicable"


def test_parameters_out_of_range_are_refused():
    with pytest.raises(ParamError, match="n: must be <= 100"):
        BY_NAME["misses-by-order"].parse_params({"n": 101})
    with pytest.raises(ParamError, match="order: must be one of"):
        BY_NAME["access-pattern"].parse_params({"order": "iij"})
    with pytest.raises(ParamError, match="block: must be one of"):
        BY_NAME["blocking"].parse_params({"block": "48"})
