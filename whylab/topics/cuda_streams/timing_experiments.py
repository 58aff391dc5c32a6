"""What a timing of a GPU kernel measures: host timer, synchronisation, events, overlap, idle.

Every number comes from :class:`whylab.gpu.Device`, a discrete-event model of the
host and the device with the costs the reader sets; the expected values are the
closed forms written in the prose, computed here from the same parameters.
"""

from __future__ import annotations

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.gpu import Device
from whylab.topics.cuda_streams.timeline import stream_timeline

TIME_TOLERANCE_US = 1e-6  # the model is exact; this only absorbs float rounding
TICK_US = 0.5  # CUDA: event times have "a resolution of around 0.5 microseconds"


def _costs(**overrides) -> list[Param]:
    defaults = {"launch_us": 5.0, "latency_us": 3.0}
    defaults.update(overrides)
    return [
        Param("launch_us", "float", defaults["launch_us"],
              T("host cost of one launch", "一次启动在主机上的开销"), unit="µs",
              minimum=0.5, maximum=50.0),
        Param("latency_us", "float", defaults["latency_us"],
              T("launch latency (call returns → kernel may start)",
                "启动延迟（调用返回 → 核函数可以开始）"), unit="µs", minimum=0.0, maximum=20.0),
    ]


def _close(measured: float, expected: float, tolerance: float = TIME_TOLERANCE_US) -> bool:
    return abs(measured - expected) <= tolerance


# ---------------------------------------------------------------- what each timer sees


