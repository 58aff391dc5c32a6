"""The topic loader: what a valid folder gives, and how each kind of broken folder fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from whylab.explorer.content.mathml import MathError
from whylab.explorer.content.prose import Placement
from whylab.explorer.content.topics import TopicError, load_registry, load_topic, tag_key


def test_fixture_topic_loads_with_both_languages(fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    assert topic is not None and len(fixture_registry) == 1
    assert topic.meta["en"].title == "Tiny demo" and topic.meta["zh"].title == "小型示例"
    assert [t.key for t in topic.tags] == ["testing", "signals"]
    assert topic.tags[0].text.zh == "测试"
    assert list(topic.experiments) == ["sine", "mean", "graph", "sleepy", "hog", "clock"]
    assert Placement("diagram", "graph") in topic.placements()
    for lang in ("en", "zh"):
        assert topic.prose[lang].formula_count == 5


def test_search_docs_exist_for_both_languages_and_the_index_finds_them(fixture_registry):
    docs = fixture_registry.get("tiny-demo").search_docs()
    assert [d.lang for d in docs] == ["en", "zh"]
    assert "Parseval" in docs[0].text and "帕塞瓦尔" in docs[1].text
    assert fixture_registry.search_index.search("正弦", "en")[0].slug == "tiny-demo"
    assert fixture_registry.search_index.search("running mean", "zh")[0].title == "小型示例"


def test_tag_keys_are_url_safe():
    assert tag_key("Signal processing / DSP") == "signal-processing-dsp"
    assert tag_key("???") == "tag"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"fixture changed: {old!r} not in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")


BROKEN = {
    "missing zh title": ("meta.toml", 'title = "小型示例"\n', "", "title is missing"),
    "empty en question": (
        "meta.toml",
        'question = "Does a fixture topic exercise every part of the explorer?"',
        'question = "  "',
        "question is missing or empty",
    ),
    "unpaired tags": (
        "meta.toml",
        'tags = ["测试", "信号"]',
        'tags = ["测试"]',
        "paired by position",
    ),
    "wrong slug": ("meta.toml", 'slug = "tiny-demo"', 'slug = "other"', "slug must be"),
    "unknown key": ("meta.toml", "order = 1", "order = 1\ncolour = 2", "unknown keys"),
    "bad toml": ("meta.toml", "order = 1", "order = = 1", "meta.toml"),
    "under_test not a list": (
        "meta.toml", "order = 1", 'order = 1\nunder_test = "whylab/numerics/fft.py"',
        "under_test must be a list",
    ),
    "under_test names no file": (
        "meta.toml", "order = 1", 'order = 1\nunder_test = ["whylab/numerics/nope.py"]',
        "not a file",
    ),
    "under_test leaves the repository": (
        "meta.toml", "order = 1", 'order = 1\nunder_test = ["../../etc/passwd"]', "not a file",
    ),
    "unpaired headings": ("zh.md", "## 限制\n", "限制\n", "paired with en.md's by position"),
    "bad latex": ("zh.md", "$1/\\sqrt{n}$", "$1/\\sqrt{n$", "cannot convert"),
    "lone dollar": ("en.md", "like $1/\\sqrt{n}$.", "like $1.", "unmatched $"),
    "unpaired placements": ("zh.md", "{{ diagram:graph }}\n", "", "same experiments and diagrams"),
    "unknown placement": ("en.md", "{{ diagram:graph }}", "{{ diagram:nope }}", "same experiments"),
    "duplicate experiment names": (
        "experiments.py",
        "EXPERIMENTS = [sine, mean, graph, sleepy, hog, clock]",
        "EXPERIMENTS = [sine, mean, graph, sleepy, hog, clock, sine]",
        "two experiments are named 'sine'",
    ),
    "never placed": (
        "experiments.py",
        "EXPERIMENTS = [sine, mean, graph, sleepy, hog, clock]",
        "extra = experiment(name='extra', title=T('e', 'e'), description=T('e', 'e'))(Result)\n"
        "EXPERIMENTS = [sine, mean, graph, sleepy, hog, clock, extra]",
        "never placed",
    ),
    "no experiments": (
        "experiments.py",
        "EXPERIMENTS = [sine, mean, graph, sleepy, hog, clock]",
        "EXPERIMENTS = []",
        "non-empty EXPERIMENTS",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_topics_fail_loudly_naming_the_problem(topic_copy, case):
    file, old, new, message = BROKEN[case]
    folder = topic_copy / "tiny_demo"
    edit(folder / file, old, new)
    with pytest.raises((TopicError, MathError)) as error:
        load_topic(folder)
    assert message in str(error.value)
    with pytest.raises((TopicError, MathError)):
        load_registry(topic_copy)


def test_under_test_lists_repository_files(topic_copy):
    folder = topic_copy / "tiny_demo"
    edit(folder / "meta.toml", "order = 1", 'order = 1\nunder_test = ["whylab/numerics/fft.py"]')
    assert load_topic(folder).under_test == ("whylab/numerics/fft.py",)


def test_a_missing_language_file_is_an_error(topic_copy):
    (topic_copy / "tiny_demo" / "zh.md").unlink()
    with pytest.raises(TopicError, match="zh.md is missing"):
        load_topic(topic_copy / "tiny_demo")


def test_the_registry_reports_every_broken_topic_at_once(topic_copy):
    second = topic_copy / "second_one"
    second.mkdir()
    (second / "meta.toml").write_text('slug = "second-one"\norder = 2\n', encoding="utf-8")
    (topic_copy / "tiny_demo" / "en.md").write_text("a $ b", encoding="utf-8")
    with pytest.raises(TopicError) as error:
        load_registry(topic_copy)
    assert "second_one" in str(error.value) and "unmatched $" in str(error.value)


def test_cache_fingerprint_follows_every_python_file_of_the_topic(tmp_path):
    import shutil

    from whylab.explorer.content.topics import code_fingerprint

    folder = tmp_path / "tiny_demo"
    shutil.copytree(Path(__file__).parent / "fixture_topics" / "tiny_demo", folder)
    before = code_fingerprint(folder)
    assert code_fingerprint(folder) == before
    (folder / "helpers.py").write_text("SCALE = 2\n", encoding="utf-8")
    with_helper = code_fingerprint(folder)
    assert with_helper != before
    (folder / "helpers.py").write_text("SCALE = 3\n", encoding="utf-8")
    edited = code_fingerprint(folder)
    assert edited not in (before, with_helper)
    (folder / "en.md").write_text("prose is not code", encoding="utf-8")
    assert code_fingerprint(folder) == edited
