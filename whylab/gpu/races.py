"""A race detector for the stream model: kernels that touch the same memory, unordered.

Two kernels race when their declared accesses overlap in device memory, at
least one of them writes, and neither *happens before* the other: no stream
order, event wait or host synchronisation puts one after the other. The
verdict is about order, not about this run's timeline: an unordered pair is a
race even if the modelled durations happen to keep the two apart, because on
a real GPU they need not. Whether the two also overlapped in time in the
model is reported beside it (``overlapped_in_time``).

This is the happens-before check of tools such as CUDA's compute-sanitizer
racecheck (which works inside a kernel, on shared memory) carried to the level
of whole kernels and streams; it sees only the accesses each launch declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from whylab.gpu.streams import Access, KernelRecord


@dataclass(frozen=True)
class Race:
    """Two unordered kernels whose accesses to the same bytes conflict."""

    first: KernelRecord
    second: KernelRecord
    first_access: Access
    second_access: Access

    @property
    def overlapped_in_time(self) -> bool:
        return self.first.start_us < self.second.end_us and self.second.start_us < self.first.end_us

    def describe(self) -> str:
        a, b = self.first_access, self.second_access
        return (
            f"{self.first.name} ({self.first.stream.name}) {a.kind}s {a.buffer} and "
            f"{self.second.name} ({self.second.stream.name}) {b.kind}s {b.buffer}: "
            f"bytes [{max(a.start, b.start)}, {min(a.stop, b.stop)}), unordered"
        )


def conflicting(a: Access, b: Access) -> bool:
    """Whether two accesses touch common bytes and at least one writes."""
    return a.start < b.stop and b.start < a.stop and "write" in (a.kind, b.kind)


def find_races(kernels: list[KernelRecord]) -> list[Race]:
    """Every pair of kernels (in launch order) with a conflicting access and no order."""
    races = []
    for i, first in enumerate(kernels):
        for second in kernels[i + 1:]:
            if first.happens_before(second) or second.happens_before(first):
                continue
            for a in first.accesses:
                hit = next((b for b in second.accesses if conflicting(a, b)), None)
                if hit is not None:
                    races.append(Race(first, second, a, hit))
                    break
    return races
