"""Colours, by CSS class, so the page's light and dark themes apply.

Series take ``s0``..``s7`` in two tiers of lightness (:func:`series_classes`); graph
groups take ``g0``..``g7``. A group's colour is the slot its diagram declares for it
(``GraphDiagram.group_colours``, so one dispatch key or kind of node keeps its colour
in every diagram that declares it), else a slot from a hash of its name; two groups of
one diagram never share a colour (:func:`group_classes`).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence

from whylab.explorer.experiment import GROUP_COLOURS, LineChart

PALETTE_SIZE = 8

# Series colours (CSS classes s0..s7) come in two tiers of lightness, four hues each:
# s0-s3 dark in the light theme (dim in the dark one), s4-s7 mid (bright). Every line
# has 3:1 contrast with the chart's background, and a line of one tier has 3:1 with
# a line of the other; two lines of one tier do not (WCAG's 3:1 leaves room for only
# two lightness levels beside a background), so a chart of two series takes one from
# each tier, and a chart of more tells same-tier lines apart by hue and dash.
TIER_SIZE = PALETTE_SIZE // 2
# Series drawn in several charts of a topic, beside different partners: their slots are
# fixed so that the tier rule never has to move them (any other name: from its hash).
SERIES_SLOTS: dict[str, int] = {
    "numpy.fft.fft": 5,  # fft: teal beside this page's FFT in every timing chart
    "radix-2 FFT (this page)": 2,
}


def series_tier(slot: int) -> int:
    return slot // TIER_SIZE


def series_classes(chart: LineChart) -> list[str]:
    """CSS class per series, from its English name: one name, one colour and dash in
    every chart of a topic where it can (two series of one chart never share one, the
    two series of a two-series chart are of different tiers, and a chart of more
    splits its series between the tiers as evenly as it can; where that moves a
    name to the other tier, it keeps its hue when that slot is free)."""
    names = list(dict.fromkeys(s.name.en for s in chart.series))
    # Fixed slots first, then by name, so the colours depend on which series a chart
    # holds, not on their order in the legend.
    names.sort(key=lambda name: (name not in SERIES_SLOTS, name))
    slots: dict[str, int] = {}
    for name in names:
        slot = SERIES_SLOTS.get(name, hashed_slot(name))
        tiers = [series_tier(taken) for taken in slots.values()]
        if tiers and name not in SERIES_SLOTS:
            wanted = 0 if tiers.count(0) < tiers.count(1) else 1
            if tiers.count(0) != tiers.count(1) and series_tier(slot) != wanted:
                slot = (slot + TIER_SIZE) % PALETTE_SIZE  # the same hue, in the other tier
        order = [slot] + [
            candidate
            for candidate in range(PALETTE_SIZE)
            if series_tier(candidate) == series_tier(slot) and candidate != slot
        ]
        order += [c for c in range(PALETTE_SIZE) if c not in order]
        slots[name] = next(c for c in order if c not in slots.values())
    return [f"s{slots[s.name.en]}" for s in chart.series]


def hashed_slot(name: str) -> int:
    """A colour slot from a hash of ``name``.

    A name ending in a number ("stage 2") takes the slot after "stage 1", so
    numbered groups get different colours (up to the palette's size).
    """
    numbered = re.fullmatch(r"(.*?)(\d+)", name)
    stem, number = (numbered.group(1), int(numbered.group(2))) if numbered else (name, 0)
    return (zlib.crc32(stem.encode()) + number) % PALETTE_SIZE


def group_classes(groups: Sequence[str], declared: Mapping[str, str]) -> dict[str, str]:
    """CSS class per group: the colour its diagram declares for it (``declared``, group ->
    one of GROUP_COLOURS), else its hashed slot unless a group before it took that.

    Two groups of one diagram never share a colour: declared groups are placed
    first, then the others in order, each moving on to the next free slot
    (while one is free).
    """
    classes: dict[str, str] = {}
    taken: set[int] = set()
    ordered = [g for g in groups if g in declared] + [g for g in groups if g not in declared]
    for group in ordered:
        slot = GROUP_COLOURS.index(declared[group]) if group in declared else hashed_slot(group)
        for step in range(PALETTE_SIZE):
            if (slot + step) % PALETTE_SIZE not in taken:
                slot = (slot + step) % PALETTE_SIZE
                break
        taken.add(slot)
        classes[group] = f"g{slot}"
    return {group: classes[group] for group in groups}
