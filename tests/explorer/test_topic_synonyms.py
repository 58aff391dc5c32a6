"""Search finds the shipped topics by the words readers use, in either language.

Each topic's meta.toml lists ``synonyms`` per language: words a reader types that the
page itself does not use (backprop, 跨距, 调度键 on a page that said 分派键). These
tests run the real topics' index, from both home pages.
"""

from __future__ import annotations

import dataclasses

import pytest

from whylab.explorer.content.search import SearchIndex
from whylab.explorer.content.topics import DEFAULT_TOPICS_DIR, load_registry

# (query, the topic a reader typing it is looking for)
READERS_WORDS = [
    ("backprop", "autograd"),
    ("backpropagation", "autograd"),
    ("autodiff", "autograd"),
    ("反向传播", "autograd"),
    ("自动微分", "autograd"),
    ("自动求导", "autograd"),
    ("stride", "strided-tensors"),
    ("步幅", "strided-tensors"),
    ("步长", "strided-tensors"),
    ("跨距", "strided-tensors"),
    ("跨步", "strided-tensors"),
    ("FFT", "fft"),
    ("fast Fourier", "fft"),
    ("butterfly", "fft"),
    ("快速傅里叶变换", "fft"),
    ("快速傅立叶变换", "fft"),
    ("蝶形", "fft"),
    ("GEMM", "loop-order"),
    ("矩阵乘法", "loop-order"),
    ("tiling", "loop-order"),
    ("cache blocking", "loop-order"),
    ("循环分块", "loop-order"),
    ("band matrix", "band-gaxpy"),
    ("带状矩阵", "band-gaxpy"),
    ("packed storage", "symmetric-gaxpy"),
    ("对称压缩存储", "symmetric-gaxpy"),
    ("conditional gradient", "frank-wolfe"),
    ("条件梯度", "frank-wolfe"),
    ("benchmark", "benchmarking"),
    ("microbenchmark", "benchmarking"),
    ("基准测试", "benchmarking"),
    ("跑分", "benchmarking"),
    ("dispatch key", "dispatcher"),
    ("调度键", "dispatcher"),
    ("分派键", "dispatcher"),
    ("算子", "dispatcher"),
    ("wave", "wave-superposition"),
    ("interference", "wave-superposition"),
    ("干涉", "wave-superposition"),
    ("双缝干涉", "wave-superposition"),
]


@pytest.fixture(scope="module")
def registry():
    return load_registry(DEFAULT_TOPICS_DIR)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("query, slug", READERS_WORDS, ids=[q for q, _ in READERS_WORDS])
def test_a_readers_word_ranks_its_topic_first(registry, query, slug, lang):
    hits = registry.search_index.search(query, lang)
    assert hits, f"{query!r} finds nothing on /{lang}/"
    assert hits[0].slug == slug, (query, lang, [h.slug for h in hits[:3]])


def test_every_topic_lists_synonyms_in_both_languages(registry):
    for topic in registry:
        for lang in ("en", "zh"):
            assert len(topic.meta[lang].synonyms) >= 3, (topic.slug, lang)


def test_the_synonyms_are_what_finds_some_of_those_words(registry):
    """Negative control: with every topic's synonyms removed, words only readers use
    (and the page does not) stop finding their topic."""
    bare = SearchIndex(
        dataclasses.replace(doc, synonyms=()) for topic in registry for doc in topic.search_docs()
    )
    for query, slug in [
        ("autodiff", "autograd"),
        ("跨距", "strided-tensors"),
        ("分派键", "dispatcher"),
        ("跑分", "benchmarking"),
    ]:
        hits = bare.search(query, "zh")
        assert not hits or hits[0].slug != slug, query
        assert registry.search_index.search(query, "zh")[0].slug == slug, query
