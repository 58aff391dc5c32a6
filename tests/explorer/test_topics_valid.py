"""Every topic shipped with whylab: both languages, every formula, every default check.

Parametrized over the folders found under ``whylab/topics/``, so a new topic is
covered the moment its folder exists.
"""

from __future__ import annotations

import re
from html import unescape

import pytest

from tests.explorer.default_runs import default_record as shared_default_record
from whylab.explorer.content.prose import HtmlBlock
from whylab.explorer.content.topics import (
    DEFAULT_TOPICS_DIR,
    discover_topic_folders,
    import_experiments,
    load_topic,
)
from whylab.explorer.runs.service import RunRecord

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


def _timed(folder, name) -> bool:
    return load_topic(folder).experiments[name].timing


EXPERIMENT_PARAMS = [
    pytest.param(f, n, marks=[pytest.mark.wallclock] if _timed(f, n) else [], id=f"{f.name}/{n}")
    for f, n in EXPERIMENTS
]


def default_record(folder, name, *, fresh: bool = False) -> RunRecord:
    """The run at the defaults, shared with the other tests that read it."""
    topic = load_topic(folder)
    return shared_default_record(topic, topic.experiments[name], fresh=fresh)


def topic_experiment(folder, name):
    return load_topic(folder).experiments[name]


@pytest.mark.parametrize("folder, name", EXPERIMENT_PARAMS)
def test_default_run_passes_its_checks(folder, name):
    record = default_record(folder, name, fresh=True)  # a wall-clock rerun measures again
    assert record.result.checks, f"{name} states no checks"
    # A timing claim whose interval straddles its bound on a loaded machine is "inconclusive":
    # no evidence either way, never a pass (whylab check exits 3), and not a wrong answer.
    undecided = [c for c in record.result.checks if c.state == "inconclusive"]
    assert not undecided or topic_experiment(folder, name).timing, undecided
    failed = [
        f"{c.name.en}: measured {c.measured_in('en')}, expected {c.expected_in('en')}"
        for c in record.result.checks
        if not c.passed and c.state != "inconclusive"
    ]
    assert not failed, failed


# ---------------------------------------------------------------- check values on Chinese pages

# English words a Chinese page keeps on purpose: dispatch keys and Python values
# (code the reader types or sees printed), the project's name, and the terms the
# topics' Chinese prose itself leaves in English.
KEPT_IN_ENGLISH = {
    "None",
    "True",
    "False",
    "Autograd",
    "Tracer",
    "Meta",
    "Python",
    "Rust",
    "Euler",  # a name, as in 前向 Euler 法
    "whylab",
    "kernel",
    "logit",
}


def untranslated_words(shown: str, kept: set[str] = KEPT_IN_ENGLISH) -> list[str]:
    """English words of four or more letters in ``shown`` that are not code (nor in ``kept``).

    Code is left alone: a name with an underscore, a dot, a slash or a digit
    (grad_fn, np.matmul, psf/pyperf, float32, MmBackward0), a call, a method or an
    index (``arange(24.)``, ``x.t().contiguous()``, ``lower[2]``), an inner capital (AccumulateGrad,
    ADInplaceOrView), an acronym (CPU, FFT), and anything quoted in “…” (an
    error message quoted as the engine printed it).
    """
    unquoted = re.sub(r"“[^”]*”", " ", shown)
    unquoted = re.sub(r"[A-Za-z_][\w.]*\([^()]*\)", " ", unquoted)  # a call and its arguments
    words = []
    for match in re.finditer(r"[A-Za-z_][A-Za-z0-9_./]*", unquoted):
        token = match.group().rstrip(".")
        called = unquoted[match.end() : match.end() + 1] in ("(", "[")
        method = unquoted[match.start() - 1 : match.start()] == "."
        is_code = (
            called
            or method
            or re.search(r"[_./\d]", token)
            or re.search(r"[a-z][A-Z]", token)
            or token.isupper()
        )
        if not is_code and len(token) >= 4 and token not in kept:
            words.append(token)
    return words


def test_the_untranslated_word_rule_flags_sentences_and_spares_code():
    assert untranslated_words("relative max error 6.7e-16") == ["relative", "error"]
    assert untranslated_words("one run per node, in dependency order") == [
        "node",
        "dependency",
        "order",
    ]
    assert untranslated_words("2 saved before, 0 after") == ["saved", "before", "after"]
    assert untranslated_words("bumped") == ["bumped"]
    for code in [
        "['AddBackward0', 'MmBackward0']",
        "{'AccumulateGrad': 2}",
        "grad_fn = None",
        "Tracer → Autograd → CPU",
        "{Autograd, ADInplaceOrView, CPU}",
        "np.matmul",
        "x.t().contiguous()",
        "arange(24.).reshape(6, 4)",
        "合并：cross_entropy(logits)",
        "float32",
        "0.52 rad (|Δ| = 2.2e-16)",
        "10^-5.5",
        "≤ 1e-12",
        "“…is at version 2; expected version 0…”",
        "Autograd kernel 已执行",
    ]:
        assert untranslated_words(code) == [], code


@pytest.fixture(scope="module")
def real_topics_client(tmp_path_factory):
    from fastapi.testclient import TestClient

    from whylab.explorer.web.app import create_app
    from whylab.explorer.web.config import ExplorerConfig

    config = ExplorerConfig(
        topics_dir=DEFAULT_TOPICS_DIR, cache_dir=tmp_path_factory.mktemp("cache"), rate_burst=0
    )
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


