"""whylab.gpu's stream model against CUDA's and PyTorch's documented semantics.

Each test names the rule it checks: stream FIFO order, asynchronous launches, event
completion and query, waits on unrecorded events, elapsed_time's preconditions and
0.5 µs resolution, synchronize, the allocator's per-stream reuse and record_stream.
"""

from __future__ import annotations

import pytest

from whylab.gpu import CachingAllocator, Device, find_races
from whylab.gpu.allocator import rounded_size


def test_a_stream_runs_its_kernels_in_submission_order():
    dev = Device()
    kernels = [dev.launch(f"k{i}", 10.0 * (i + 1)) for i in range(5)]
    for earlier, later in zip(kernels, kernels[1:], strict=False):
        assert earlier.end_us <= later.start_us
        assert earlier.happens_before(later) and not later.happens_before(earlier)


def test_launches_are_asynchronous_and_synchronize_blocks_the_host():
    dev = Device(launch_overhead_us=4.0, launch_latency_us=2.0)
    kernel = dev.launch("long", 1000.0)
    assert dev.host_now_us == 4.0 and kernel.end_us == 1006.0
    assert not dev.current_stream().query()
    dev.synchronize()
    assert dev.host_now_us == 1006.0 and dev.current_stream().query()


def test_synchronous_launches_block_like_cuda_launch_blocking():
    dev = Device(launch_overhead_us=4.0, launch_latency_us=2.0, synchronous_launches=True)
    dev.launch("long", 1000.0)
    assert dev.host_now_us == 1006.0


def test_kernels_on_two_streams_have_no_order_and_may_overlap():
    dev = Device()
    side = dev.Stream("side")
    a = dev.launch("a", 500.0)
    b = dev.launch("b", 500.0, stream=side)
    assert not a.happens_before(b) and not b.happens_before(a)
    assert a.start_us < b.end_us and b.start_us < a.end_us


def test_wait_event_orders_later_work_only():
    dev = Device()
    side = dev.Stream("side")
    before = dev.launch("before", 10.0, stream=side)
    a = dev.launch("a", 500.0)
    done = dev.Event()
    done.record()
    side.wait_event(done)
    b = dev.launch("b", 10.0, stream=side)
    assert a.happens_before(b) and b.start_us >= a.end_us
    assert not a.happens_before(before)  # work submitted before the wait is not ordered


def test_wait_stream_equals_recording_and_waiting_on_an_event():
    dev = Device()
    side = dev.Stream("side")
    a = dev.launch("a", 300.0)
    side.wait_stream(dev.default_stream)
    b = dev.launch("b", 10.0, stream=side)
    assert a.happens_before(b) and b.start_us >= a.end_us


def test_an_event_never_recorded_is_complete_and_waiting_on_it_does_nothing():
    dev = Device()
    side = dev.Stream("side")
    event = dev.Event()
    assert event.query()
    dev.launch("a", 300.0)
    side.wait_event(event)
    b = dev.launch("b", 10.0, stream=side)
    assert b.start_us < 300.0


def test_query_turns_true_when_the_stream_reaches_the_event():
    dev = Device(launch_overhead_us=5.0, launch_latency_us=3.0)
    dev.launch("a", 100.0)
    event = dev.Event()
    event.record()
    assert not event.query()
    dev.host_work(200.0)
    assert event.query()


def test_a_query_that_returns_true_orders_later_launches():
    dev = Device()
    side = dev.Stream("side")
    a = dev.launch("a", 100.0)
    event = dev.Event()
    event.record()
    dev.host_work(500.0)
    assert event.query()
    b = dev.launch("b", 10.0, stream=side)
    assert a.happens_before(b)


def test_elapsed_time_preconditions_match_cuda():
    dev = Device()
    start, end = dev.Event(enable_timing=True), dev.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="recorded"):
        start.elapsed_time(end)
    start.record()
    dev.launch("k", 100.0)
    end.record()
    with pytest.raises(RuntimeError, match="not completed"):
        start.elapsed_time(end)
    end.synchronize()
    assert start.elapsed_time(end) == pytest.approx((100.0 + dev.launch_overhead_us) / 1000)
    untimed = dev.Event()
    untimed.record()
    dev.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing"):
        start.elapsed_time(untimed)


@pytest.mark.parametrize("kernel_us", [0.1, 0.3, 0.7, 1.2, 2.49])
def test_elapsed_time_reads_a_half_microsecond_clock(kernel_us):
    dev = Device(launch_overhead_us=0.0, event_overhead_us=0.0, launch_latency_us=0.2)
    start, end = dev.Event(enable_timing=True), dev.Event(enable_timing=True)
    start.record()
    dev.launch("k", kernel_us)
    end.record()
    end.synchronize()
    measured_us = start.elapsed_time(end) * 1000
    assert measured_us / 0.5 == pytest.approx(round(measured_us / 0.5))
    assert abs(measured_us - kernel_us) < 0.5


