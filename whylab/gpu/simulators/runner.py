"""Run one kernel under numba's CUDA simulator or Triton's interpreter, in this process.

``python -m whylab.gpu.simulators.runner`` reads a JSON list of requests on stdin
(each ``{"simulator": "numba" | "triton", "kernel": name, "n": ..., ...}`` with the
input arrays as lists; all for one simulator) and writes a list of results (the
outputs and write counts) as JSON on stdout. It sets ``NUMBA_ENABLE_CUDASIM=1``
or ``TRITON_INTERPRET=1`` *before* importing numba or Triton, which read them at
import or decoration time; that is why the cross-checks run it in a fresh process.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np


def run_numba(request: dict) -> dict:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba import cuda

    from whylab.gpu.simulators import numba_kernels

    n, block = request["n"], request["block"]
    kernel = cuda.jit(getattr(numba_kernels, request["kernel"]))
    a = np.asarray(request["a"], np.float32)
    b = np.asarray(request["b"], np.float32)
    out = np.zeros(request["out_size"], np.float32)
    writes = np.zeros(out.size, np.int64)
    writer = np.full(out.size, -1, np.int64)
    if request["kernel"].startswith("matmul"):
        blocks = -(-n // block)
        kernel[(blocks, blocks), (block, block)](a, b, out, writes, writer, n)
    else:
        kernel[request["grid"], block](a, b, out, writes, writer, n)
    return {"out": out.tolist(), "writes": writes.tolist(), "writer": writer.tolist()}


def run_triton(request: dict) -> dict:
    os.environ["TRITON_INTERPRET"] = "1"
    import torch
    import triton
    import triton.language

    from whylab.gpu import tile_kernels

    tile_kernels.tl = triton.language
    kernel = triton.jit(getattr(tile_kernels, request["kernel"]))
    a = torch.tensor(request["a"], dtype=torch.float32)
    b = torch.tensor(request["b"], dtype=torch.float32)
    out = torch.zeros(request["out_size"], dtype=torch.float32)
    writes = torch.zeros(request["out_size"], dtype=torch.int32)
    n, block = request["n"], request["block"]
    if request["kernel"] == "matmul":
        blocks = -(-n // block)
        kernel[(blocks, blocks)](a, b, out, writes, n, n, BLOCK_M=block, BLOCK_N=block,
                                 BLOCK_K=block)
    else:
        kernel[(request["grid"],)](a, b, out, writes, n, BLOCK=block)
    return {"out": out.tolist(), "writes": writes.tolist(), "version": triton.__version__}


def main() -> None:
    requests = json.load(sys.stdin)
    runners = {"numba": run_numba, "triton": run_triton}
    json.dump([runners[request["simulator"]](request) for request in requests], sys.stdout)


if __name__ == "__main__":
    main()
