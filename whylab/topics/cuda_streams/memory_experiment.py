"""Tensor lifetime across streams: the record_stream hazard, caught by the race detector.

A tensor ``x`` made on the default stream is read by a long kernel on a side
stream; the host then drops ``x`` and allocates ``y`` of the same size on the
default stream, which writes it at once. The scenarios differ only in what the
host did before dropping ``x``: nothing, ``x.record_stream(side)``, or making
the default stream wait for an event recorded on the side stream.
"""

from __future__ import annotations

from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.gpu import CachingAllocator, Device, find_races
from whylab.gpu.races import conflicting
from whylab.topics.cuda_streams.timeline import stream_timeline

TENSOR_BYTES = 1 << 20
SCENARIOS = ("nothing", "record_stream", "event wait", "nothing, host busy")
SCENARIO_TEXT = {
    "nothing": T("nothing", "什么也不做"),
    "record_stream": T("x.record_stream(side)", "x.record_stream(side)"),
    "event wait": T("event on side, default waits", "在旁路流记录事件，默认流等待"),
    "nothing, host busy": T("nothing; host busy before allocating y",
                            "什么也不做；分配 y 前主机先忙一阵"),
}


def _allocator() -> CachingAllocator:
    return CachingAllocator(
        caching=not control_active("no-caching"),
        ignore_streams=control_active("allocator-ignores-streams"),
        honour_record_stream=not control_active("allocator-ignores-record-stream"),
    )


def _races(dev: Device):
    """The detector's report, or one of the wrong detectors the controls substitute."""
    races = find_races(dev.kernels)
    if control_active("detector-uses-timeline"):
        return [r for r in races if r.overlapped_in_time]
    if control_active("detector-stream-order-only"):
        # a detector that knows stream order but not events or host waits
        conflicting = [(a, b) for i, a in enumerate(dev.kernels) for b in dev.kernels[i + 1:]
                       if a.stream is not b.stream and _touch_same_bytes(a, b)]
        return conflicting
    return races


def _touch_same_bytes(a, b) -> bool:
    return any(conflicting(x, y) for x in a.accesses for y in b.accesses)


def hazard_run(scenario: str, read_us: float):
    """Run one scenario; return the device, the two buffers and the races reported."""
    dev = Device(allocator=_allocator())
    main = dev.default_stream
    side = dev.Stream("side")
    x = dev.empty(TENSOR_BYTES, name="x")
    dev.launch("produce x", 20.0, writes=[x])
    side.wait_stream(main)
    dev.launch("side reads x", read_us, reads=[x], stream=side)
    if scenario == "record_stream":
        x.record_stream(side)
    elif scenario == "event wait":
        done = dev.Event()
        done.record(main if control_active("event-on-wrong-stream") else side)
        main.wait_event(done)
    x.free()
    if scenario == "nothing, host busy":
        dev.host_work(2 * read_us)
    y = dev.empty(TENSOR_BYTES, name="y")
    dev.launch("write y", 20.0, writes=[y])
    dev.synchronize()
    return dev, x, y, _races(dev)


def allocator_rule_run():
    """A tensor used only on its stream, freed, then one allocation on each stream."""
    dev = Device(allocator=_allocator())
    side = dev.Stream("side")
    z = dev.empty(TENSOR_BYTES, name="z")
    dev.launch("write z", 300.0, writes=[z])
    z.free()  # safe: the default stream will run z's writer before anything new
    w = dev.empty(TENSOR_BYTES, stream=side, name="w")
    dev.launch("write w", 20.0, writes=[w], stream=side)
    u = dev.empty(TENSOR_BYTES, name="u")
    dev.launch("write u", 20.0, writes=[u])
    dev.synchronize()
    return z, w, u, _races(dev)


