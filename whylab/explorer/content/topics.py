"""Find, load and validate topic folders; build the registry the explorer serves.

A topic folder (format in ``whylab/topics/README.md``) is read once at start-up:
``meta.toml`` with paired English/Chinese fields, both prose files rendered to
HTML with every formula converted to MathML, and ``experiments.py`` imported for
its ``EXPERIMENTS`` list. Anything missing or unpaired raises :class:`TopicError`
with the folder and the field, so a half-translated topic never goes live.

The registry is also the only way a request reaches an experiment: the web app
looks names up here and never imports anything named by a visitor.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from whylab.explorer.content.mathml import MathError
from whylab.explorer.content.prose import (
    HeadingMismatch,
    Placement,
    Prose,
    join_wrapped_lines,
    render_prose,
)
from whylab.explorer.content.result_key import code_fingerprint
from whylab.explorer.content.search import SearchDoc, SearchIndex
from whylab.explorer.content.sections import Section, topic_sections
from whylab.explorer.experiment import LANGS, Experiment, Lang, Text

DEFAULT_TOPICS_DIR = Path(__file__).resolve().parent.parent.parent / "topics"

FOLDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
EXPERIMENT_NAME = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
TEXT_FIELDS = ("title", "question", "summary")
LIST_FIELDS = ("tags", "keywords")
OPTIONAL_LIST_FIELDS = ("synonyms",)  # the words readers search with: backprop, 步幅
# meta.toml's ``under_test``: the files, relative to the repository root (the folder that
# holds the ``whylab`` package), whose code the topic's experiments put under test; the
# mutation tester (whylab check --mutants) mutates exactly these.
REPO_ROOT = Path(__file__).resolve().parent.parent.parent.parent


class TopicError(ValueError):
    """A topic folder that is incomplete, unpaired or otherwise invalid."""


@dataclass(frozen=True)
class TopicMeta:
    """The metadata of a topic in one language."""

    title: str
    question: str
    summary: str
    tags: tuple[str, ...]
    keywords: tuple[str, ...]
    synonyms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Tag:
    """A tag in both languages; ``key`` (from the English name) is used in URLs."""

    key: str
    text: Text


@dataclass(frozen=True)
class Topic:
    slug: str
    folder: Path
    order: int
    meta: dict[Lang, TopicMeta]
    prose: dict[Lang, Prose]
    experiments: dict[str, Experiment]
    source_hash: str  # code_fingerprint(): part of the cache key, so edited code recomputes
    under_test: tuple[str, ...] = ()  # meta.toml's under_test, repository-relative paths

    @property
    def tags(self) -> tuple[Tag, ...]:
        return tuple(
            Tag(tag_key(en), Text(en, zh))
            for en, zh in zip(self.meta["en"].tags, self.meta["zh"].tags, strict=True)
        )

    def placements(self) -> tuple[Placement, ...]:
        return tuple(s for s in self.prose["en"].segments if isinstance(s, Placement))

    def sections(self, lang: Lang) -> tuple[Section, ...]:
        """The page's sections in ``lang``: its table of contents, and what search links to."""
        return topic_sections(self.prose[lang], self.experiments, lang)

    def search_docs(self) -> list[SearchDoc]:
        docs = []
        for lang in LANGS:
            meta = self.meta[lang]
            experiment_text = " ".join(
                f"{e.title.get(lang)} {e.description.get(lang)}" for e in self.experiments.values()
            )
            docs.append(
                SearchDoc(
                    slug=self.slug,
                    lang=lang,
                    title=meta.title,
                    question=meta.question,
                    summary=meta.summary,
                    keywords=meta.keywords,
                    tags=meta.tags,
                    text=f"{self.prose[lang].text} {experiment_text}",
                    synonyms=meta.synonyms,
                    sections=self.sections(lang),
                )
            )
        return docs


def tag_key(english_tag: str) -> str:
    """URL-safe key of a tag, e.g. ``"Signal processing"`` -> ``"signal-processing"``."""
    return re.sub(r"[^a-z0-9]+", "-", english_tag.lower()).strip("-") or "tag"


def slug_of(folder: Path) -> str:
    return folder.name.replace("_", "-")


# ---------------------------------------------------------------- experiments.py


def _module_name(folder: Path) -> str:
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:10]
    return f"whylab_topic_{folder.name}_{digest}"


