"""Global memory as the SIMT and tile executors see it, and the record of every access.

A :class:`GlobalArray` is a flat NumPy array placed at an address aligned to 256
bytes (what ``cudaMalloc`` guarantees). Each executor reports every global load
and store to an :class:`AccessLog` as one *request*: the elements the active
lanes of one warp (SIMT) or one program (tile) touch in one instruction. For
each request the log keeps the number of distinct 32-byte sectors touched,
which is what the memory system moves (an L1/L2 cache line is 128 bytes made
of four 32-byte sectors; a request is served in sectors). For each array it
keeps how often each element was stored to, which thread or program stored
last, and the accesses that fell outside the array.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SECTOR_BYTES = 32
WARP_SIZE = 32
ALIGNMENT = 256
UNIT_SHIFT = 40  # (unit, sector) pairs packed in one int64: sectors below 2**40 (32 TiB)


class GlobalArray:
    """A named array in device global memory (stored flat, row-major)."""

    def __init__(self, name: str, data: np.ndarray, base_address: int = 0):
        if base_address % ALIGNMENT:
            raise ValueError(f"GlobalArray {name}: base address must be a multiple of "
                             f"{ALIGNMENT}, got {base_address}")
        self.name = name
        self.shape = np.shape(data)
        self.data = np.array(data).reshape(-1)
        self.base_address = base_address

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def itemsize(self) -> int:
        return self.data.itemsize

    def result(self) -> np.ndarray:
        """The contents in the array's original shape."""
        return self.data.reshape(self.shape)


def place(arrays: dict[str, np.ndarray]) -> dict[str, GlobalArray]:
    """Lay ``arrays`` out one after the other, each at a 256-byte-aligned address."""
    placed, address = {}, 0
    for name, data in arrays.items():
        placed[name] = GlobalArray(name, data, address)
        address += -(-np.asarray(data).nbytes // ALIGNMENT) * ALIGNMENT
    return placed


@dataclass
class Request:
    """One warp's (or program's) load or store instruction."""

    kind: str  # "load", "store" or "atomic"
    array: str
    unit: int  # the warp's or program's number
    elements: int  # active, in-bounds lanes
    sectors: int  # distinct 32-byte sectors those lanes touch
    lane_sectors: np.ndarray  # the sector of each of those lanes, in lane order


@dataclass
class ArrayRecord:
    """Per array: element loads, how often each element was written, and by whom."""

    loads: int = 0
    out_of_bounds: int = 0
    write_count: np.ndarray | None = None
    last_writer: np.ndarray | None = None


@dataclass
class AccessLog:
    """Every global request an executor made, with per-array write maps."""

    requests: list[Request] = field(default_factory=list)
    arrays: dict[str, ArrayRecord] = field(default_factory=dict)

    def record_for(self, array: GlobalArray) -> ArrayRecord:
        record = self.arrays.get(array.name)
        if record is None:
            record = ArrayRecord(write_count=np.zeros(array.size, np.int64),
                                 last_writer=np.full(array.size, -1, np.int64))
            self.arrays[array.name] = record
        return record

    def log(self, kind: str, array: GlobalArray, index: np.ndarray, active: np.ndarray,
            unit: np.ndarray, writer: np.ndarray | None = None) -> np.ndarray:
        """Record one instruction over lanes; returns the lanes that are active and in bounds.

        ``index``, ``active``, ``unit`` (warp or program of each lane) and ``writer``
        (thread or program id of each lane) are arrays of one length.
        """
        record = self.record_for(array)
        inside = (index >= 0) & (index < array.size)
        record.out_of_bounds += int(np.count_nonzero(active & ~inside))
        live = active & inside
        units = unit[live]
        if units.size:
            sectors = (array.base_address + index[live] * array.itemsize) // SECTOR_BYTES
            distinct = np.unique(units.astype(np.int64) << UNIT_SHIFT | sectors)
            _, sector_counts = np.unique(distinct >> UNIT_SHIFT, return_counts=True)
            used, element_counts = np.unique(units, return_counts=True)
            by_unit = np.split(sectors[np.argsort(units, kind="stable")],
                               np.cumsum(element_counts)[:-1])
            for u, n_elements, n_sectors, lanes in zip(used, element_counts, sector_counts,
                                                       by_unit, strict=True):
                self.requests.append(Request(kind, array.name, int(u), int(n_elements),
                                             int(n_sectors), lanes))
        if kind == "load":
            record.loads += int(np.count_nonzero(live))
        elif kind == "store":
            np.add.at(record.write_count, index[live], 1)
            record.last_writer[index[live]] = writer[live]
        return live

    def loads(self, *names: str) -> int:
        """Element loads from the named arrays (all arrays if none named)."""
        return sum(r.loads for n, r in self.arrays.items() if not names or n in names)

    def sectors_per_request(self, kind: str, name: str) -> float:
        """Mean 32-byte sectors per request of ``kind`` to array ``name``."""
        counts = [r.sectors for r in self.requests if r.kind == kind and r.array == name]
        return float(np.mean(counts)) if counts else 0.0