@experiment(
    name="record-stream-hazard",
    metrics=[
        Metric("races_unsafe", T("races reported, nothing done", "什么也不做时报告的竞争数")),
    ],
    title=T("Freeing a tensor another stream still reads", "释放一个另一条流还在读的张量"),
    description=T(
        "Replays the record_stream hazard on the model: x lives on the default stream, a side "
        "stream reads it, the host frees it and allocates y. The caching allocator hands y "
        "x's block unless record_stream or an event wait says otherwise; the race detector "
        "reports every pair of kernels that touch the same bytes with no order between them.",
        "在模型上重演 record_stream 的隐患：x 属于默认流，旁路流读它，主机释放 x 再分配 y。"
        "除非 record_stream 或事件等待另有交代，缓存分配器会把 x 的块交给 y；"
        "竞争检测器报告所有访问同一段字节、彼此之间又没有先后顺序的核函数对。",
    ),
    params=[Param("read_us", "float", 500.0, T("side stream's read of x", "旁路流读 x 的时长"),
                  unit="µs", minimum=50.0, maximum=5000.0)],
    controls=[
        Control("allocator-ignores-record-stream",
                T("the allocator forgets the streams record_stream named",
                  "分配器忘了 record_stream 登记的流"),
                breaks=("record-stream-no-race",)),
        Control("event-on-wrong-stream",
                T("the event is recorded on the default stream instead of the side stream",
                  "事件被记录在默认流上，而不是旁路流上"),
                breaks=("event-wait-no-race",)),
        Control("detector-uses-timeline",
                T("the detector reports only kernels that overlapped in this run's timeline",
                  "检测器只报告在这一次时间线上恰好重叠的核函数"),
                breaks=("latent-race-reported",)),
        Control("detector-stream-order-only",
                T("the detector knows stream order but not event waits",
                  "检测器只认流内顺序，不认事件等待"),
                breaks=("event-wait-no-race",)),
        Control("allocator-ignores-streams",
                T("the allocator hands a cached block to an allocation on any stream",
                  "分配器把缓存的块交给任意一条流上的分配"),
                breaks=("cross-stream-not-reused",)),
        Control("no-caching",
                T("caching is off (PYTORCH_NO_CUDA_MEMORY_CACHING=1): every allocation is new",
                  "关掉缓存（PYTORCH_NO_CUDA_MEMORY_CACHING=1）：每次分配都是新内存"),
                breaks=("hazard-reported", "same-stream-reuse")),
    ],
)
def record_stream_hazard(read_us):
    runs = {s: hazard_run(s, read_us) for s in SCENARIOS}
    rows = []
    for scenario, (_, x, y, races) in runs.items():
        in_time = any(getattr(r, "overlapped_in_time", True) for r in races)
        rows.append([SCENARIO_TEXT[scenario], x.address, y.address,
                     T("yes", "是") if x.address == y.address else T("no", "否"), len(races),
                     T("yes", "是") if races and in_time else T("no", "否")])

    def reused_and_races(scenario):
        _, x, y, races = runs[scenario]
        return x.address == y.address, len(races)

    reused, count = reused_and_races("nothing")
    latent_reused, latent = reused_and_races("nothing, host busy")
    record_reused, record_races = reused_and_races("record_stream")
    wait_reused, wait_races = reused_and_races("event wait")
    z, w, u, rule_races = allocator_rule_run()
    checks = [
        Check(T("with nothing done, y gets x's block and the detector reports the race",
                "什么也不做时，y 拿到 x 的块，检测器报告了竞争"),
              reused and count >= 1, T(f"reused: {reused}, races: {count}",
                                      f"复用：{reused}，竞争：{count}"),
              T("reused, ≥ 1 race", "复用，竞争 ≥ 1"), id="hazard-reported"),
        Check(T("the race is reported even when this timeline keeps the two kernels apart",
                "即使这次的时间线让两个核函数错开，竞争也照样报告"),
              latent_reused and latent >= 1, T(f"races: {latent}", f"竞争：{latent}"), "≥ 1",
              id="latent-race-reported"),
        Check(T("with record_stream, y gets fresh memory and nothing races",
                "用了 record_stream，y 拿到新内存，没有竞争"),
              not record_reused and record_races == 0,
              T(f"reused: {record_reused}, races: {record_races}",
                f"复用：{record_reused}，竞争：{record_races}"),
              T("not reused, 0 races", "不复用，竞争 0"), id="record-stream-no-race"),
        Check(T("with an event wait, y reuses x's block safely", "用事件等待，y 安全地复用 x 的块"),
              wait_reused and wait_races == 0,
              T(f"reused: {wait_reused}, races: {wait_races}",
                f"复用：{wait_reused}，竞争：{wait_races}"),
              T("reused, 0 races", "复用，竞争 0"), id="event-wait-no-race"),
        Check(T("a block freed on a stream is reused by that stream, without a race",
                "在某条流上释放的块被同一条流复用，没有竞争"),
              u.address == z.address and not rule_races,
              T(f"u at {u.address}, z at {z.address}, races: {len(rule_races)}",
                f"u 在 {u.address}，z 在 {z.address}，竞争：{len(rule_races)}"),
              T("same address, 0 races", "地址相同，竞争 0"), id="same-stream-reuse"),
        Check(T("…and never handed to an allocation on another stream",
                "……且从不交给另一条流上的分配"),
              w.address != z.address and not rule_races,
              T(f"w at {w.address}, z at {z.address}", f"w 在 {w.address}，z 在 {z.address}"),
              T("different addresses, 0 races", "地址不同，竞争 0"), id="cross-stream-not-reused"),
    ]
    unsafe_dev, *_ = runs["nothing"]
    table = Table(
        T("Four ways to free x", "释放 x 的四种做法"),
        [T("before freeing x", "释放 x 之前"), T("x's address", "x 的地址"),
         T("y's address", "y 的地址"), T("block reused", "块被复用"), T("races", "竞争数"),
         T("overlapping in time", "时间上重叠")],
        rows,
    )
    figure = stream_timeline(unsafe_dev, T("doing nothing: “write y” runs while “side reads x”",
                                           "什么也不做：“write y”与“side reads x”同时运行"))
    return Result(checks=checks, figures=[figure], tables=[table],
                  metrics={"races_unsafe": count})