@experiment(
    name="timing-boundaries",
    metrics=[
        Metric("host_only_us", T("host timer, no sync", "主机计时，不同步"), "µs"),
        Metric("synced_us", T("host timer with synchronize()", "主机计时加 synchronize()"), "µs"),
        Metric("event_us", T("events", "事件计时"), "µs"),
    ],
    title=T("Host timer, synchronisation and events around one matmul",
            "围绕一次矩阵乘法：主机计时、同步与事件"),
    description=T(
        "Times one kernel of the chosen duration three ways on the modelled device: a host "
        "timer around the launch alone, a host timer around launch and synchronize(), and a "
        "pair of events recorded before and after it; then times ten iterations with the "
        "first launch's module loading and the allocator's first cudaMalloc as warm-up.",
        "在模型设备上用三种方式为一个给定时长的核函数计时：只包住启动调用的主机计时、"
        "包住启动与 synchronize() 的主机计时、核函数前后各记录一个事件；"
        "再计时十次迭代，其中第一次启动的模块加载和分配器的第一次 cudaMalloc 属于预热。",
    ),
    params=[
        Param("kernel_us", "float", 800.0, T("kernel duration", "核函数时长"), unit="µs",
              minimum=1.0, maximum=10000.0),
        *_costs(),
        Param("first_launch_us", "float", 200.0,
              T("extra host cost of a kernel's first launch", "核函数首次启动的额外主机开销"),
              unit="µs", minimum=1.0, maximum=5000.0),
        Param("malloc_us", "float", 50.0,
              T("host cost of one cudaMalloc", "一次 cudaMalloc 的主机开销"),
              unit="µs", minimum=1.0, maximum=1000.0),
    ],
    controls=[
        Control("synchronous-launch",
                T("launches block the host until the kernel ends (CUDA_LAUNCH_BLOCKING=1, "
                  "or numba's simulator)",
                  "启动调用会阻塞主机直到核函数结束（CUDA_LAUNCH_BLOCKING=1，或 numba 的模拟器）"),
                breaks=("host-timer-sees-launch",)),
        Control("sync-wrong-stream",
                T("the kernel runs on a side stream and only the default stream is synchronised",
                  "核函数在旁路流上运行，却只同步了默认流"),
                breaks=("sync-sees-kernel",)),
        Control("end-event-other-stream",
                T("the end event is recorded on another, idle stream",
                  "结束事件被记录在另一条空闲的流上"),
                breaks=("events-see-kernel",)),
        Control("warm-up-timed",
                T("the first, warm-up iteration is averaged in",
                  "第一次（预热）迭代也被算进平均值"),
                breaks=("warm-up-excluded",)),
    ],
)
def timing_boundaries(kernel_us, launch_us, latency_us, first_launch_us, malloc_us):
    def device() -> Device:
        return Device(launch_overhead_us=launch_us, launch_latency_us=latency_us,
                      synchronous_launches=control_active("synchronous-launch"))

    # 1. host timer around the launch only
    dev = device()
    dev.launch("matmul", 0.0)  # loaded and warm: this section times the steady state
    dev.synchronize()
    before = dev.perf_counter()
    dev.launch("matmul", kernel_us)
    host_only_us = (dev.perf_counter() - before) * 1e6

    # 2. host timer around launch + synchronize
    dev = device()
    side = dev.Stream("side")
    dev.launch("matmul", 0.0)
    dev.synchronize()
    before = dev.perf_counter()
    dev.launch("matmul", kernel_us,
               stream=side if control_active("sync-wrong-stream") else None)
    dev.current_stream().synchronize()
    synced_us = (dev.perf_counter() - before) * 1e6

    # 3. events around the kernel, on the same stream
    dev = device()
    other = dev.Stream("other")
    dev.launch("matmul", 0.0)
    dev.synchronize()
    start, end = dev.Event(enable_timing=True), dev.Event(enable_timing=True)
    start.record()
    dev.launch("matmul", kernel_us)
    end.record(other if control_active("end-event-other-stream") else None)
    end.synchronize()
    dev.synchronize()
    event_us = start.elapsed_time(end) * 1000.0
    timeline = stream_timeline(dev, T("the events' run: warm-up launch, then the timed kernel",
                                      "事件计时这一轮：先是预热启动，然后是被计时的核函数"))

    # 4. ten synchronised iterations, the first one cold
    dev = Device(launch_overhead_us=launch_us, launch_latency_us=latency_us,
                 first_launch_us=first_launch_us, malloc_us=malloc_us)
    iterations = []
    for _ in range(10):
        before = dev.perf_counter()
        out = dev.empty(4 << 20)
        dev.launch("matmul", kernel_us, writes=[out])
        dev.synchronize()
        out.free()
        iterations.append((dev.perf_counter() - before) * 1e6)
    timed = iterations if control_active("warm-up-timed") else iterations[1:]
    reported_us = float(np.mean(timed))

    steady_us = launch_us + latency_us + kernel_us  # closed form: what the host waits for
    gap_us = launch_us  # the host's launch call sits between the two event records
    cold_extra_us = first_launch_us + malloc_us
    tick_error = abs(event_us - (kernel_us + gap_us))
    checks = [
        Check(T("a host timer without synchronisation measures the launch call",
                "不同步的主机计时只量到了启动调用"),
              _close(host_only_us, launch_us) and host_only_us < kernel_us,
              f"{host_only_us:.2f} µs",
              T(f"= one launch call, {launch_us:g} µs", f"= 一次启动调用，{launch_us:g} µs"),
              id="host-timer-sees-launch"),
        Check(T("with synchronize() the host timer measures launch, latency and kernel",
                "加上 synchronize()，主机计时量到启动、延迟和核函数"),
              _close(synced_us, steady_us), f"{synced_us:.2f} µs",
              f"= {launch_us:g} + {latency_us:g} + {kernel_us:g} µs", id="sync-sees-kernel"),
        Check(T("events measure the kernel plus the launch gap, to one 0.5 µs tick",
                "事件量到核函数加上启动间隙，误差在一个 0.5 µs 刻度之内"),
              tick_error < TICK_US + TIME_TOLERANCE_US, f"{event_us:.2f} µs",
              f"{kernel_us:g} + {gap_us:g} µs ± {TICK_US:g}", id="events-see-kernel"),
        Check(T("the reported time leaves the warm-up iteration out",
                "报告的时间不含预热那一次"),
              _close(reported_us, steady_us, 1e-3),
              f"{reported_us:.2f} µs",
              T(f"= {steady_us:g} µs (steady state)", f"= {steady_us:g} µs（稳态）"),
              id="warm-up-excluded"),
    ]
    table = Table(
        T("What each timer read", "每种计时读到的值"),
        [T("timer", "计时方式"), T("reads (µs)", "读数（µs）"),
         T("closed form (µs)", "解析式（µs）")],
        [
            [T("host, no sync", "主机，不同步"), round(host_only_us, 3), launch_us],
            [T("host + synchronize()", "主机 + synchronize()"), round(synced_us, 3), steady_us],
            [T("events", "事件"), round(event_us, 3), kernel_us + gap_us],
            [T("first iteration (cold)", "第一次迭代（冷）"), round(iterations[0], 3),
             steady_us + cold_extra_us],
            [T("later iterations (mean)", "之后的迭代（平均）"),
             round(float(np.mean(iterations[1:])), 3), steady_us],
        ],
    )
    return Result(checks=checks, figures=[timeline], tables=[table],
                  metrics={"host_only_us": host_only_us, "synced_us": synced_us,
                           "event_us": event_us})


# ---------------------------------------------------------------- two streams


