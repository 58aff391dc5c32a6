"""Every topic shipped with whylab: both languages, every formula, every default check.

Parametrized over the folders found under ``whylab/topics/``, so a new topic is
covered the moment its folder exists.
"""

from __future__ import annotations

import re
from html import unescape

import pytest

from whylab.explorer.prose import HtmlBlock
from whylab.explorer.service import run_locally
from whylab.explorer.topics import (
    DEFAULT_TOPICS_DIR,
    discover_topic_folders,
    import_experiments,
    load_topic,
)

FOLDERS = discover_topic_folders(DEFAULT_TOPICS_DIR)
EXPERIMENTS = [(folder, name) for folder in FOLDERS for name in import_experiments(folder)]


def test_whylab_ships_topics():
    assert FOLDERS, f"no topic folders under {DEFAULT_TOPICS_DIR}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_topic_loads_in_both_languages_with_every_formula_converted(folder):
    topic = load_topic(folder)  # raises on a missing field, an unpaired tag or a bad formula
    for lang in ("en", "zh"):
        meta = topic.meta[lang]
        assert meta.title and meta.question and meta.summary
        html = "".join(s.html for s in topic.prose[lang].segments if isinstance(s, HtmlBlock))
        assert html.count("<math") >= topic.prose[lang].formula_count > 0
        text_only = re.sub(r"<code>.*?</code>|<pre>.*?</pre>", "", html, flags=re.S)
        assert "$" not in re.sub(r"<[^>]+>", "", text_only), "raw $ left in the prose"


@pytest.mark.parametrize("folder, name", EXPERIMENTS, ids=[f"{f.name}/{n}" for f, n in EXPERIMENTS])
def test_default_run_passes_its_checks(folder, name):
    topic = load_topic(folder)
    experiment = topic.experiments[name]
    record = run_locally(topic, experiment, experiment.defaults())
    assert record.result.checks, f"{name} states no checks"
    failed = [
        f"{c.name.en}: measured {c.measured_in('en')}, expected {c.expected_in('en')}"
        for c in record.result.checks
        if not c.passed
    ]
    assert not failed, failed


# ---------------------------------------------------------------- check values on Chinese pages

# English words a Chinese page keeps on purpose: dispatch keys and Python values
# (code the reader types or sees printed), the project's name, and the terms the
# topics' Chinese prose itself leaves in English.
KEPT_IN_ENGLISH = {"None", "True", "False", "Autograd", "Tracer", "Meta", "Python",
                   "whylab", "kernel", "logit"}


def untranslated_words(shown: str) -> list[str]:
    """English words of four or more letters in ``shown`` that are not code.

    Code is left alone: a name with an underscore, a dot or a digit (grad_fn,
    np.matmul, float32, MmBackward0), an inner capital (AccumulateGrad,
    ADInplaceOrView), an acronym (CPU, FFT), and anything quoted in “…” (an
    error message quoted as the engine printed it).
    """
    unquoted = re.sub(r"“[^”]*”", " ", shown)
    words = []
    for token in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", unquoted):
        token = token.rstrip(".")
        is_code = (
            re.search(r"[_.\d]", token)
            or re.search(r"[a-z][A-Z]", token)
            or token.isupper()
        )
        if not is_code and len(token) >= 4 and token not in KEPT_IN_ENGLISH:
            words.append(token)
    return words


def test_the_untranslated_word_rule_flags_sentences_and_spares_code():
    assert untranslated_words("relative max error 6.7e-16") == ["relative", "error"]
    assert untranslated_words("one run per node, in dependency order") == ["node", "dependency",
                                                                           "order"]
    assert untranslated_words("2 saved before, 0 after") == ["saved", "before", "after"]
    assert untranslated_words("bumped") == ["bumped"]
    for code in ["['AddBackward0', 'MmBackward0']", "{'AccumulateGrad': 2}", "grad_fn = None",
                 "Tracer → Autograd → CPU", "{Autograd, ADInplaceOrView, CPU}",
                 "np.matmul", "float32", "0.52 rad (|Δ| = 2.2e-16)", "10^-5.5", "≤ 1e-12",
                 "“…is at version 2; expected version 0…”", "Autograd kernel 已执行"]:
        assert untranslated_words(code) == [], code


@pytest.fixture(scope="module")
def real_topics_client(tmp_path_factory):
    from fastapi.testclient import TestClient

    from whylab.explorer.app import ExplorerConfig, create_app

    config = ExplorerConfig(topics_dir=DEFAULT_TOPICS_DIR,
                            cache_dir=tmp_path_factory.mktemp("cache"), rate_burst=0)
    with TestClient(create_app(config)) as client:
        yield client


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_check_values_on_chinese_pages_are_in_chinese(folder, real_topics_client):
    topic = load_topic(folder)
    response = real_topics_client.get(f"/zh/topics/{topic.slug}")
    assert response.status_code == 200
    values = re.findall(r'<span class="check-values">(.*?)</span>', response.text, re.S)
    assert len(values) == response.text.count('<li class="check ') > 0
    untranslated = {}
    for value in values:
        for code in re.findall(r"<code>(.*?)</code>", value, re.S):
            shown = unescape(code)
            if untranslated_words(shown):
                untranslated[shown] = untranslated_words(shown)
    assert not untranslated, untranslated
