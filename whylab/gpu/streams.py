"""A discrete-event model of one host thread driving one GPU through streams and events.

The names are torch.cuda's, so a program maps onto this model line by line::

    torch.cuda.Stream()              device.Stream()
    torch.cuda.Event(enable_timing)  device.Event(enable_timing)
    torch.cuda.current_stream()      device.current_stream()
    with torch.cuda.stream(s):       with device.stream(s):
    torch.cuda.synchronize()         device.synchronize()
    time.perf_counter()              device.perf_counter()
    some_kernel(x)                   device.launch("some_kernel", duration_us, reads=, writes=)
    torch.empty(n, device="cuda")    device.empty(nbytes)
    x.record_stream(s)               x.record_stream(s)

What the model keeps from CUDA's documented semantics:

* a kernel launch is asynchronous: the host pays ``launch_overhead_us`` and goes
  on; the kernel can start on the device ``launch_latency_us`` after that;
* each stream runs its commands in the order they were submitted, one after
  the other; commands on different streams have no order unless an event
  orders them (``Stream.wait_event``, ``Stream.wait_stream``) or the host waited;
* an event completes when its stream reaches it; ``query`` says whether it has
  (an event never recorded counts as complete, as in CUDA); waiting on an event
  never recorded is a no-op; ``elapsed_time`` needs both events recorded with
  timing enabled and complete, and reads a clock of ``event_resolution_us``
  (CUDA documents "a resolution of around 0.5 microseconds");
* ``synchronize`` (device, stream or event) blocks the host until that work is done.

Where it simplifies: kernels on different streams run fully concurrently (a
real GPU shares its SMs, so two kernels that each fill the device run one
after the other); a kernel's duration is given, not computed; there is one
device and one host thread; PyTorch's side streams are created non-blocking, so
no stream synchronises implicitly with the default stream here either (CUDA's
legacy default stream would); host time advances only by the costs of the API
calls and by explicit :meth:`Device.host_work`.

Every kernel, and every access it declares, is recorded with a vector clock
(the happens-before order that streams, events and host waits create), which
:mod:`whylab.gpu.races` reads to find kernels racing on memory.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import count

from whylab.gpu.allocator import Buffer, CachingAllocator

VectorClock = dict[int, int]


def join(into: VectorClock, other: VectorClock) -> None:
    """``into`` becomes the element-wise maximum of both clocks (in place)."""
    for key, value in other.items():
        if value > into.get(key, 0):
            into[key] = value


@dataclass
class Access:
    """A kernel's declared use of a buffer: bytes ``[start, stop)`` of device memory."""

    buffer: str
    start: int
    stop: int
    kind: str  # "read" or "write"


@dataclass
class KernelRecord:
    """One kernel as the device ran it: where, when, and what memory it touched."""

    name: str
    stream: Stream
    submitted_us: float  # host time when the launch call returned
    start_us: float
    end_us: float
    clock: VectorClock
    accesses: list[Access] = field(default_factory=list)

    @property
    def stream_id(self) -> int:
        return self.stream.id

    def happens_before(self, other: KernelRecord) -> bool:
        """Whether streams, events or host waits order this kernel before ``other``."""
        return self.clock[self.stream_id] <= other.clock.get(self.stream_id, 0)