@experiment(
    name="overlapping-streams",
    metrics=[
        Metric("total_us", T("whole run (host)", "整体（主机计时）"), "µs"),
        Metric("serial_us", T("one after the other", "一个接一个"), "µs"),
    ],
    title=T("Two streams, two kernels, four events", "两条流、两个核函数、四个事件"),
    description=T(
        "Launches one kernel on the default stream and one on a side stream, each between its "
        "own pair of events, and waits for both. The events measure each kernel; the host "
        "measures the whole, which is shorter than the two kernels end to end when they overlap.",
        "在默认流和旁路流上各启动一个核函数，每个都夹在自己的一对事件之间，再等两者都完成。"
        "事件量出每个核函数；主机量出整体：两者重叠时，整体比两个核函数首尾相接要短。",
    ),
    params=[
        Param("first_us", "float", 600.0, T("kernel on the default stream", "默认流上的核函数"),
              unit="µs", minimum=10.0, maximum=5000.0),
        Param("second_us", "float", 400.0, T("kernel on the side stream", "旁路流上的核函数"),
              unit="µs", minimum=10.0, maximum=5000.0),
        *_costs(),
    ],
    controls=[
        Control("same-stream",
                T("both kernels are launched on the default stream", "两个核函数都被放进了默认流"),
                breaks=("streams-overlap",)),
        Control("side-waits-for-default",
                T("the side stream first waits for the default stream (wait_stream)",
                  "旁路流先等待默认流（wait_stream）"),
                breaks=("streams-overlap",)),
        Control("shared-start-event",
                T("the side kernel is timed from the default stream's start event",
                  "旁路流的核函数从默认流的起始事件开始计时"),
                breaks=("events-see-each-kernel",)),
    ],
)
def overlapping_streams(first_us, second_us, launch_us, latency_us):
    dev = Device(launch_overhead_us=launch_us, launch_latency_us=latency_us)
    main = dev.default_stream
    side = main if control_active("same-stream") else dev.Stream("side")
    events = [dev.Event(enable_timing=True) for _ in range(4)]
    before = dev.perf_counter()
    events[0].record(main)
    dev.launch("matmul A", first_us, stream=main)
    events[1].record(main)
    if control_active("side-waits-for-default"):
        side.wait_stream(main)
    events[2].record(side)
    dev.launch("matmul B", second_us, stream=side)
    events[3].record(side)
    dev.synchronize()
    total_us = (dev.perf_counter() - before) * 1e6
    first_start = events[0]
    second_start = events[0] if control_active("shared-start-event") else events[2]
    measured_first = first_start.elapsed_time(events[1]) * 1000.0
    measured_second = second_start.elapsed_time(events[3]) * 1000.0
    # closed forms: each event pair brackets its kernel plus one launch call (see timing-
    # boundaries); the side kernel is launched after three event calls and two launches.
    event_cost = dev.event_overhead_us
    first_end = event_cost + launch_us + latency_us + first_us
    side_end = 3 * event_cost + 2 * launch_us + latency_us + second_us
    overlap_total = max(first_end, side_end)
    # on one stream, the second kernel would start only once the first is done
    serial_us = max(first_end, side_end - second_us) + second_us
    each_ok = (abs(measured_first - (first_us + launch_us)) <= TICK_US
               and abs(measured_second - (second_us + launch_us)) <= TICK_US)
    checks = [
        Check(T("each stream's events measure its own kernel (+ launch gap, ± one tick)",
                "每条流的事件量出自己的核函数（加启动间隙，误差一个刻度）"),
              each_ok, f"{measured_first:.1f}, {measured_second:.1f} µs",
              f"{first_us + launch_us:g}, {second_us + launch_us:g} µs ± {TICK_US:g}",
              id="events-see-each-kernel"),
        Check(T("the two kernels overlap: the whole takes the longer stream, less than one after "
                "the other", "两个核函数重叠：整体取决于较长的那条流，短于一个接一个地执行"),
              _close(total_us, overlap_total) and total_us < serial_us,
              f"{total_us:.1f} µs", f"= {overlap_total:g} µs < {serial_us:g} µs",
              id="streams-overlap"),
    ]
    timeline = stream_timeline(dev, T("the two streams on the device", "两条流在设备上的时间线"))
    return Result(checks=checks, figures=[timeline],
                  metrics={"total_us": total_us, "serial_us": serial_us})


# ---------------------------------------------------------------- idle device


def idle_closed_form(kernel_us: float, launch_us: float, count: int) -> float:
    """Idle share of a stream fed ``count`` kernels by a host that pays ``launch_us`` each.

    Kernel i can start at ``i * launch_us``; when kernels are shorter than a launch the
    device waits for the host: the span is ``(count - 1) * launch_us + kernel_us``.
    """
    if kernel_us >= launch_us:
        return 0.0
    return 1.0 - count * kernel_us / ((count - 1) * launch_us + kernel_us)


