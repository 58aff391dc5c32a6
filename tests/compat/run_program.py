"""Run one corpus program with ``torch`` or with whylab standing in for it.

``python tests/compat/run_program.py whylab PROGRAM.py`` installs an import hook
that answers ``import torch`` (and ``torch.nn``, ``torch.utils.data``, ...) with
the matching whylab module, then runs the program unchanged -- module aliasing
only, as a reader would try it. ``torch`` as the first argument runs it under
real PyTorch. The program's standard output is what the tests compare.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys


class WhylabAsTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import hook: ``torch`` and ``torch.X`` resolve to ``whylab`` and ``whylab.X``."""

    def find_spec(self, fullname, path, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("whylab" + spec.name[len("torch") :])

    def exec_module(self, module):
        pass  # the whylab module is already executed


def main(argv: list[str]) -> None:
    framework, program = argv
    if framework == "whylab":
        sys.meta_path.insert(0, WhylabAsTorch())
    elif framework != "torch":
        raise SystemExit(f"framework must be torch or whylab, got {framework!r}")
    sys.argv = [program]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