# ------------------------------------------------- metrics, tables and diagrams on Chinese pages

# What a result shows besides its checks: metric tiles (<dt> label, <dd> value and unit),
# table captions, headers and cells (result tables and the figures' data tables), and the
# text of every chart and diagram (<text>, and the <title>/<desc> a screen reader reads).
SHOWN_IN_RESULTS = re.compile(r"<(dt|dd|caption|th|td|text|title|desc)\b[^>]*>(.*?)</\1>", re.S)

# True/False/None are not kept here: in a tile or a table cell a yes/no reads 是/否. Kept are
# names that stay as they are in Chinese text, each spelled as its code or its owner spells it:
KEPT_IN_RESULTS = (KEPT_IN_ENGLISH - {"True", "False", "None"}) | {
    # operators, as a dispatch trace or a backward-rule table names them (aten's names)
    "matmul",
    "view",
    "reshape",
    "relu",
    "softmax",
    # the device a tensor lives on, as torch.device spells it ("cpu" is short enough)
    "meta",
    # BLAS routines and their arguments (the Fortran names), the language itself as in
    # "Fortran 顺序" (column-major), and the timers, tools and libraries a page compares
    "uplo",
    "Fortran",
    "gaxpy",  # Golub and Van Loan's name for y = Ax + y, which the Chinese prose keeps too
    "dgemm",
    "dgbmv",
    "dspmv",
    "dsymv",
    "numpy",
    "numba",
    "timeit",
    "pyperf",
    "triton",
}
KEPT_NAMES = ("Frank–Wolfe", "Jaggi", "Google Benchmark")  # people's and products' names

# A metric's code name shown as its label (closed_form_amplitude): always a missing label.
# (A label may name code inside a sentence: "结果的 grad_fn".)
CODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")


def untranslated_in_results(html: str) -> dict[str, list[str]]:
    """What a Chinese page shows in metrics, tables and diagrams that is still English:
    ``{"<tag> shown text": [the words]}``; empty when everything reads in Chinese."""
    found = {}
    for tag, inner in SHOWN_IN_RESULTS.findall(html):
        shown = unescape(re.sub(r"<[^>]+>", "", inner)).strip()
        plain = shown
        for name in KEPT_NAMES:
            plain = plain.replace(name, " ")
        words = untranslated_words(plain, KEPT_IN_RESULTS)
        if tag == "dt" and CODE_NAME.fullmatch(plain):
            words.append(plain)
        if words:
            found[f"<{tag}> {shown}"] = words
    return found


def zh_result_html(folder, name) -> str:
    """The result block of the run at the defaults, as a Chinese page shows it."""
    from whylab.explorer.web.render import ExperimentView, Links, make_environment

    topic = load_topic(folder)
    experiment = topic.experiments[name]
    record = default_record(folder, name)
    view = ExperimentView(experiment, "experiment", dict(record.params), record=record)
    template = make_environment().get_template("_result.html")
    return template.render(lang="zh", links=Links(), topic=topic, view=view)


def test_the_result_checker_flags_english_labels_and_spares_code():
    page = (
        "<dl><div><dt>最大误差</dt><dd class='num'>3e-16</dd></div></dl>"
        "<dl><div><dt>结果的 grad_fn</dt><dd>—</dd></div></dl>"
        "<table><tr><th>调用</th><td>mm @ Autograd</td><td>是</td><td>AddBackward0</td>"
        "<td>Frank–Wolfe，单纯形</td></tr></table><svg><text>x.is_contiguous()</text></svg>"
    )
    assert untranslated_in_results(page) == {}
    planted = {
        "<dt>closed_form_amplitude</dt>": ["closed_form_amplitude"],
        "<dt>closed-form amplitude</dt>": ["closed", "form", "amplitude"],
        "<td>True</td>": ["True"],
        "<text>Storage</text>": ["Storage"],
        "<th>stage 0</th>": ["stage"],
        "<dd>in-place-error</dd>": ["place", "error"],
        "<caption>最大 error</caption>": ["error"],
    }
    for element, words in planted.items():
        found = untranslated_in_results(page.replace("<td>是</td>", element))
        assert list(found.values()) == [words], element


@pytest.mark.parametrize("folder, name", EXPERIMENT_PARAMS)
def test_every_metric_a_run_returns_is_declared(folder, name):
    topic = load_topic(folder)
    declared = {metric.name for metric in topic.experiments[name].metrics}
    undeclared = sorted(set(default_record(folder, name).result.metrics) - declared)
    assert not undeclared, (
        f"topic {topic.slug}, experiment {name}: metrics without a Metric(name, label, unit) "
        f"declaration: {undeclared}"
    )


@pytest.mark.parametrize("folder, name", EXPERIMENT_PARAMS)
def test_results_on_chinese_pages_read_in_chinese(folder, name):
    """Every experiment, timing ones too (a page shows those once measured)."""
    html = zh_result_html(folder, name)
    assert 'class="checks"' in html  # the result was rendered
    assert untranslated_in_results(html) == {}


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_metrics_tables_and_diagrams_on_chinese_pages_are_in_chinese(folder, real_topics_client):
    topic = load_topic(folder)
    page = real_topics_client.get(f"/zh/topics/{topic.slug}").text
    assert "<td" in page  # every topic page shows a table (timing results only once measured)
    assert untranslated_in_results(page) == {}
