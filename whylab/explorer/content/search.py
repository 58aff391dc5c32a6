"""Bilingual full-text search over topics: ranked BM25 with field weights.

Every topic has one :class:`SearchDoc` per language. The index merges the two
languages of a topic into a single searchable record, so a Chinese query finds a
topic while the reader browses in English and vice versa, and a mixed query
("FFT 蝶形") collects evidence from both. Each topic appears at most once in the
results; its title and snippet are given in the language the reader asked for.

Tokens
    * Latin-script words (letters and digits) are case-folded, accents removed,
      and simple English plurals stripped, so "Gradients" finds "gradient" and
      "FFTs" finds "FFT". ``c++`` and ``c#`` keep their suffix. Dots, quotes and
      other punctuation separate words, so ``torch.matmul`` matches a page that
      mentions ``torch.matmul`` or just ``matmul``.
    * Chinese (and other CJK) text has no spaces, so each run of CJK characters
      becomes its single characters *and* its overlapping character pairs
      ("微分方程" -> 微 分 方 程 微分 分方 方程). One- and two-character words
      (流, 梯度) are then found without a word segmenter; pairs make longer words
      rank above pages that merely share characters.
    * Everything else (emoji, control characters, symbols) is ignored, and a
      handful of English function words ("the", "of", ...) are dropped. A query
      with no tokens left returns no hits -- never "everything matches".

Ranking
    Topics that contain more of the query's words come first: "chain rule" ranks
    a topic about the chain rule above one whose title says "rules" and whose
    text never says "chain". Among topics that match as much of the query,
    those whose title or question contains a query word come first (a title
    match counting twice), whatever the prose says; within that, BM25 (k1 = 1.2,
    b = 0.75) is computed per field with that field's own length normalisation
    and added up with field weights (title > question, keywords and synonyms >
    summary and tags > body text). The last query word also matches the indexed
    words it begins, since search runs as the reader types. Document frequency is counted over
    topics, so a word that appears in every topic carries almost no weight.

Matching
    A topic is a hit only if it contains at least one whole query term: a word, a
    CJK character pair, or a one-character CJK query. Sharing one character of a
    longer Chinese word (形 of 蝶形) is not enough on its own.

Sections
    A hit also names the section of the topic that matched best (a heading of the
    prose or an experiment block, by an id that is the same in both languages), so
    the reader lands on it. Sections are chosen within a topic, after the topics
    are ranked, and never change the topics' order: those that match in the
    requested language first, then by coverage, heading matches and BM25 over
    heading and text, as for topics; a section whose own text (not only its
    heading) says a query word in the requested language is preferred, so that its
    snippet shows the word. The snippet then comes from that section's text (none
    where only its heading, or only the other language, says the words; the
    heading's matched words are marked too); a topic with no matching section gets
    a snippet from its whole text.

Snippets are plain text (the caller escapes them for HTML): about 150 display
columns of the requested language's body text around the densest cluster of
matched words (a CJK character counts two columns), with the matched words'
spans for highlighting; empty when that language's text has no match (the
card shows the summary anyway). LaTeX commands in them are made readable
(``\\varphi`` -> φ, ``\\frac{a}{b}`` -> (a)/(b)).
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from whylab.explorer.content.sections import Section

__all__ = ["SearchDoc", "Hit", "SearchIndex", "tokenize"]

MAX_QUERY_CHARS = 200
MAX_QUERY_TOKENS = 32
MAX_LIMIT = 100
SNIPPET_WIDTH = 150  # display columns of a snippet (a CJK character is two)
SNIPPET_LEAD_WIDTH = 40  # columns shown before the first matched word

BM25_K1 = 1.2
BM25_B = 0.75

# Field weights: a match in the title says more about the topic than one in the body.
FIELD_WEIGHTS: dict[str, float] = {
    "title": 5.0,
    "question": 3.0,
    "keywords": 3.0,
    "synonyms": 3.0,
    "summary": 2.0,
    "tags": 2.0,
    "text": 1.0,
}

# A section's heading says more about it than its text does.
SECTION_FIELD_WEIGHTS: dict[str, float] = {"title": 3.0, "text": 1.0}

# In a query, a CJK run of two or more characters contributes its pairs at full
# weight and its single characters at this weight, so "梯度" prefers pages with
# the word 梯度 over pages that merely contain 梯 and 度 somewhere.
CJK_UNIGRAM_QUERY_WEIGHT = 0.4

# The last word of a query also matches indexed words it begins (search as you
# type), at this weight, so a finished word still ranks its exact matches first.
PREFIX_WEIGHT = 0.8
MIN_PREFIX_CHARS = 2
MAX_COMPLETIONS = 24

STOPWORDS = frozenset(
    "a an and are as at be by do does for from how in is it its of on or the to what "
    "when where which why with".split()
)

_CJK_RANGES = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
_TOKEN_RE = re.compile(rf"(?P<cjk>[{_CJK_RANGES}]+)|(?P<word>[^\W_{_CJK_RANGES}]+(?:\+\+|#)?)")
_WORD_RE = re.compile(rf"[^\W_{_CJK_RANGES}]+(?:\+\+|#)?")
_CJK_RE = re.compile(rf"[{_CJK_RANGES}]+")


@dataclass(frozen=True)
class SearchDoc:
    """One topic in one language, as the search index sees it.

    ``text`` is the page's prose as plain text (math may stay as LaTeX source).
    """

    slug: str
    lang: str
    title: str
    question: str
    summary: str
    keywords: tuple[str, ...]
    tags: tuple[str, ...]
    text: str
    synonyms: tuple[str, ...] = ()  # the words readers use for it (backprop, 步幅)
    sections: tuple[Section, ...] = ()  # the page's sections, ids the same in every language


@dataclass(frozen=True)
class Hit:
    """One search result; ``title`` and ``snippet`` are in the requested language.

    Hits are ranked by ``coverage`` (how many of the query's words the topic
    contains anywhere, the word being typed counted once whole or as a
    completion), then ``headline`` (query words found in the title, counted
    twice, or the question) and then by the BM25 ``score``. ``marks`` are the
    (start, end) character spans of matched words in ``snippet``,
    for highlighting. The snippet is empty when that language's text has no match
    (the card already shows the summary). ``section`` is the id of the section that
    matched best ("" when none did), ``section_title`` its title in the requested
    language with ``section_marks`` on its matched words; the snippet then comes from
    that section.
    """

    slug: str
    score: float
    title: str
    snippet: str
    marks: tuple[tuple[int, int], ...] = ()
    headline: float = 0.0
    coverage: int = 0
    section: str = ""
    section_title: str = ""
    section_marks: tuple[tuple[int, int], ...] = ()


# ---------------------------------------------------------------- tokens


@functools.lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """Case-fold one character and drop its accents (full-width forms become ASCII)."""
    decomposed = unicodedata.normalize("NFKD", char)
    unaccented = "".join(c for c in decomposed if not unicodedata.combining(c))
    # NFC puts back together what NFKD split apart for other reasons (Hangul syllables).
    return unicodedata.normalize("NFC", unaccented).casefold()


# Characters that fold one-to-one with str.lower(): ASCII, basic Greek, CJK punctuation and
# ideographs. Runs of them are folded in one C call; anything else goes character by character.
_SIMPLE_RUN = re.compile(
    r"[\x00-\x7f\u0391-\u03a9\u03b1-\u03c9\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff]+"
)


def _fold(text: str) -> tuple[str, list[int]]:
    """Fold ``text`` for matching; also return, per folded character, its source index."""
    if text.isascii():
        return text.lower(), list(range(len(text)))
    folded: list[str] = []
    source: list[int] = []
    done = 0

    def fold_slowly(stop: int) -> None:
        for index in range(done, stop):  # usually empty or one full-width punctuation mark
            piece = _fold_char(text[index])
            folded.append(piece)
            source.extend([index] * len(piece))

    for run in _SIMPLE_RUN.finditer(text):
        fold_slowly(run.start())
        folded.append(run.group().lower())
        source.extend(range(run.start(), run.end()))
        done = run.end()
    fold_slowly(len(text))
    return "".join(folded), source


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Strip a simple English plural or possessive: gradients -> gradient, ffts -> fft."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _tokens_with_spans(text: str) -> list[tuple[str, int, int, bool]]:
    """Tokens of ``text`` as (token, start, end, is_cjk_unigram_of_longer_run).

    ``start``/``end`` index the original ``text``, so snippets can be cut from it.
    """
    folded, source = _fold(text)
    tokens: list[tuple[str, int, int, bool]] = []
    for match in _TOKEN_RE.finditer(folded):
        start, end = match.start(), match.end()
        origin_start, origin_end = source[start], source[end - 1] + 1
        if match.lastgroup == "word":
            word = match.group()
            if word in STOPWORDS:
                continue
            tokens.append((_stem(word), origin_start, origin_end, False))
            continue
        run = match.group()
        for offset, char in enumerate(run):
            position = source[start + offset]
            tokens.append((char, position, position + 1, len(run) > 1))
        for offset in range(len(run) - 1):
            first, second = source[start + offset], source[start + offset + 1]
            tokens.append((run[offset : offset + 2], first, second + 1, False))
    return tokens


def tokenize(text: str) -> list[str]:
    """The search tokens of ``text`` (words, CJK characters and CJK character pairs)."""
    return [token for token, _, _, _ in _tokens_with_spans(text)]


def _query_terms(query: str) -> dict[str, float]:
    """Query tokens with their weights: at most MAX_QUERY_TOKENS distinct terms."""
    terms: dict[str, float] = {}
    for token, _, _, is_minor_unigram in _tokens_with_spans(query[:MAX_QUERY_CHARS]):
        weight = CJK_UNIGRAM_QUERY_WEIGHT if is_minor_unigram else 1.0
        if token in terms:
            terms[token] = max(terms[token], weight)
        elif len(terms) < MAX_QUERY_TOKENS:
            terms[token] = weight
    return terms


# ---------------------------------------------------------------- snippets

_SPACES = re.compile(r"\s+")
_LATEX_SYMBOLS = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "theta": "θ",
    "lambda": "λ",
    "mu": "μ",
    "pi": "π",
    "sigma": "σ",
    "tau": "τ",
    "varphi": "φ",
    "phi": "φ",
    "omega": "ω",
    "Omega": "Ω",
    "Sigma": "Σ",
    "sum": "Σ",
    "infty": "∞",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "cdot": "·",
    "times": "×",
    "approx": "≈",
    "ne": "≠",
    "to": "→",
    "ldots": "…",
    "cdots": "…",
}
_LATEX_COMMAND = re.compile(r"\\([A-Za-z]+|[,;:! ])")


_LATEX_FRACTION = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
_LATEX_DROPPED = frozenset({"left", "right", "mathrm", "text", "operatorname"})


def _readable_latex(match: re.Match[str]) -> str:
    """One LaTeX command as a reader would say it: \\varphi -> φ, \\sin -> sin."""
    name = match.group(1)
    if not name.isalpha() or name in ("quad", "qquad"):
        return " "  # spacing commands such as \\, and \\quad
    if name in _LATEX_DROPPED:
        return ""
    return _LATEX_SYMBOLS.get(name, name)


def _clean_snippet(text: str) -> str:
    """Plain, printable snippet text: LaTeX commands made readable, whitespace collapsed."""
    text = _LATEX_FRACTION.sub(r"(\1)/(\2)", text)
    text = _LATEX_COMMAND.sub(_readable_latex, text)
    printable = "".join(c if c.isprintable() else " " for c in text)
    return _SPACES.sub(" ", printable).strip()


# ---------------------------------------------------------------- index


@dataclass
class _Field:
    """Term counts of one field of one topic (both languages together)."""

    counts: Counter[str]
    length: int


@dataclass
class _Section:
    """One section of one topic: its words in both languages together, and per language."""

    id: str
    titles: dict[str, str]  # by language
    texts: dict[str, str]
    fields: dict[str, _Field]  # "title" and "text", both languages together
    words: dict[str, tuple[set[str], set[str]]]  # per language: the tokens of title, text


def _counted(texts: Iterable[str]) -> _Field:
    """The term counts of ``texts`` together, as one field."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(tokenize(text))
    return _Field(counts, sum(counts.values()))


