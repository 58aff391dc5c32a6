"""A stream-aware caching allocator, modelled on PyTorch's CUDA caching allocator.

What it keeps from PyTorch (``c10/cuda/CUDACachingAllocator.cpp`` and the
``Tensor.record_stream`` documentation):

* a block is allocated *on a stream*; once freed, it is cached and handed to a
  later allocation on the same stream, never on another one. Within one stream
  that is safe without any synchronisation: the stream runs the new owner's
  kernels after the old owner's;
* the allocator knows only the stream a block was allocated on. A block used on
  another stream and then freed may be handed out while that stream still uses
  it, unless ``record_stream(s)`` told the allocator about ``s``: then, at free
  time, an event is recorded on each such stream and the block is reused only
  once a later allocation polls those events and finds them complete;
* sizes are rounded up to multiples of 512 bytes; a miss calls ``cudaMalloc``
  (the device charges ``malloc_us`` of host time for it) and the memory stays
  reserved by the cache.

Where it simplifies: one block per segment, no splitting or merging of blocks,
no separate small/large pools, no freeing of cached segments when memory runs
out (there is no memory limit), and a reused block is the smallest cached one
that fits, whatever its excess.

``caching=False`` is PyTorch's ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``: every
allocation is a fresh ``cudaMalloc`` (and freed memory is never reused here).
``ignore_streams`` and ``honour_record_stream`` exist for the topics' negative
controls: an allocator that reuses blocks across streams, and one that forgets
the streams ``record_stream`` named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ROUND_BYTES = 512


def rounded_size(nbytes: int) -> int:
    """The block size PyTorch's allocator uses for a request of ``nbytes`` (multiples of 512)."""
    return max(1, -(-nbytes // ROUND_BYTES)) * ROUND_BYTES


@dataclass
class Block:
    """A range of device memory the cache owns."""

    address: int
    size: int
    stream: Any  # the Stream it was allocated on
    in_use: bool = True
    stream_uses: set = field(default_factory=set)  # other streams named by record_stream
    pending_events: list = field(default_factory=list)  # events to complete before reuse


class CachingAllocator:
    """Hands out :class:`Block` s; see the module docstring for the rules."""

    def __init__(
        self,
        *,
        caching: bool = True,
        ignore_streams: bool = False,
        honour_record_stream: bool = True,
    ):
        self.caching = caching
        self.ignore_streams = ignore_streams
        self.honour_record_stream = honour_record_stream
        self.cached: list[Block] = []
        self.next_address = 0
        self.num_mallocs = 0
        self.num_reuses = 0
        self.reserved_bytes = 0
        self.allocated_bytes = 0

    def allocate(self, nbytes: int, stream) -> tuple[Block, bool]:
        """A block of at least ``nbytes`` for ``stream``; ``True`` beside it if freshly malloc'd."""
        if not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError(f"allocate: nbytes must be a positive int, got {nbytes!r}")
        size = rounded_size(nbytes)
        candidates = [
            block for block in self.cached
            if block.size >= size
            and (self.ignore_streams or block.stream is stream)
            and self._events_done(block)
        ]
        self.allocated_bytes += size
        if candidates:
            block = min(candidates, key=lambda b: (b.size, b.address))
            self.cached.remove(block)
            block.in_use, block.stream = True, stream
            self.num_reuses += 1
            return block, False
        block = Block(self.next_address, size, stream)
        self.next_address += size
        self.num_mallocs += 1
        self.reserved_bytes += size
        return block, True

    def free(self, block: Block) -> None:
        """Return ``block`` to the cache (the host's ``del tensor``)."""
        if not block.in_use:
            raise RuntimeError(f"free: block at {block.address} is already free")
        block.in_use = False
        self.allocated_bytes -= block.size
        if self.honour_record_stream:
            block.pending_events = [s.record_event() for s in block.stream_uses]
        block.stream_uses = set()
        if self.caching:
            self.cached.append(block)

    def record_stream(self, block: Block, stream) -> None:
        """Note that ``stream`` uses ``block`` (``Tensor.record_stream``)."""
        if stream is not block.stream:
            block.stream_uses.add(stream)

    @staticmethod
    def _events_done(block: Block) -> bool:
        """Poll the block's events (a host-side query); drop them once all have completed."""
        if all(event.query() for event in block.pending_events):
            block.pending_events = []
            return True
        return False


class Buffer:
    """A tensor's memory as the host program sees it: an allocation it can use and free."""

    def __init__(self, allocator: CachingAllocator, block: Block, nbytes: int, stream, name: str):
        self.allocator = allocator
        self.block = block
        self.nbytes = nbytes
        self.stream = stream
        self.name = name
        self.address = block.address
        self.freed = False

    def __repr__(self) -> str:
        state = "freed" if self.freed else "live"
        return f"<Buffer {self.name} [{self.address}, {self.address + self.nbytes}) {state}>"

    def record_stream(self, stream) -> None:
        """``Tensor.record_stream``: don't reuse this memory until ``stream``'s work at free
        time is done."""
        self.check_alive("record_stream")
        self.allocator.record_stream(self.block, stream)

    def free(self) -> None:
        """The host drops its last reference (``del x``): the block goes back to the cache."""
        self.check_alive("free")
        self.freed = True
        self.allocator.free(self.block)

    def check_alive(self, op: str) -> None:
        if self.freed:
            raise RuntimeError(f"{op}: {self.name} was already freed")
