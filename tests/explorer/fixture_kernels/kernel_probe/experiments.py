"""A probe run in a worker process: which numba kernels are compiled before its first run."""

from __future__ import annotations

from whylab.explorer.experiment import Check, Result, T, experiment
from whylab.numerics.kernel_warmup import entry_kernels


@experiment(
    name="compiled",
    title=T("Kernels compiled in this worker", "本工作进程中已编译的内核"),
    description=T(
        "Reports each kernel's compiled signatures without calling it.",
        "不调用内核，只报告每个内核已编译的签名。",
    ),
    time_limit_s=10.0,
)
def compiled():
    return Result(
        checks=[
            Check(
                T(name, name),
                bool(kernel.signatures),
                f"{len(kernel.signatures)} compiled",
                ">= 1 compiled",
                id=name.replace(".", "-").replace("_", "-").lower(),
            )
            for name, kernel in entry_kernels().items()
        ]
    )


EXPERIMENTS = [compiled]
