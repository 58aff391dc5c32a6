"""A topic page's sections: the list its table of contents and search both read."""

from __future__ import annotations

from types import SimpleNamespace

from whylab.explorer.content.prose import render_prose
from whylab.explorer.content.sections import BLOCK_LEVEL, topic_sections
from whylab.explorer.experiment import T
from whylab.explorer.web.render import table_of_contents

SOURCE = """Before any heading.

## Fan-out

A value used twice.

{{ experiment:fan }}

### Summing

The buffer adds.

#### A detail

Still in Summing.

{{ experiment:other }}

## Next

More.
"""
EXPERIMENTS = {
    "fan": SimpleNamespace(title=T("Fan-out", "扇出"), description=T("Gradients add.", "梯度相加")),
    "other": SimpleNamespace(title=T("Twice", "两次"), description=T("Runs twice.", "运行两次")),
}


def test_sections_in_reading_order_with_the_text_under_each():
    sections = topic_sections(render_prose(SOURCE), EXPERIMENTS, "en")
    assert [(s.id, s.level) for s in sections] == [
        ("fan-out", 2), ("summing", 3), ("experiment-other", BLOCK_LEVEL), ("next", 2),
    ]  # fmt: skip
    by_id = {s.id: s for s in sections}
    # A block titled as its heading is no section of its own: its words join the heading's.
    assert by_id["fan-out"].text == "A value used twice. Gradients add."
    # A level-4 heading is not listed: its text stays in the section above it.
    assert by_id["summing"].text == "The buffer adds. A detail Still in Summing."
    assert by_id["experiment-other"].title == "Twice"
    assert by_id["experiment-other"].text == "Runs twice."
    assert "Before any heading" not in " ".join(s.text for s in sections)


def test_the_contents_are_the_sections_as_a_tree():
    toc = table_of_contents(topic_sections(render_prose(SOURCE), EXPERIMENTS, "en"))
    assert [(e.id, [(c.id, [g.id for g in c.children]) for c in e.children]) for e in toc] == [
        ("fan-out", [("summing", ["experiment-other"])]),
        ("next", []),
    ]