class Stream:
    """A FIFO queue of device work (``torch.cuda.Stream``). Make one with ``device.Stream()``."""

    def __init__(self, device: Device, stream_id: int, name: str):
        self.device = device
        self.id = stream_id
        self.name = name
        self.tail_us = 0.0  # device time at which everything submitted so far is done
        self.clock: VectorClock = {stream_id: 0}

    def __repr__(self) -> str:
        return f"<Stream {self.name}>"

    def wait_event(self, event: Event) -> None:
        """Work submitted to this stream from now on waits until ``event`` completes."""
        self.device._host_call(self.device.event_overhead_us)
        if event.time_us is None:
            return  # CUDA: waiting on an event that was never recorded does nothing
        self.tail_us = max(self.tail_us, event.time_us)
        join(self.clock, event.clock)

    def wait_stream(self, other: Stream) -> None:
        """Work submitted here from now on waits for all work submitted to ``other`` so far."""
        self.wait_event(other.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) on this stream and return it."""
        event = event if event is not None else self.device.Event()
        event.record(self)
        return event

    def query(self) -> bool:
        """Whether all work submitted to this stream has completed (host time)."""
        done = self.tail_us <= self.device.host_now_us
        if done:
            join(self.device.host_clock, self.clock)
        return done

    def synchronize(self) -> None:
        """Block the host until all work submitted to this stream is done."""
        self.device._wait_host_until(self.tail_us, self.clock)


class Event:
    """A marker in a stream (``torch.cuda.Event``). Make one with ``device.Event()``."""

    def __init__(self, device: Device, enable_timing: bool = False):
        self.device = device
        self.enable_timing = enable_timing
        self.time_us: float | None = None  # device time at which the stream reaches it
        self.clock: VectorClock = {}
        self.stream: Stream | None = None

    def record(self, stream: Stream | None = None) -> None:
        """Enqueue this event on ``stream`` (the current stream if None)."""
        device = self.device
        stream = stream if stream is not None else device.current_stream()
        device._host_call(device.event_overhead_us)
        ready = device.host_now_us + device.launch_latency_us
        self.time_us = max(ready, stream.tail_us)
        stream.tail_us = self.time_us
        self.clock = dict(stream.clock)
        self.stream = stream

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream`` (the current one if None) wait for this event."""
        (stream if stream is not None else self.device.current_stream()).wait_event(self)

    def query(self) -> bool:
        """Whether the work this event captured has completed (True if never recorded)."""
        if self.time_us is None:
            return True
        done = self.time_us <= self.device.host_now_us
        if done:
            join(self.device.host_clock, self.clock)
        return done

    def synchronize(self) -> None:
        """Block the host until this event completes."""
        if self.time_us is not None:
            self.device._wait_host_until(self.time_us, self.clock)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event``, read on the event clock's ticks."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError(
                "elapsed_time: both events must be created with enable_timing=True"
            )
        if self.time_us is None or end_event.time_us is None:
            raise RuntimeError("elapsed_time: both events must be recorded first")
        now = self.device.host_now_us
        if self.time_us > now or end_event.time_us > now:
            raise RuntimeError(
                "elapsed_time: an event has not completed yet (cudaErrorNotReady); "
                "synchronize on the end event first"
            )
        tick = self.device.event_resolution_us
        ticks = math.floor(end_event.time_us / tick) - math.floor(self.time_us / tick)
        return ticks * tick / 1000.0


