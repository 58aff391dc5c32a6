"""A topic page's sections in reading order: what its table of contents lists and what a
search hit links to.

A section is a level-2 or level-3 heading of the prose, with the text under it up to
the next such heading, or an experiment or diagram block, with its description. Both
kinds are addressed by ids that are the same in both languages (a heading takes the
original's id, a block is ``experiment-NAME``), so a link to a section lands on it in
either language. A block titled with the words of the heading it follows is not a
section of its own: that heading already leads there, and the block's description is
read as part of the heading's section.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from whylab.explorer.content.prose import HtmlBlock, Placement, Prose, block_anchor
from whylab.explorer.experiment import Experiment, Lang

BLOCK_LEVEL = 0  # the level of an experiment or diagram block: under the heading before it


@dataclass(frozen=True)
class Section:
    """One section of a topic page in one language."""

    id: str  # the anchor on the page: a heading's id or a block's
    title: str
    level: int  # 2 or 3 for a heading, BLOCK_LEVEL for an experiment or diagram block
    text: str = ""  # plain text: the prose under a heading, or a block's description


def same_words(a: str, b: str) -> bool:
    """Whether two titles say the same words (case and punctuation aside)."""
    return re.findall(r"\w+", a.casefold()) == re.findall(r"\w+", b.casefold())


def topic_sections(
    prose: Prose, experiments: Mapping[str, Experiment], lang: Lang
) -> tuple[Section, ...]:
    """The sections of one language's page, in reading order (see the module docstring)."""
    body: dict[str, list[str]] = {}
    for passage in prose.passages:
        if passage.section and not passage.heading:
            body.setdefault(passage.section, []).append(passage.text)
    found: list[tuple[str, str, int]] = []  # (id, title, level)
    latest: tuple[str, str, int] | None = None  # the heading read last
    for segment in prose.segments:
        if isinstance(segment, HtmlBlock):
            for heading in segment.headings:
                latest = (heading.id, heading.text, heading.level)
                found.append(latest)
        elif isinstance(segment, Placement) and segment.name in experiments:
            experiment = experiments[segment.name]
            title, description = experiment.title.get(lang), experiment.description.get(lang)
            if latest is not None and same_words(latest[1], title):
                body.setdefault(latest[0], []).append(description)
                continue
            anchor = block_anchor(segment.kind, segment.name)
            found.append((anchor, title, BLOCK_LEVEL))
            body[anchor] = [description]
    return tuple(
        Section(id, title, level, " ".join(" ".join(body.get(id, [])).split()))
        for id, title, level in found
    )