def _coverage(present: set[str], typed: set[str], prefix: str, completions) -> int:
    """How many of the query's words are ``present``: each typed word, and the word being
    typed once, whether whole or only as a completion."""
    completed = prefix not in present and bool(present & completions.keys())
    return len(present & typed) + (1 if completed else 0)


class SearchIndex:
    """A BM25 index over topics in every language; see the module docstring."""

    def __init__(self, docs: Iterable[SearchDoc]):
        self._docs: dict[str, dict[str, SearchDoc]] = {}
        for doc in docs:
            languages = self._docs.setdefault(doc.slug, {})
            if doc.lang in languages:
                raise ValueError(
                    f"SearchIndex: duplicate document for slug {doc.slug!r} "
                    f"in language {doc.lang!r}"
                )
            languages[doc.lang] = doc

        self._fields: dict[str, dict[str, _Field]] = {}
        document_frequency: Counter[str] = Counter()
        for slug, languages in self._docs.items():
            fields = {name: self._field(languages.values(), name) for name in FIELD_WEIGHTS}
            self._fields[slug] = fields
            seen: set[str] = set()
            for field in fields.values():
                seen.update(field.counts)
            document_frequency.update(seen)

        self._average_length = {
            name: max(
                1.0, sum(f[name].length for f in self._fields.values()) / max(1, len(self._fields))
            )
            for name in FIELD_WEIGHTS
        }
        topic_count = len(self._docs)
        # The "plus one" BM25 idf: always positive, small for words every topic uses.
        self._idf = {
            term: math.log(1.0 + (topic_count - df + 0.5) / (df + 0.5))
            for term, df in document_frequency.items()
        }
        # Latin-script words in order, for prefix matching of the word being typed.
        self._words = sorted(term for term in self._idf if _WORD_RE.fullmatch(term))
        self._sections = {
            slug: self._index_sections(languages) for slug, languages in self._docs.items()
        }
        every_section = [section for found in self._sections.values() for section in found]
        self._section_length = {
            name: max(
                1.0, sum(s.fields[name].length for s in every_section) / max(1, len(every_section))
            )
            for name in SECTION_FIELD_WEIGHTS
        }

    @staticmethod
    def _index_sections(languages: dict[str, SearchDoc]) -> list[_Section]:
        """A topic's sections, each language's paired with the others' by id."""
        by_id: dict[str, _Section] = {}
        for lang, doc in languages.items():
            for section in doc.sections:
                found = by_id.setdefault(section.id, _Section(section.id, {}, {}, {}, {}))
                found.titles[lang], found.texts[lang] = section.title, section.text
        for found in by_id.values():
            found.fields = {
                "title": _counted(found.titles.values()),
                "text": _counted(found.texts.values()),
            }
            found.words = {
                lang: (set(tokenize(found.titles[lang])), set(tokenize(found.texts[lang])))
                for lang in found.titles
            }
        return list(by_id.values())

    @staticmethod
    def _field(docs: Iterable[SearchDoc], name: str) -> _Field:
        values = (getattr(doc, name) for doc in docs)
        return _counted(" ; ".join(v) if isinstance(v, tuple) else v for v in values)

    def __len__(self) -> int:
        return len(self._docs)

    def search(self, query: str, lang: str = "en", limit: int = 20) -> list[Hit]:
        """Topics matching ``query``, best first, at most ``limit`` (capped at 100).

        Never raises on odd input: a query longer than 200 characters is cut, and
        a query with nothing searchable in it returns ``[]``.
        """
        if not isinstance(query, str) or limit <= 0:
            return []
        terms = _query_terms(query)
        typed = set(terms)  # the query's own words, before completing the last one
        prefix, completions = self._completions(query, terms)
        terms.update(completions)
        terms = {term: weight for term, weight in terms.items() if term in self._idf}
        if not terms:
            return []

        # A topic must contain at least one whole query term (a word, a CJK pair, or a
        # one-character CJK query) or a completion of the word being typed; sharing a
        # stray character of a longer Chinese word is not a match, though it still adds
        # to the score of topics that are.
        primary = [term for term, weight in terms.items() if weight >= PREFIX_WEIGHT]
        scored = []
        for slug, fields in self._fields.items():
            if not any(term in field.counts for term in primary for field in fields.values()):
                continue
            # A match in the title, then one in the question, outranks any amount of prose.
            headline = sum(
                weight * (2 if term in fields["title"].counts else 1)
                for term, weight in terms.items()
                if term in fields["title"].counts or term in fields["question"].counts
            )
            # How much of the query the topic contains, anywhere: each of its words, the
            # word being typed counted once whether whole or only as a completion.
            present = {t for t in terms if any(t in field.counts for field in fields.values())}
            coverage = _coverage(present, typed, prefix, completions)
            scored.append((coverage, headline, self._score(fields, terms, completions), slug))
        scored.sort(key=lambda item: (-item[0], -item[1], -item[2], item[3]))

        hits = []
        for coverage, headline, score, slug in scored[: min(limit, MAX_LIMIT)]:
            doc = self._doc_in(slug, lang)
            section = self._best_section(slug, lang, terms, (typed, prefix, completions), primary)
            if section is None:
                snippet = self._snippet(doc.text, terms)
                hit = Hit(slug, score, doc.title, snippet, _marks(snippet, primary), headline,
                          coverage)  # fmt: skip
            else:
                title, text = section.titles.get(doc.lang, ""), section.texts.get(doc.lang, "")
                # Around the section's own whole-word matches: none where only its heading,
                # or only the other language, says the words.
                snippet = self._snippet(text, {t: terms[t] for t in primary})
                hit = Hit(
                    slug, score, doc.title, snippet, _marks(snippet, primary), headline, coverage,
                    section.id, title, _marks(title, primary),
                )  # fmt: skip
            hits.append(hit)
        return hits

    def _best_section(
        self, slug: str, lang: str, terms: dict[str, float], query, primary: list[str]
    ) -> _Section | None:
        """The topic's section that matches ``terms`` best, or None if none has a whole term.

        Sections whose text says a query word in the requested language come first (their
        snippet shows it); then, as for topics, how much of the query they contain and how
        much of it their heading says; then those whose heading says it in the requested
        language; then BM25 over heading and text.
        """
        typed, prefix, completions = query
        best, best_key = None, None
        for section in self._sections[slug]:
            fields = section.fields
            present = {
                t for t in terms if t in fields["title"].counts or t in fields["text"].counts
            }
            if not present.intersection(primary):
                continue
            title_words, text_words = section.words.get(lang, (set(), set()))
            in_text, in_title = (
                bool(text_words.intersection(primary)),
                bool(title_words.intersection(primary)),
            )
            heading = sum(w for t, w in terms.items() if t in fields["title"].counts)
            score = self._score(
                fields, terms, completions, SECTION_FIELD_WEIGHTS, self._section_length
            )
            coverage = _coverage(present, typed, prefix, completions)
            key = (in_text, coverage, heading, in_title, score)
            if best_key is None or key > best_key:
                best, best_key = section, key
        return best

    def _completions(self, query: str, terms: dict[str, float]) -> tuple[str, dict[str, float]]:
        """The query's last word and the indexed words it begins (``autog`` -> autograd).

        Search runs as the reader types, so the last word is usually unfinished.
        Only Latin-script words of two or more letters are completed; Chinese
        already matches by single characters and pairs.
        """
        words = _WORD_RE.findall(_fold(query[:MAX_QUERY_CHARS])[0])
        if not words or len(words[-1]) < MIN_PREFIX_CHARS:
            return "", {}
        prefix = words[-1]
        found: dict[str, float] = {}
        start = bisect.bisect_left(self._words, prefix)
        for word in self._words[start : start + MAX_COMPLETIONS]:
            if not word.startswith(prefix):
                break
            if word not in terms:
                found[word] = PREFIX_WEIGHT
        return prefix, found

    def _score(
        self,
        fields: dict[str, _Field],
        terms: dict[str, float],
        completions=frozenset(),
        weights: dict[str, float] = FIELD_WEIGHTS,
        average_length: dict[str, float] | None = None,
    ) -> float:
        """BM25 over the fields, added up per term; the completions of the word being typed
        stand for one word, so only the best of them counts (``autog`` must not score a
        page for autograd and AutogradCPU both). Topics by default; a section's heading and
        text with ``weights`` and ``average_length`` of their own."""
        per_term: Counter[str] = Counter()
        average_length = average_length or self._average_length
        for name, weight in weights.items():
            field = fields[name]
            if not field.length:
                continue
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * field.length / average_length[name])
            for term, term_weight in terms.items():
                tf = field.counts.get(term, 0)
                if tf:
                    saturation = tf * (BM25_K1 + 1.0) / (tf + norm)
                    per_term[term] += weight * term_weight * self._idf[term] * saturation
        whole = sum(score for term, score in per_term.items() if term not in completions)
        completed = [score for term, score in per_term.items() if term in completions]
        return whole + max(completed, default=0.0)

    def _doc_in(self, slug: str, lang: str) -> SearchDoc:
        """The topic's document in ``lang``, else English, else any language it has."""
        languages = self._docs[slug]
        return languages.get(lang) or languages.get("en") or next(iter(languages.values()))

    def _snippet(self, text: str, terms: dict[str, float]) -> str:
        """A window of ``text`` around the densest cluster of matched terms ("" if none)."""
        matches = _term_spans(text, terms)
        if not matches:
            return ""

        best_start, best_end, best_value = 0, 0, -1.0
        for index, (start, end, _) in enumerate(matches):
            window_end = start + SNIPPET_WIDTH // 2  # characters: a CJK-safe underestimate
            distinct = set()
            for later_start, _, token in matches[index:]:
                if later_start >= window_end:
                    break
                distinct.add(token)
            value = sum(self._idf[token] * terms[token] for token in distinct)
            if value > best_value:
                best_start, best_end, best_value = start, end, value
        return _clean_snippet(_shorten(text, best_start, best_end))


