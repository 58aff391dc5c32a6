"""The cuda-streams topic: controls audited, and the experiments at other parameters."""

from __future__ import annotations

import pytest

from whylab.explorer.experiment import ParamError
from whylab.topics.cuda_streams import experiments as topic
from whylab.topics.cuda_streams.precision_experiment import round_mantissa

BY_NAME = {e.name: e for e in topic.EXPERIMENTS}


@pytest.mark.parametrize("params", [
    {"kernel_us": 1.0, "launch_us": 0.5, "latency_us": 0.0},
    {"kernel_us": 10000.0, "launch_us": 50.0, "latency_us": 20.0},
    {"kernel_us": 37.3, "launch_us": 7.7, "latency_us": 1.1},
])
def test_timing_boundaries_hold_across_costs(params):
    exp = BY_NAME["timing-boundaries"]
    assert exp.run(**exp.parse_params(params)).passed


@pytest.mark.parametrize("params", [
    {"first_us": 10.0, "second_us": 5000.0},
    {"first_us": 5000.0, "second_us": 10.0, "launch_us": 50.0},
])
def test_overlap_holds_when_either_stream_is_longer(params):
    exp = BY_NAME["overlapping-streams"]
    assert exp.run(**exp.parse_params(params)).passed


def test_graph_check_is_not_applicable_when_launches_are_cheaper_than_kernels():
    exp = BY_NAME["idle-device"]
    result = exp.run(**exp.parse_params({"launch_us": 0.5}))
    assert result.check("graph-keeps-device-busy").state == "not_applicable"
    assert result.check("idle-matches-closed-form").state == "passed"


def test_idle_closed_form_at_its_ends():
    from whylab.topics.cuda_streams.timing_experiments import idle_closed_form

    assert idle_closed_form(5.0, 5.0, 10) == 0.0
    # one kernel of 1 µs every 10 µs, many kernels: idle tends to 90%
    assert idle_closed_form(1.0, 10.0, 10**6) == pytest.approx(0.9, abs=1e-5)


def test_tf32_rounding_keeps_ten_mantissa_bits():
    import numpy as np

    values = np.array([1.0 + 2**-10, 1.0 + 2**-11, 1.0 + 3 * 2**-11, 1.0 + 2**-12], np.float32)
    # ties go to even: 1 + 2^-11 rounds down to 1, 1 + 3·2^-11 up to 1 + 2^-9
    assert round_mantissa(values, 10).tolist() == [1.0 + 2**-10, 1.0, 1.0 + 2**-9, 1.0]


def test_parameters_out_of_range_are_refused():
    with pytest.raises(ParamError, match="kernel_us: must be <= 10000"):
        BY_NAME["timing-boundaries"].parse_params({"kernel_us": 20000})


@pytest.mark.parametrize("read_us", [50.0, 5000.0])
def test_record_stream_hazard_at_short_and_long_reads(read_us):
    exp = BY_NAME["record-stream-hazard"]
    assert exp.run(**exp.parse_params({"read_us": read_us})).passed


@pytest.mark.parametrize(("n", "k", "seed"), [(8, 16, 1), (256, 1024, 2)])
def test_tf32_claims_hold_at_the_size_bounds(n, k, seed):
    exp = BY_NAME["tf32-precision"]
    assert exp.run(**exp.parse_params({"n": n, "k": k, "seed": seed})).passed