KERNEL_SIZES_US = (0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 50.0)


@experiment(
    name="idle-device",
    metrics=[
        Metric("idle_at_smallest", T("idle fraction, smallest kernel", "最小核函数时的空闲比例")),
        Metric("graph_idle_at_smallest", T("idle fraction, graph replay", "重放图时的空闲比例")),
    ],
    title=T("Many tiny kernels: a device waiting for its host", "大量小核函数：设备在等主机"),
    description=T(
        "Launches a run of equal kernels back to back, for kernel durations from 0.5 to 50 µs, "
        "and measures from the model's timeline how much of the run the device sat idle; then "
        "replays the same run as one captured graph (one launch for all of it).",
        "背靠背地启动一串时长相同的核函数，时长从 0.5 µs 到 50 µs，从模型的时间线上量出设备"
        "空闲的比例；再把同一串核函数当作一个捕获好的图来重放（整串只启动一次）。",
    ),
    params=[*_costs(), Param("count", "int", 100, T("kernels per run", "每轮核函数个数"),
                             minimum=10, maximum=1000)],
    controls=[
        Control("launch-cost-once",
                T("the host's launch cost is paid once, as if launches were free after the first",
                  "启动开销只付一次，仿佛第一次之后启动就不要钱"),
                breaks=("idle-matches-closed-form",)),
        Control("graph-launches-each-node",
                T("the graph replay launches each node from the host",
                  "重放图时仍由主机逐个启动节点"),
                breaks=("graph-keeps-device-busy",)),
    ],
)
def idle_device(launch_us, latency_us, count):
    measured, expected, graph = [], [], []
    for kernel_us in KERNEL_SIZES_US:
        dev = Device(launch_overhead_us=launch_us, launch_latency_us=latency_us)
        for i in range(count):
            if control_active("launch-cost-once") and i > 0:
                dev.launch_overhead_us = 0.0
            dev.launch("tiny", kernel_us)
        measured.append(dev.idle_fraction())
        expected.append(idle_closed_form(kernel_us, launch_us, count))
        replay = Device(launch_overhead_us=launch_us, launch_latency_us=latency_us)
        nodes = [("tiny", kernel_us)] * count
        if control_active("graph-launches-each-node"):
            for name, duration in nodes:
                replay.launch(name, duration)
        else:
            replay.launch_graph(nodes)
        graph.append(replay.idle_fraction())
    worst = max(abs(m - e) for m, e in zip(measured, expected, strict=True))
    smallest = KERNEL_SIZES_US[0]
    premise = idle_closed_form(smallest, launch_us, count) > 0
    checks = [
        Check(T("the idle fraction read from the timeline equals the closed form",
                "从时间线读出的空闲比例等于解析式"),
              worst < 1e-9, f"max |Δ| = {worst:.1e}", "< 1e-9", id="idle-matches-closed-form"),
    ]
    if premise:
        checks.append(Check(
            T("replayed as one graph, the same tiny kernels keep the device busy",
              "作为一个图重放，同样的小核函数能让设备一直忙"),
            graph[0] < 0.01,
            T(f"{graph[0]:.1%} idle at {smallest:g} µs", f"{smallest:g} µs 时空闲 {graph[0]:.1%}"),
            T(f"< 1% (launched one by one: {measured[0]:.0%} idle)",
              f"< 1%（逐个启动时空闲 {measured[0]:.0%}）"), id="graph-keeps-device-busy"))
    else:
        checks.append(Check.not_applicable(
            id="graph-keeps-device-busy",
            name=T("replayed as one graph, the same tiny kernels keep the device busy",
                   "作为一个图重放，同样的小核函数能让设备一直忙"),
            expected="< 1%",
            why=T("needs launches costlier than the smallest kernel",
                  "需要启动开销大于最小的核函数")))
    chart = LineChart(
        T("Idle fraction against kernel duration", "空闲比例与核函数时长"),
        T("kernel duration (µs)", "核函数时长（µs）"), T("device idle fraction", "设备空闲比例"),
        [Series(T("model timeline, one launch each", "模型时间线，逐个启动"), KERNEL_SIZES_US,
                measured),
         Series(T("closed form 1 − N·d / ((N−1)·L + d)", "解析式 1 − N·d / ((N−1)·L + d)"),
                KERNEL_SIZES_US, expected),
         Series(T("one graph replay", "重放一个图"), KERNEL_SIZES_US, graph)],
        log_x=True,
    )
    return Result(checks=checks, figures=[chart],
                  metrics={"idle_at_smallest": measured[0], "graph_idle_at_smallest": graph[0]})
