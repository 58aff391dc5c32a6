"""Bilingual text: every string a reader sees is a :class:`Text`, English and Chinese.

Part of the topic SDK: topics import these names from :mod:`whylab.explorer.experiment`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")


@dataclass(frozen=True)
class Text:
    """A string in both languages."""

    en: str
    zh: str

    def __post_init__(self) -> None:
        if not self.en.strip() or not self.zh.strip():
            raise ValueError(f"Text needs both languages, got en={self.en!r} zh={self.zh!r}")

    def get(self, lang: Lang) -> str:
        return self.zh if lang == "zh" else self.en


def T(en: str, zh: str) -> Text:
    """Shorthand used by topic code: ``T("phase", "相位")``."""
    return Text(en, zh)


def in_language(value: str | Text, lang: Lang) -> str:
    """``value`` as readers of ``lang`` see it: a Text picks its language, a str stays as is.

    Check values use this: numbers and symbols ("≤ 1e-12", "mm → mm") read the
    same in every language and stay plain strings; anything with words is a Text.
    """
    return value.get(lang) if isinstance(value, Text) else value
