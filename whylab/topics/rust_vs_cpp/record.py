"""Write ``recorded.json``: run every compiled experiment, for each program choice, and keep it.

Run it on a machine with rustc and g++, outside any memory-limited worker::

    python -m whylab.topics.rust_vs_cpp.record

It runs each experiment of the topic that compiles something once per value of its
choice parameters (``case``), at the default sizes, notes the builds each run asked
for (program hash, flags, compiler version), and writes nothing unless every check of
every run passed: a recording stands for what the programs do, so it is made only from
runs that showed it.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from pathlib import Path

from whylab.topics.rust_vs_cpp import recorded, toolchain
from whylab.topics.rust_vs_cpp.experiments import EXPERIMENTS

LIVE_WITHOUT_COMPILERS = ("python-analogues",)


def program_choices(experiment) -> list[dict[str, object]]:
    """The defaults, once for each value of each choice parameter (just the defaults if none)."""
    defaults = experiment.defaults()
    variants = [dict(defaults, **{p.name: value}) for p in experiment.params
                if p.kind == "choice" for value in p.choices]
    return variants or [defaults]


def record_run(experiment, params) -> dict[str, object]:
    with toolchain.noting_builds() as asked:
        result = experiment.run(**params)
    return {"experiment": experiment.name, "params": params,
            "builds": recorded.builds_to_json(asked), **recorded.result_to_json(result)}


def machine() -> dict[str, object]:
    """The CPU's model name and core count, as /proc/cpuinfo and os.cpu_count() give them."""
    try:
        rows = Path("/proc/cpuinfo").read_text().splitlines()
        model = next(r.split(":", 1)[1].strip() for r in rows if r.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.machine()
    return {"cpu": model, "cores": os.cpu_count()}


def main() -> int:
    rustc, cxx = toolchain.find_rustc(), toolchain.find_cxx()
    if rustc is None or cxx is None:
        print("needs rustc and g++ (or clang++) on PATH", file=sys.stderr)
        return 2
    runs = [record_run(e, params) for e in EXPERIMENTS if e.name not in LIVE_WITHOUT_COMPILERS
            for params in program_choices(e)]
    unpassed = [(run["experiment"], run["params"], c["id"], c["state"])
                for run in runs for c in run["checks"] if c["state"] != "passed"]
    if unpassed:
        for row in unpassed:
            print("not passed:", *row, file=sys.stderr)
        print("nothing written: record only runs whose every check passed", file=sys.stderr)
        return 1
    record = {"recorded_on": datetime.datetime.now(datetime.UTC).date().isoformat(),
              "toolchains": {"rustc": toolchain.compiler_version(rustc),
                             "c++": toolchain.compiler_version(cxx)},
              "machine": machine(), "runs": runs}
    recorded.RECORD.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {len(runs)} runs to {recorded.RECORD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
