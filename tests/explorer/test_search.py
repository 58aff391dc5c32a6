"""Tests for the bilingual BM25 search: ranking, Chinese words, plurals, hostile queries."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whylab.explorer.content import search
from whylab.explorer.content.search import MAX_QUERY_CHARS, SearchDoc, SearchIndex, tokenize
from whylab.explorer.content.sections import Section

TOPICS_DIR = Path(__file__).resolve().parents[2] / "whylab" / "topics"


def doc(slug, lang, title, question="", summary="", keywords=(), tags=(), text=""):
    return SearchDoc(slug, lang, title, question, summary, tuple(keywords), tuple(tags), text)


CORPUS = [
    doc("autograd", "en", "How autograd records a graph",
        "Why does backward need a graph?", "Reverse-mode differentiation on a recorded graph.",
        ["gradient", "backward", "chain rule"], ["autograd"],
        "Each operation records a node. Calling backward walks the graph in reverse and "
        "accumulates gradients into leaves. torch.matmul records MmBackward."),
    doc("autograd", "zh", "自动微分如何记录计算图",
        "为什么反向传播需要计算图？", "在记录下来的计算图上做反向模式微分。",
        ["梯度", "反向传播", "链式法则"], ["自动微分"],
        "每个运算记录一个节点。调用 backward 时逆序遍历计算图，把梯度累加到叶子上。"),
    doc("fft", "en", "Why the FFT is fast",
        "Why is the FFT O(n log n)?", "Even/odd splitting and butterflies.",
        ["FFT", "butterfly", "DFT"], ["numerics"],
        "The radix-2 FFT splits the input into even and odd samples. Each stage applies "
        "n/2 butterflies. Compared with the DFT's n^2 multiplies it is much faster."),
    doc("fft", "zh", "为什么 FFT 快",
        "为什么 FFT 是 O(n log n)？", "奇偶拆分与蝶形运算。",
        ["FFT", "蝶形", "离散傅里叶变换"], ["数值计算"],
        "基 2 FFT 把输入按奇偶下标拆成两半，每一级做 n/2 个蝶形运算。"),
    doc("streams", "en", "GPU streams and events",
        "When do two kernels overlap?", "Streams order work; events order streams.",
        ["stream", "event"], ["gpu"],
        "Work on one stream runs in order. A gradient-free timeline shows overlap. "
        "The C++ API calls this cudaStreamWaitEvent. Data flows like a stream of water."),
    doc("streams", "zh", "GPU 流与事件",
        "两个核函数何时重叠？", "流规定工作的顺序，事件规定流之间的顺序。",
        ["流", "事件"], ["GPU"],
        "同一个流上的工作按顺序执行。"),
    doc("sgd", "en", "Stochastic gradient descent",
        "Why does a noisy gradient still work?", "SGD with minibatches.",
        ["SGD", "learning rate"], ["optim"],
        "Gradient descent steps against the gradient. " + "Filler words about optimisation. " * 30),
    doc("sgd", "zh", "随机梯度下降",
        "为什么带噪声的梯度仍然有效？", "小批量 SGD。",
        ["SGD", "学习率"], ["优化"],
        "梯度下降沿梯度的反方向走一步。"),
]


@pytest.fixture(scope="module")
def index():
    return SearchIndex(CORPUS)


def slugs(hits):
    return [hit.slug for hit in hits]


# ---------------------------------------------------------------- tokens


def test_tokenize_words_plurals_and_cjk_pairs():
    assert tokenize("Gradients FFTs batches") == ["gradient", "fft", "batch"]
    assert tokenize("微分方程") == ["微", "分", "方", "程", "微分", "分方", "方程"]
    assert tokenize("C++ and C#") == ["c++", "c#"]
    assert tokenize("torch.matmul") == ["torch", "matmul"]
    assert tokenize("ＦＦＴ Fréchet") == ["fft", "frechet"]  # full-width and accents fold
    assert tokenize("한국") == ["한", "국", "한국"]  # Hangul stays whole syllables
    assert tokenize("😀 \x00 \u200b <>\"'") == []


# ---------------------------------------------------------------- ranking


def test_title_match_beats_body_match(index):
    # "streams" is in one topic's title and (as "stream of water") in nobody else's body;
    # "gradient" is in sgd's title and in autograd's and streams' bodies.
    hits = index.search("gradient descent")
    assert hits[0].slug == "sgd"
    hits = index.search("gradient")
    assert hits[0].slug in ("sgd", "autograd")  # title/keyword matches first
    assert slugs(hits).index("streams") > slugs(hits).index("sgd")


def test_one_hit_per_slug_and_language_of_title_and_snippet(index):
    hits = index.search("FFT", lang="zh")
    assert slugs(hits) == ["fft"]
    assert hits[0].title == "为什么 FFT 快"
    assert "FFT" in hits[0].snippet
    hits_en = index.search("FFT", lang="en")
    assert hits_en[0].title == "Why the FFT is fast"
    assert hits_en[0].score == pytest.approx(hits[0].score)


def test_chinese_query_finds_topic_on_english_page_and_vice_versa(index):
    hits = index.search("蝶形", lang="en")
    assert slugs(hits) == ["fft"]
    assert hits[0].title == "Why the FFT is fast"
    hits = index.search("butterflies", lang="zh")
    assert slugs(hits) == ["fft"]
    assert hits[0].title == "为什么 FFT 快"


@pytest.mark.parametrize(
    "query, expected_first",
    [("微分", "autograd"), ("梯度", "sgd"), ("流", "streams"), ("事件", "streams"),
     ("反向传播", "autograd"), ("学习率", "sgd")],
)
def test_chinese_one_and_two_character_words(index, query, expected_first):
    assert index.search(query, lang="zh")[0].slug == expected_first


def test_two_character_word_prefers_the_word_over_scattered_characters():
    corpus = [
        doc("word", "zh", "题目甲", text="这里讲梯度。"),
        doc("scattered", "zh", "题目乙", text="梯子的温度。"),
    ]
    hits = SearchIndex(corpus).search("梯度", lang="zh")
    assert slugs(hits)[0] == "word"


def test_mixed_query(index):
    hits = index.search("FFT 蝶形")
    assert hits[0].slug == "fft"
    hits = index.search("GPU 事件")
    assert hits[0].slug == "streams"


@pytest.mark.parametrize("query", ["Gradients", "GRADIENT", "gradients", "gradient"])
def test_case_and_plurals_do_not_matter(index, query):
    assert index.search(query)[0].slug in ("sgd", "autograd")
    assert slugs(index.search(query)) == slugs(index.search("gradient"))


def test_ffts_finds_fft(index):
    assert slugs(index.search("FFTs")) == ["fft"]


def test_dotted_names_match_their_parts(index):
    assert slugs(index.search("torch.matmul"))[0] == "autograd"
    assert slugs(index.search("matmul")) == ["autograd"]


def test_cpp_matches_cpp_not_single_letter_c(index):
    assert slugs(index.search("c++")) == ["streams"]


def test_snippet_is_window_around_match(index):
    hit = index.search("cudaStreamWaitEvent")[0]
    assert hit.slug == "streams"
    assert "cudaStreamWaitEvent" in hit.snippet
    assert len(hit.snippet) <= 200


def test_snippet_in_long_text_skips_to_the_match():
    filler = "lorem ipsum dolor sit amet " * 40
    corpus = [doc("t", "en", "Title", text=filler + "the needle sits here " + filler)]
    hit = SearchIndex(corpus).search("needle")[0]
    assert "needle" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 220


def test_no_snippet_when_the_requested_language_has_no_match(index):
    # The card shows the summary already; repeating it as a "snippet" says nothing.
    hit = index.search("cudaStreamWaitEvent", lang="zh")[0]
    assert hit.title == "GPU 流与事件"
    assert hit.snippet == "" and hit.marks == ()


def test_limit_is_respected(index):
    assert len(index.search("gradient", limit=1)) == 1
    assert index.search("gradient", limit=0) == []


def test_duplicate_language_rejected():
    with pytest.raises(ValueError, match="duplicate document for slug 'x'"):
        SearchIndex([doc("x", "en", "A"), doc("x", "en", "B")])


def test_empty_index_returns_nothing():
    assert SearchIndex([]).search("anything") == []


# ---------------------------------------------------------------- hostile queries


@pytest.mark.parametrize(
    "query",
    ["", "   ", "\t\n", '"', "'", '""', "<>", "!!!", "((()))", "+-*/", "😀😀", "\x00\x01\x1f",
     "the of and", "…", "。，、", "\u200b\u200d"],
)
def test_queries_with_nothing_searchable_return_no_hits(index, query):
    assert index.search(query) == []


@pytest.mark.parametrize(
    "query",
    ["<script>alert(1)</script>", "' OR 1=1 --", "\"fft\"", "fft\x00", "a" * 500,
     "FFT " * 200, "蝶" * 500, "%s%s%n", "../../etc/passwd", "{{ experiment:x }}",
     "\\omega", "$x^2$", "😀 fft 😀"],
)
def test_nasty_queries_do_not_raise_and_stay_bounded(index, query):
    hits = index.search(query)
    assert len(hits) <= len(index)
    assert all(hit.score > 0 for hit in hits)


def test_quoted_and_emoji_wrapped_words_still_match(index):
    assert slugs(index.search('"fft"')) == ["fft"]
    assert slugs(index.search("😀 fft 😀")) == ["fft"]


def test_script_tag_matches_only_the_word_script(index):
    # No topic mentions "script" or "alert": the tag syntax must not match everything.
    assert index.search("<script>alert(1)</script>") == []


def test_query_is_cut_at_the_cap():
    corpus = [doc("late", "en", "Title", text="zebra")]
    query = "x " * (MAX_QUERY_CHARS // 2) + "zebra"
    assert SearchIndex(corpus).search(query) == []
    assert slugs(SearchIndex(corpus).search("zebra")) == ["late"]


@settings(max_examples=60, deadline=None)
@given(query=st.text(max_size=600), lang=st.sampled_from(["en", "zh", "fr", ""]),
       limit=st.integers(min_value=-3, max_value=30))
def test_fuzz_arbitrary_text_never_raises(query, lang, limit):
    index = SearchIndex(CORPUS)
    hits = index.search(query, lang=lang, limit=limit)
    assert len(hits) <= max(0, limit)
    ranks = [(hit.coverage, hit.headline, hit.score) for hit in hits]
    assert ranks == sorted(ranks, reverse=True)
    assert len(set(slugs(hits))) == len(hits)
    assert all(isinstance(hit.snippet, str) and hit.snippet.isprintable() for hit in hits)
    assert all(0 <= s < e <= len(hit.snippet) for hit in hits for s, e in hit.marks)


@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=300), query=st.text(max_size=50))
def test_fuzz_arbitrary_documents(text, query):
    index = SearchIndex([doc("a", "en", text[:20], text=text), doc("a", "zh", "标题", text=text)])
    for hit in index.search(query, lang="en"):
        assert hit.slug == "a" and hit.score > 0
    # Every token of the document is findable by itself.
    for token in sorted(set(tokenize(text)))[:5]:
        assert slugs(index.search(token)) == ["a"]


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300))
def test_fast_folding_equals_folding_each_character(text):
    folded, source = search._fold(text)
    slow = [search._fold_char(c) for c in text]
    assert folded == "".join(slow)
    assert source == [i for i, piece in enumerate(slow) for _ in piece]


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab FFTs 蝶形运算的.ÉéΣς")), max_size=120),
       query=st.text(alphabet=st.sampled_from(list("ab FFTs 蝶形运算")), max_size=12))
def test_snippet_matches_equal_the_tokenizer_matches(text, query):
    terms = search._query_terms(query)
    expected = sorted((start, end, token) for token, start, end, _ in
                      search._tokens_with_spans(text) if token in terms)
    assert search._term_spans(text, terms) == expected


# ---------------------------------------------------------------- real topics


def markdown_to_text(markdown: str) -> str:
    """Rough plain text of a topic page: placement lines and Markdown markers dropped."""
    text = re.sub(r"^\{\{.*\}\}$", " ", markdown, flags=re.MULTILINE)
    text = re.sub(r"^#+ |[*`]", "", text, flags=re.MULTILINE)
    return " ".join(text.split())


def load_topic_docs() -> list[SearchDoc]:
    """SearchDocs from the topic folders (the explorer's loader builds them the same way)."""
    docs = []
    for meta_path in sorted(TOPICS_DIR.glob("*/meta.toml")):
        meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
        for lang in ("en", "zh"):
            fields = meta[lang]
            prose = (meta_path.parent / f"{lang}.md").read_text(encoding="utf-8")
            docs.append(SearchDoc(
                slug=meta["slug"], lang=lang, title=fields["title"],
                question=fields["question"], summary=fields["summary"],
                keywords=tuple(fields.get("keywords", ())), tags=tuple(fields.get("tags", ())),
                text=markdown_to_text(prose),
            ))
    return docs


REAL_QUERIES = [
    ("FFT", "en", "fft"), ("蝶形", "en", "fft"), ("butterflies", "zh", "fft"),
    ("FFT 蝶形", "zh", "fft"), ("快速傅里叶变换", "zh", "fft"), ("bit reversal", "en", "fft"),
    ("superposition", "en", "wave-superposition"), ("叠加", "en", "wave-superposition"),
    ("相位", "zh", "wave-superposition"), ("Phases", "en", "wave-superposition"),
    ("interference", "en", "wave-superposition"), ("干涉", "zh", "wave-superposition"),
]


@pytest.mark.parametrize("query, lang, expected", REAL_QUERIES)
def test_real_topics(query, lang, expected):
    docs = load_topic_docs()
    present = {d.slug for d in docs}
    if expected not in present:
        pytest.skip(f"topic {expected} not written yet")
    hits = SearchIndex(docs).search(query, lang=lang)
    assert hits and hits[0].slug == expected
    wanted = next(d for d in docs if d.slug == expected and d.lang == lang)
    assert hits[0].title == wanted.title


def test_a_shared_character_of_a_longer_word_is_not_a_match():
    corpus = [
        doc("butterfly", "zh", "蝶形运算", text="蝶形运算把两个输入变成两个输出。"),
        doc("other", "zh", "另一种情形", text="这种情形下没有蝴蝶。"),
    ]
    assert slugs(SearchIndex(corpus).search("蝶形", lang="zh")) == ["butterfly"]
    # A one-character query is a whole term, so it still finds every topic using it.
    assert sorted(slugs(SearchIndex(corpus).search("形", lang="zh"))) == ["butterfly", "other"]


def test_chinese_snippet_is_about_as_wide_as_an_english_one():
    text = "前言。" * 60 + "这里讲蝶形运算。" + "后记。" * 60
    hit = SearchIndex([doc("t", "zh", "标题", text=text)]).search("蝶形", lang="zh")[0]
    assert "蝶形" in hit.snippet
    assert 50 <= len(hit.snippet) <= 90  # ~150 columns at two columns per character


def test_snippet_makes_latex_readable():
    text = r"The amplitude is 2A \left| \cos \frac{\varphi}{2} \right| for phase \varphi."
    hit = SearchIndex([doc("t", "en", "Title", text=text)]).search("amplitude")[0]
    assert hit.snippet == "The amplitude is 2A | cos (φ)/(2) | for phase φ."


# ---------------------------------------------------------------- ranking, typing, synonyms


def test_a_title_match_outranks_a_question_match_and_both_outrank_prose():
    body_heavy = doc(
        "dispatcher",
        "en",
        "The dispatcher",
        "Does a call pass through autograd?",
        text="autograd " * 40,
    )
    title = doc("mini", "en", "The mini autograd", "How do gradients flow?", text="graph")
    prose_only = doc("other", "en", "Other", "Other?", text="autograd " * 80)
    index = SearchIndex([body_heavy, title, prose_only])
    assert [h.slug for h in index.search("autograd")] == ["mini", "dispatcher", "other"]


@pytest.mark.parametrize("typed", ["autog", "transp", "matm", "Autogr"])
def test_the_word_being_typed_matches_as_a_prefix(typed):
    index = SearchIndex(
        [
            doc("a", "en", "Autograd", text="reverse mode"),
            doc("b", "en", "Views", text="a transpose is free"),
            doc("c", "en", "Products", keywords=["matmul"]),
        ]
    )
    expected = {"autog": "a", "autogr": "a", "transp": "b", "matm": "c"}[typed.lower()]
    assert [h.slug for h in index.search(typed)] == [expected]


def test_only_the_last_word_is_a_prefix_and_a_finished_word_ranks_exact_first():
    index = SearchIndex(
        [
            doc("exact", "en", "Stream", text="stream"),
            doc("longer", "en", "Streaming", text="streaming"),
        ]
    )
    assert [h.slug for h in index.search("stream")] == ["exact", "longer"]
    assert index.search("transp stream")[0].slug == "exact"
    assert [h.slug for h in index.search("transp")] == []
    assert index.search("s") == []  # one letter completes nothing


def test_synonyms_find_a_topic_from_either_language():
    index = SearchIndex(
        [
            SearchDoc("grad", "en", "Autograd", "", "", (), (), "reverse", ("backprop",)),
            SearchDoc("grad", "zh", "自动微分", "", "", (), (), "反向", ("反传",)),
        ]
    )
    for query in ("backprop", "反传"):
        for lang in ("en", "zh"):
            assert [h.slug for h in index.search(query, lang)] == ["grad"], (query, lang)


def test_snippets_mark_the_matched_words_in_the_requested_language(index):
    hit = index.search("butterflies stage", lang="en")[0]
    marked = {hit.snippet[start:end].lower() for start, end in hit.marks}
    assert {"butterflies", "stage"} <= marked
    chinese = index.search("蝶形", lang="zh")[0]
    assert [chinese.snippet[s:e] for s, e in chinese.marks] == ["蝶形"]
    # A Chinese query while reading English: the English text has no match, so no snippet.
    assert index.search("蝶形", lang="en")[0].snippet == ""


def test_meta_synonyms_are_loaded_and_optional(topic_copy):
    from whylab.explorer.content.topics import TopicError, load_registry

    registry = load_registry(topic_copy)
    topic = registry.get("tiny-demo")
    assert topic.meta["en"].synonyms == ("wiggle",) and topic.meta["zh"].synonyms == ("波形演示",)
    assert [h.slug for h in registry.search_index.search("波形演示", "en")] == ["tiny-demo"]
    meta = topic_copy / "tiny_demo" / "meta.toml"
    text = meta.read_text(encoding="utf-8")
    meta.write_text(text.replace('synonyms = ["wiggle"]\n', ""), encoding="utf-8")
    assert load_registry(topic_copy).get("tiny-demo").meta["en"].synonyms == ()
    meta.write_text(text.replace('synonyms = ["wiggle"]', 'synonyms = "wiggle"'), encoding="utf-8")
    with pytest.raises(TopicError, match="synonyms must be a list"):
        load_registry(topic_copy)


def test_a_topic_with_the_whole_query_outranks_a_title_with_one_of_its_words():
    """"chain rule": the topic whose prose is about the chain rule comes before the one
    whose title says "rules" and whose text never says "chain"."""
    index = SearchIndex([
        doc("dispatch", "en", "How a call finds its kernel, and matmul's rules",
            "What happens when you call a @ b?", "Keys and kernels.",
            text="An operator is a schema plus a table of kernels."),
        doc("grad", "en", "The autograd engine", "How does backward work?",
            "Gradients by recording.",
            text="Backward applies the chain rule node by node, from the loss to the leaves."),
    ])
    assert [hit.slug for hit in index.search("chain rule")] == ["grad", "dispatch"]
    # The control: with one word of the query only, the title match wins again.
    assert [hit.slug for hit in index.search("rules")][0] == "dispatch"
    # The word being typed counts once, whole or as a completion ("rul" -> rule, rules).
    assert [hit.slug for hit in index.search("chain rul")][0] == "grad"


# ---------------------------------------------------------------- sections


def sectioned(slug, lang, title, sections):
    """A topic document whose text is its sections' text, as the loader builds it."""
    parts = tuple(Section(id, heading, level, text) for id, heading, level, text in sections)
    text = " ".join(f"{part.title} {part.text}" for part in parts)
    return SearchDoc(slug, lang, title, "", "", (), (), text, sections=parts)


SECTIONED = [
    sectioned("fft", "en", "Why the FFT is fast", [
        ("the-question", "The question", 2, "How fast can a discrete transform be?"),
        ("counting-the-work", "Counting the work", 2,
         "Each level of splitting costs n/2 butterflies, and halving leaves log n levels."),
        ("experiment-fft-vs-dft", "FFT equals the DFT", 0,
         "Compares the fast transform with the definition at several lengths."),
    ]),
    sectioned("fft", "zh", "为什么 FFT 快", [
        ("the-question", "问题", 2, "离散变换最快能有多快？"),
        ("counting-the-work", "数一数工作量", 2,
         "每拆分一层要做 n/2 个蝶形运算，一共对半拆 log n 层。"),
        ("experiment-fft-vs-dft", "FFT 等于 DFT", 0, "在几种长度上把快速变换与定义比较。"),
    ]),
    sectioned("streams", "en", "GPU streams", [
        ("ordering", "Ordering work", 2, "Work on one stream runs in order; an event orders two."),
    ]),
    sectioned("streams", "zh", "GPU 流", [
        ("ordering", "工作的顺序", 2, "同一个流上的工作按顺序执行，事件让两个流有先后。"),
    ]),
]


def marked(hit, text):
    return [text[start:end] for start, end in hit.marks]


@pytest.mark.parametrize(
    "query, lang, section, word",
    [
        ("butterflies", "en", "counting-the-work", "butterflies"),
        ("several lengths", "en", "experiment-fft-vs-dft", "lengths"),
        ("蝶形运算", "zh", "counting-the-work", "蝶形运算"),
        ("长度", "zh", "experiment-fft-vs-dft", "长度"),
    ],
)
def test_a_phrase_in_one_section_links_to_that_section_with_a_marked_snippet(
    query, lang, section, word
):
    hits = SearchIndex(SECTIONED).search(query, lang)
    assert hits and hits[0].slug == "fft"
    assert hits[0].section == section
    titles = {s.id: s.title for d in SECTIONED if d.slug == "fft" and d.lang == lang
              for s in d.sections}  # fmt: skip
    assert hits[0].section_title == titles[section]
    assert word in marked(hits[0], hits[0].snippet)
    # The snippet is cut from that section's text, not from another one's.
    texts = {s.id: s.text for d in SECTIONED if d.slug == "fft" and d.lang == lang
             for s in d.sections}  # fmt: skip
    assert hits[0].snippet.strip("…") in texts[section]


def test_a_query_in_the_other_language_lands_on_the_same_section_without_a_snippet():
    hits = SearchIndex(SECTIONED).search("蝶形运算", "en")
    assert hits[0].section == "counting-the-work"
    assert hits[0].section_title == "Counting the work" and hits[0].snippet == ""


def test_a_heading_match_marks_the_heading():
    hits = SearchIndex(SECTIONED).search("counting", "en")
    assert hits[0].section == "counting-the-work"
    assert marked_title(hits[0]) == ["Counting"]


def marked_title(hit):
    return [hit.section_title[start:end] for start, end in hit.section_marks]


def test_sections_never_change_the_order_of_topics():
    plain = [dataclasses.replace(d, sections=()) for d in SECTIONED]
    for query in ("work", "order", "fft", "工作", "流", "log n"):
        with_sections = SearchIndex(SECTIONED).search(query, "en")
        without = SearchIndex(plain).search(query, "en")
        assert slugs(with_sections) == slugs(without), query
        assert all(hit.section == "" for hit in without)


@pytest.fixture(scope="module")
def real_registry():
    from whylab.explorer.content.topics import load_registry

    return load_registry()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_real_hits_name_a_section_of_the_page_and_mark_words_of_it(real_registry, lang):
    """For a word taken from each topic's longest section, the topic is found and its hit
    names a section the page really has, with marked words from that section's text."""
    for topic in real_registry:
        sections = {s.id: s for s in topic.sections(lang)}
        longest = max(sections.values(), key=lambda s: len(s.text))
        pattern = r"[A-Za-z]{6,}" if lang == "en" else r"[\u4e00-\u9fff]{4,}"
        words = re.findall(pattern, longest.text)
        phrase = words[len(words) // 2][:4] if lang == "zh" else words[len(words) // 2]
        hits = real_registry.search_index.search(phrase, lang, limit=50)
        hit = next((h for h in hits if h.slug == topic.slug), None)
        assert hit is not None, (topic.slug, phrase)
        assert hit.section in sections, (topic.slug, phrase, hit.section)
        if hit.snippet:
            assert hit.marks
            assert all(hit.snippet[a:b] in sections[hit.section].text for a, b in hit.marks)