class Device:
    """The host thread and one GPU: streams, events, launches, an allocator, and a record.

    ``launch_overhead_us``: host time one launch call costs; ``launch_latency_us``:
    from the call's return until the kernel can start on an idle stream;
    ``first_launch_us``: extra host time the first launch of each kernel name
    costs (module loading); ``event_overhead_us``: host time of an event call;
    ``synchronous_launches``: every launch blocks the host until its kernel is
    done (as ``CUDA_LAUNCH_BLOCKING=1`` or numba's CUDA simulator).
    """

    def __init__(
        self,
        *,
        launch_overhead_us: float = 5.0,
        launch_latency_us: float = 3.0,
        first_launch_us: float = 0.0,
        event_overhead_us: float = 1.0,
        event_resolution_us: float = 0.5,
        malloc_us: float = 0.0,
        synchronous_launches: bool = False,
        allocator: CachingAllocator | None = None,
    ):
        for name, value in [
            ("launch_overhead_us", launch_overhead_us),
            ("launch_latency_us", launch_latency_us),
            ("first_launch_us", first_launch_us),
            ("event_overhead_us", event_overhead_us),
            ("malloc_us", malloc_us),
        ]:
            if not value >= 0:
                raise ValueError(f"Device: {name} must be >= 0, got {value}")
        if not event_resolution_us > 0:
            raise ValueError(f"Device: event_resolution_us must be > 0, got {event_resolution_us}")
        self.launch_overhead_us = launch_overhead_us
        self.launch_latency_us = launch_latency_us
        self.first_launch_us = first_launch_us
        self.event_overhead_us = event_overhead_us
        self.event_resolution_us = event_resolution_us
        self.malloc_us = malloc_us
        self.synchronous_launches = synchronous_launches
        self.host_now_us = 0.0
        self.host_clock: VectorClock = {}
        self._ids = count(0)
        self.streams: list[Stream] = []
        self.default_stream = self.Stream(name="default")
        self._current = self.default_stream
        self.kernels: list[KernelRecord] = []
        self._loaded: set[str] = set()
        self.allocator = allocator if allocator is not None else CachingAllocator()

    # ------------------------------------------------------------ torch.cuda's names

    def Stream(self, name: str = "") -> Stream:  # noqa: N802 (torch.cuda.Stream)
        """A new stream (``torch.cuda.Stream()``)."""
        stream_id = next(self._ids)
        stream = Stream(self, stream_id, name or f"stream {stream_id}")
        self.streams.append(stream)
        return stream

    def Event(self, enable_timing: bool = False) -> Event:  # noqa: N802 (torch.cuda.Event)
        """A new event (``torch.cuda.Event(enable_timing=...)``)."""
        return Event(self, enable_timing)

    def current_stream(self) -> Stream:
        return self._current

    @contextmanager
    def stream(self, stream: Stream) -> Iterator[Stream]:
        """``with device.stream(s):`` makes ``s`` the current stream inside the block."""
        previous, self._current = self._current, stream
        try:
            yield stream
        finally:
            self._current = previous

    def synchronize(self) -> None:
        """Block the host until all work on all streams is done."""
        for stream in self.streams:
            stream.synchronize()

    def perf_counter(self) -> float:
        """The host clock, in seconds (what ``time.perf_counter()`` reads)."""
        return self.host_now_us / 1e6

    def host_work(self, duration_us: float) -> None:
        """The host spends ``duration_us`` on its own work (Python, data preparation)."""
        self.host_now_us += duration_us

    # ------------------------------------------------------------ work and memory

    def launch(
        self,
        name: str,
        duration_us: float,
        *,
        reads: Iterable[Buffer] = (),
        writes: Iterable[Buffer] = (),
        stream: Stream | None = None,
    ) -> KernelRecord:
        """Enqueue a kernel of ``duration_us`` on ``stream`` (the current one if None)."""
        if not duration_us >= 0:
            raise ValueError(f"launch {name!r}: duration_us must be >= 0, got {duration_us}")
        stream = stream if stream is not None else self._current
        cost = self.launch_overhead_us
        if name not in self._loaded:
            self._loaded.add(name)
            cost += self.first_launch_us
        self._host_call(cost)
        join(stream.clock, self.host_clock)
        stream.clock[stream.id] += 1
        start = max(self.host_now_us + self.launch_latency_us, stream.tail_us)
        record = KernelRecord(name, stream, self.host_now_us, start, start + duration_us,
                              dict(stream.clock))
        for kind, buffers in (("read", reads), ("write", writes)):
            for buffer in buffers:
                buffer.check_alive(name)
                record.accesses.append(
                    Access(buffer.name, buffer.address, buffer.address + buffer.nbytes, kind))
        stream.tail_us = record.end_us
        self.kernels.append(record)
        if self.synchronous_launches:
            self._wait_host_until(record.end_us, stream.clock)
        return record

    def launch_graph(
        self, kernels: Iterable[tuple[str, float]], *, stream: Stream | None = None
    ) -> list[KernelRecord]:
        """Replay a captured graph of ``(name, duration_us)`` kernels with one launch call.

        The model charges one ``launch_overhead_us`` for the whole graph and runs its
        kernels back to back in order (a real graph's nodes still have a small device-side
        gap, and may run concurrently where the graph has no edge; neither is modelled).
        Kernels in a graph declare no memory accesses here.
        """
        stream = stream if stream is not None else self._current
        self._host_call(self.launch_overhead_us)
        join(stream.clock, self.host_clock)
        start = max(self.host_now_us + self.launch_latency_us, stream.tail_us)
        records = []
        for name, duration_us in kernels:
            stream.clock[stream.id] += 1
            record = KernelRecord(name, stream, self.host_now_us, start, start + duration_us,
                                  dict(stream.clock))
            records.append(record)
            start = record.end_us
        stream.tail_us = start
        self.kernels.extend(records)
        return records

    def empty(self, nbytes: int, *, stream: Stream | None = None, name: str = "") -> Buffer:
        """Allocate ``nbytes`` of device memory on ``stream`` through the caching allocator."""
        stream = stream if stream is not None else self._current
        block, fresh = self.allocator.allocate(nbytes, stream)
        if fresh:
            self._host_call(self.malloc_us)
        return Buffer(self.allocator, block, nbytes, stream, name or f"buffer@{block.address}")

    def idle_fraction(self, stream: Stream | None = None) -> float:
        """Share of the time from the first kernel's start to the last one's end with no kernel
        running (on ``stream`` only, if given)."""
        kernels = [k for k in self.kernels if stream is None or k.stream is stream]
        if not kernels:
            return 0.0
        intervals = sorted((k.start_us, k.end_us) for k in kernels)
        busy, reach = 0.0, intervals[0][0]
        for start, end in intervals:
            if end > reach:
                busy += end - max(start, reach)
                reach = end
        span = reach - intervals[0][0]
        return 1.0 - busy / span if span > 0 else 0.0

    # ------------------------------------------------------------ internals

    def _host_call(self, cost_us: float) -> None:
        self.host_now_us += cost_us

    def _wait_host_until(self, time_us: float, clock: VectorClock) -> None:
        self.host_now_us = max(self.host_now_us, time_us)
        join(self.host_clock, clock)