def _term_spans(text: str, terms: dict[str, float]) -> list[tuple[int, int, str]]:
    """(start, end, term) of every occurrence of a query term in ``text``, in text order.

    Gives the same matches as tokenizing the whole text, but CJK terms are found
    by substring search, which is much faster than making every character pair.
    """
    folded, source = _fold(text)
    spans = []
    for match in _WORD_RE.finditer(folded):
        word = match.group()
        if word in STOPWORDS:
            continue
        token = _stem(word)
        if token in terms:
            spans.append((source[match.start()], source[match.end() - 1] + 1, token))
    for term in terms:
        if not _CJK_RE.fullmatch(term):
            continue
        position = folded.find(term)
        while position != -1:
            spans.append((source[position], source[position + len(term) - 1] + 1, term))
            position = folded.find(term, position + 1)
    spans.sort()
    return spans


def _marks(snippet: str, terms: Iterable[str]) -> tuple[tuple[int, int], ...]:
    """Spans of whole query terms in ``snippet``, overlapping ones merged (CJK pairs)."""
    merged: list[list[int]] = []
    for start, end, _ in _term_spans(snippet, dict.fromkeys(terms, 1.0)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((start, end) for start, end in merged)


def _width(char: str) -> int:
    """Display width: CJK and other wide characters take two columns."""
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _shorten(text: str, start: int, end: int) -> str:
    """About SNIPPET_WIDTH columns of ``text`` around [start, end), cut at spaces.

    Widths are counted in display columns so a Chinese snippet is as wide on the
    page as an English one.
    """
    window_start, used = start, 0
    while window_start > 0 and used < SNIPPET_LEAD_WIDTH:
        window_start -= 1
        used += _width(text[window_start])
    window_end = start
    while window_end < len(text) and (used < SNIPPET_WIDTH or window_end < end):
        used += _width(text[window_end])
        window_end += 1
    # Latin text: cut at word boundaries. CJK text has no spaces and can be cut anywhere.
    if window_start > 0:
        space = text.find(" ", window_start, start)
        if space != -1:
            window_start = space + 1
    if window_end < len(text):
        space = text.rfind(" ", end, window_end)
        if space != -1:
            window_end = space
    prefix = "…" if window_start > 0 else ""
    suffix = "…" if window_end < len(text) else ""
    return prefix + text[window_start:window_end].strip() + suffix
