"""``whylab/topics/shared.py`` is the only home of the helpers several topics use.

A topic module that defines a function under a shared helper's name is a second
copy of it (three topics once each had their own ``agreement_check``, and three
the relative-error formula), so the name may be defined in shared.py alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

from whylab.topics import shared

TOPICS_DIR = Path(shared.__file__).parent


def defined_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def test_no_topic_redefines_a_shared_helper():
    helpers = {name for name in defined_functions(Path(shared.__file__)) if name[0] != "_"}
    assert {"relative_error", "agreement_check", "error_check", "ratio_check"} <= helpers
    copies = [
        f"{path.relative_to(TOPICS_DIR)}: {name}"
        for path in sorted(TOPICS_DIR.glob("*/*.py"))
        for name in sorted(defined_functions(path) & helpers)
    ]
    assert not copies, "helpers of whylab/topics/shared.py defined again:\n" + "\n".join(copies)