def test_stream_context_sets_the_current_stream():
    dev = Device()
    side = dev.Stream("side")
    with dev.stream(side):
        kernel = dev.launch("k", 1.0)
        assert dev.current_stream() is side
    assert kernel.stream is side and dev.current_stream() is dev.default_stream


def test_launch_graph_pays_one_launch():
    dev = Device(launch_overhead_us=5.0)
    records = dev.launch_graph([("k", 1.0)] * 10)
    assert dev.host_now_us == 5.0 and len(records) == 10
    assert dev.idle_fraction() == 0.0


def test_bad_costs_are_refused_with_their_names():
    with pytest.raises(ValueError, match="launch_overhead_us"):
        Device(launch_overhead_us=-1)
    with pytest.raises(ValueError, match="event_resolution_us"):
        Device(event_resolution_us=0)
    with pytest.raises(ValueError, match="duration_us"):
        Device().launch("k", -2)


# ---------------------------------------------------------------- allocator


def test_sizes_round_up_to_512_bytes_like_pytorch():
    assert [rounded_size(n) for n in (1, 512, 513, 4000)] == [512, 512, 1024, 4096]


def test_a_freed_block_is_reused_on_its_stream_only():
    dev = Device()
    side = dev.Stream("side")
    x = dev.empty(4096)
    x.free()
    on_side = dev.empty(4096, stream=side)
    again = dev.empty(4096)
    assert on_side.address != x.address and again.address == x.address
    assert dev.allocator.num_mallocs == 2 and dev.allocator.num_reuses == 1


def test_reuse_without_record_stream_races_and_record_stream_prevents_it():
    def scenario(record: bool):
        dev = Device()
        side = dev.Stream("side")
        x = dev.empty(4096, name="x")
        dev.launch("read x", 500.0, reads=[x], stream=side)
        if record:
            x.record_stream(side)
        x.free()
        y = dev.empty(4096, name="y")
        dev.launch("write y", 10.0, writes=[y])
        return x, y, find_races(dev.kernels)

    x, y, races = scenario(record=False)
    assert y.address == x.address and len(races) == 1
    assert races[0].overlapped_in_time and "unordered" in races[0].describe()
    x, y, races = scenario(record=True)
    assert y.address != x.address and races == []


def test_record_stream_block_is_reused_once_its_event_completed():
    dev = Device()
    side = dev.Stream("side")
    x = dev.empty(4096)
    dev.launch("read x", 100.0, reads=[x], stream=side)
    x.record_stream(side)
    x.free()
    dev.host_work(1000.0)  # the side stream is done by now; the allocator's poll sees it
    y = dev.empty(4096)
    dev.launch("write y", 10.0, writes=[y])
    assert y.address == x.address and find_races(dev.kernels) == []


def test_use_after_free_and_double_free_are_errors():
    dev = Device()
    x = dev.empty(100, name="x")
    x.free()
    with pytest.raises(RuntimeError, match="x was already freed"):
        dev.launch("k", 1.0, reads=[x])
    with pytest.raises(RuntimeError, match="already freed"):
        x.free()
    with pytest.raises(ValueError, match="nbytes"):
        CachingAllocator().allocate(0, dev.default_stream)


def test_reads_alone_never_race():
    dev = Device()
    side = dev.Stream("side")
    x = dev.empty(4096)
    dev.launch("a", 100.0, reads=[x])
    dev.launch("b", 100.0, reads=[x], stream=side)
    assert find_races(dev.kernels) == []


def test_the_model_has_torch_cuda_names_for_what_it_models():
    torch = pytest.importorskip("torch")
    dev = Device()
    stream_methods = ["wait_event", "wait_stream", "record_event", "query", "synchronize"]
    event_methods = ["record", "wait", "query", "synchronize", "elapsed_time"]
    for name in stream_methods:
        assert hasattr(torch.cuda.Stream, name) and callable(getattr(dev.Stream(), name))
    for name in event_methods:
        assert hasattr(torch.cuda.Event, name) and callable(getattr(dev.Event(), name))
    for name in ["synchronize", "current_stream", "stream", "Stream", "Event"]:
        assert hasattr(torch.cuda, name) and hasattr(dev, name)
    assert hasattr(torch.Tensor, "record_stream") and hasattr(dev.empty(8), "record_stream")