def import_experiments(folder: Path) -> dict[str, Experiment]:
    """Import ``folder/experiments.py`` and return its experiments by name.

    Used by the loader and by the worker processes; each process imports a
    topic module at most once.
    """
    path = folder / "experiments.py"
    if not path.is_file():
        raise TopicError(f"{folder.name}: experiments.py is missing")
    name = _module_name(folder)
    module: ModuleType | None = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    declared = getattr(module, "EXPERIMENTS", None)
    if not isinstance(declared, (list, tuple)) or not declared:
        raise TopicError(f"{folder.name}: experiments.py needs a non-empty EXPERIMENTS list")
    experiments: dict[str, Experiment] = {}
    for item in declared:
        if not isinstance(item, Experiment):
            raise TopicError(f"{folder.name}: EXPERIMENTS holds {item!r}, not an @experiment")
        if not EXPERIMENT_NAME.match(item.name):
            raise TopicError(
                f"{folder.name}: experiment name {item.name!r} is not a-z, 0-9, _ or -"
            )
        if item.name in experiments:
            raise TopicError(f"{folder.name}: two experiments are named {item.name!r}")
        experiments[item.name] = item
    return experiments


# ---------------------------------------------------------------- meta.toml


def _read_under_test(folder: Path, data: dict) -> tuple[str, ...]:
    """meta.toml's optional ``under_test``: a list of existing files under the repository root."""
    value = data.get("under_test", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise TopicError(f"{folder.name}/meta.toml: under_test must be a list of file paths")
    for relative in value:
        path = (REPO_ROOT / relative).resolve()
        if not path.is_relative_to(REPO_ROOT) or not path.is_file():
            raise TopicError(
                f"{folder.name}/meta.toml: under_test names {relative!r}, which is not a file "
                f"under {REPO_ROOT}"
            )
    return tuple(value)


def _read_meta(folder: Path) -> tuple[int, dict[Lang, TopicMeta], tuple[str, ...]]:
    path = folder / "meta.toml"
    if not path.is_file():
        raise TopicError(f"{folder.name}: meta.toml is missing")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise TopicError(f"{folder.name}/meta.toml: {error}") from None
    unknown = set(data) - {"slug", "order", "under_test", *LANGS}
    if unknown:
        raise TopicError(f"{folder.name}/meta.toml: unknown keys {sorted(unknown)}")
    if data.get("slug") != slug_of(folder):
        raise TopicError(
            f"{folder.name}/meta.toml: slug must be {slug_of(folder)!r}, got {data.get('slug')!r}"
        )
    order = data.get("order")
    if not isinstance(order, int) or isinstance(order, bool):
        raise TopicError(f"{folder.name}/meta.toml: order must be an integer")
    meta: dict[Lang, TopicMeta] = {}
    for lang in LANGS:
        table = data.get(lang)
        if not isinstance(table, dict):
            raise TopicError(f"{folder.name}/meta.toml: the [{lang}] table is missing")
        unknown = set(table) - {*TEXT_FIELDS, *LIST_FIELDS, *OPTIONAL_LIST_FIELDS}
        if unknown:
            raise TopicError(f"{folder.name}/meta.toml [{lang}]: unknown keys {sorted(unknown)}")
        for field in TEXT_FIELDS:
            value = table.get(field)
            if not isinstance(value, str) or not value.strip():
                raise TopicError(f"{folder.name}/meta.toml [{lang}]: {field} is missing or empty")
        for field in (*LIST_FIELDS, *OPTIONAL_LIST_FIELDS):
            value = table.get(field, [] if field in OPTIONAL_LIST_FIELDS else None)
            if not isinstance(value, list) or not all(
                isinstance(v, str) and v.strip() for v in value
            ):
                raise TopicError(
                    f"{folder.name}/meta.toml [{lang}]: {field} must be a list of non-empty strings"
                )
        meta[lang] = TopicMeta(
            title=table["title"].strip(),
            question=table["question"].strip(),
            summary=join_wrapped_lines(table["summary"]),
            tags=tuple(t.strip() for t in table["tags"]),
            keywords=tuple(k.strip() for k in table["keywords"]),
            synonyms=tuple(s.strip() for s in table.get("synonyms", [])),
        )
    if len(meta["en"].tags) != len(meta["zh"].tags):
        raise TopicError(
            f"{folder.name}/meta.toml: [en] has {len(meta['en'].tags)} tags but [zh] has "
            f"{len(meta['zh'].tags)}; tags are paired by position"
        )
    return order, meta, _read_under_test(folder, data)


# ---------------------------------------------------------------- one topic


def _check_placements(folder: Path, prose: dict[Lang, Prose], experiments: dict) -> None:
    placed = {lang: [s for s in prose[lang].segments if isinstance(s, Placement)] for lang in LANGS}
    if placed["en"] != placed["zh"]:
        raise TopicError(
            f"{folder.name}: en.md and zh.md must place the same experiments and diagrams in the "
            f"same order; en has {[p.name for p in placed['en']]}, zh has "
            f"{[p.name for p in placed['zh']]}"
        )
    for placement in placed["en"]:
        if placement.name not in experiments:
            raise TopicError(
                f"{folder.name}: prose places {placement.kind}:{placement.name}, "
                f"but experiments.py has only {sorted(experiments)}"
            )
    names = [p.name for p in placed["en"]]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TopicError(f"{folder.name}: placed more than once: {repeated}")
    never_placed = set(experiments) - {p.name for p in placed["en"]}
    if never_placed:
        raise TopicError(
            f"{folder.name}: experiments never placed in the prose: {sorted(never_placed)}"
        )


def load_topic(folder: Path) -> Topic:
    """Load and validate one topic folder (raises :class:`TopicError` or :class:`MathError`)."""
    folder = Path(folder)
    if not FOLDER_NAME.match(folder.name):
        raise TopicError(f"{folder.name}: folder names use a-z, 0-9 and _")
    order, meta, under_test = _read_meta(folder)
    prose: dict[Lang, Prose] = {}
    for lang in LANGS:
        path = folder / f"{lang}.md"
        if not path.is_file():
            raise TopicError(f"{folder.name}: {lang}.md is missing")
        source = path.read_text(encoding="utf-8")
        if not source.strip():
            raise TopicError(f"{folder.name}: {lang}.md is empty")
        # The translation's headings take the English ids, so #anchors are the same in both.
        original = prose["en"].heading_ids if lang != "en" else None
        try:
            prose[lang] = render_prose(
                source, where=f"{folder.name}/{lang}.md", heading_ids=original
            )
        except HeadingMismatch as error:
            raise TopicError(
                f"{folder.name}/{lang}.md: {error}; headings are paired with en.md's by position"
            ) from None
    experiments = import_experiments(folder)
    _check_placements(folder, prose, experiments)
    return Topic(
        slug_of(folder), folder, order, meta, prose, experiments, code_fingerprint(folder),
        under_test,
    )


def discover_topic_folders(topics_dir: Path = DEFAULT_TOPICS_DIR) -> list[Path]:
    """Every sub-folder of ``topics_dir`` that has a ``meta.toml``."""
    return sorted(p.parent for p in Path(topics_dir).glob("*/meta.toml"))


# ---------------------------------------------------------------- the registry


class TopicRegistry:
    """All topics of one topics folder, in home-page order, with their search index."""

    def __init__(self, topics: Iterable[Topic], topics_dir: Path):
        self.topics_dir = Path(topics_dir)
        ordered = sorted(topics, key=lambda t: (t.order, t.slug))
        self.topics: dict[str, Topic] = {t.slug: t for t in ordered}
        self.search_index = SearchIndex(doc for t in ordered for doc in t.search_docs())

    def __iter__(self):
        return iter(self.topics.values())

    def __len__(self) -> int:
        return len(self.topics)

    def get(self, slug: str) -> Topic | None:
        return self.topics.get(slug)

    def tags(self) -> list[Tag]:
        """Every tag used by some topic, once, in order of first use."""
        seen: dict[str, Tag] = {}
        for topic in self:
            for tag in topic.tags:
                seen.setdefault(tag.key, tag)
        return list(seen.values())


def load_registry(topics_dir: Path | None = None) -> TopicRegistry:
    """Load every topic under ``topics_dir``; one error message lists every broken topic."""
    topics_dir = Path(topics_dir or DEFAULT_TOPICS_DIR)
    topics, problems = [], []
    for folder in discover_topic_folders(topics_dir):
        try:
            topics.append(load_topic(folder))
        except (TopicError, MathError) as error:
            problems.append(str(error))
    if problems:
        raise TopicError("broken topics:\n  " + "\n  ".join(problems))
    return TopicRegistry(topics, topics_dir)
