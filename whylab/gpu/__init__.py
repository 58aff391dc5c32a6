"""Execution models of a GPU that run on any machine, checked against CUDA's documented rules.

* :mod:`whylab.gpu.streams` -- a discrete-event model of a host thread and a device
  with streams, events and kernel launches, in torch.cuda's names;
* :mod:`whylab.gpu.allocator` -- a stream-aware caching allocator (``record_stream``);
* :mod:`whylab.gpu.races` -- a happens-before race detector over recorded kernels;
* :mod:`whylab.gpu.simt` and :mod:`whylab.gpu.tile` -- a SIMT executor (grid, blocks,
  warps of 32, shared memory and barriers) and a Triton-style tile executor, both
  recording every global memory access (:mod:`whylab.gpu.access`);
* :mod:`whylab.gpu.simt_kernels` and :mod:`whylab.gpu.tile_kernels` -- a vector add and
  matrix products written both ways (the tile kernels are Triton source);
* :mod:`whylab.gpu.simulators` -- the same kernels under numba's CUDA simulator and
  Triton's interpreter, each in a subprocess.

Nothing here needs a GPU, and nothing here uses one: there is no CuPy path yet.

:mod:`whylab.cuda` is torch.cuda's face for programs asking about a real device;
this package models one and never touches a real GPU.
"""

from whylab.gpu.allocator import Buffer, CachingAllocator
from whylab.gpu.races import Race, find_races
from whylab.gpu.streams import Device, Event, KernelRecord, Stream

__all__ = ["Buffer", "CachingAllocator", "Device", "Event", "KernelRecord", "Race", "Stream",
           "find_races"]
