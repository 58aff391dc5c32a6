"""Every topic's Jupyter notebook runs, and reports the checks ``whylab check`` reports.

Each topic's notebook is generated in both languages and validated with
nbformat. Both are executed with nbclient (a python3 kernel from ipykernel, in a
temporary directory). Each experiment cell's checks, read back from what the
cell displayed, must have the ids and states that the default run of ``whylab
check`` gives (the same call: ``run_locally`` at the experiment's defaults), each
check must list the negative controls that make it fail, in the notebook's
language, its figures must come out as SVG, each with the data table the page
shows under it (the same cells), and no cell may fail. A Chinese notebook must
show no English words. Timing experiments are compared by their check ids and
their tables' shape only: whether a speed claim holds on a loaded machine, and
the times themselves, differ from one run to the next.

Both languages' code cells are the same token for token, comments aside (the
language is chosen once, in the setup cell). So the Chinese notebook of a topic
runs right after the English one and reuses its experiments' results (the
``shared_runs`` module the tests give the kernel): every Chinese cell runs and
shows its result in Chinese, and no experiment is computed twice. All notebooks
run in one kernel, each from an empty namespace (see the ``execute`` fixture).

The comparison is shown to catch a notebook that does not run what the topic
runs: a cell with a negative control switched on, and one with a parameter
changed, are both reported.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser
from xml.dom import minidom

import nbformat
import pytest
from fastapi.testclient import TestClient
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output

from tests.explorer.default_runs import default_record
from tests.explorer.test_topics_valid import untranslated_in_results, untranslated_words
from whylab.explorer.content.i18n import translate
from whylab.explorer.content.ipynb import (
    MEDIA_TYPE,
    TIMING_COMMENT,
    build_notebook,
    join_wide_line_breaks,
    notebook_json,
    param_comment,
)
from whylab.explorer.content.topics import (
    Topic,
    TopicRegistry,
    discover_topic_folders,
    load_registry,
    slug_of,
)
from whylab.explorer.experiment import LANGS, Lang, Param, ParamError, T
from whylab.explorer.runs.service import RunRecord
from whylab.explorer.web.app import create_app
from whylab.explorer.web.config import ExplorerConfig
from whylab.explorer.web.export import export_site
from whylab.explorer.web.notebook import (
    STATE_MARKS,
    figure_stylesheet,
    figure_table_html,
    result_html,
    run,
    show_in,
)
from whylab.explorer.web.render import ExperimentView, Links, make_environment
from whylab.explorer.web.wheel import ServedWheel

CELL_TIMEOUT_S = 120
SLUGS = [slug_of(folder) for folder in discover_topic_folders()]  # without loading them


@functools.cache
def all_topics() -> TopicRegistry:
    return load_registry()


@dataclass(frozen=True)
class ShownRun:
    """What an experiment showed: its checks as (id, state) and how many figures."""

    checks: tuple[tuple[str, str], ...]
    figures: int
    timing: bool = False


@functools.cache
def reference_records(slug: str) -> dict[str, RunRecord]:
    """The default run of every experiment of the topic, as ``whylab check`` makes it (once
    per topic: both languages' notebooks are compared with the same runs)."""
    topic = all_topics().topics[slug]
    return {
        experiment.name: default_record(topic, experiment)
        for experiment in topic.experiments.values()
    }


def reference_runs(topic: Topic, names: tuple[str, ...] = ()) -> dict[str, ShownRun]:
    """What the default runs of every experiment (or those ``names``) show."""
    runs = {}
    for name, record in reference_records(topic.slug).items():
        if names and name not in names:
            continue
        checks = tuple((c.id, c.state) for c in record.result.checks)
        timing = topic.experiments[name].timing
        runs[name] = ShownRun(checks, len(record.result.figures), timing)
    return runs


@dataclass
class CheckRow:
    """One check as a result block shows it: its id and state, the mark in its first cell,
    and the "fails if" list of the controls that make it fail (summary and labels)."""

    id: str
    state: str
    mark: str = ""
    fails_if: str = ""
    controls: list[str] = field(default_factory=list)


class _CheckRows(HTMLParser):
    """The check rows of a notebook's result block."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[CheckRow] = []
        self._cells = 0
        self._reading = ""  # "mark", "summary" or "control": what the text goes to

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "tr" and "data-check" in values:
            self.rows.append(CheckRow(values["data-check"] or "", values.get("data-state") or ""))
            self._cells = 0
        elif not self.rows:
            return
        elif tag == "td":
            self._cells += 1
            self._reading = "mark" if self._cells == 1 else ""
        elif tag == "summary":
            self._reading = "summary"
        elif tag == "li":
            self.rows[-1].controls.append("")
            self._reading = "control"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "summary", "li"):
            self._reading = ""

    def handle_data(self, data: str) -> None:
        row = self.rows[-1] if self.rows else None
        if row is None or not data.strip():
            return
        if self._reading == "mark" and not row.mark:
            row.mark = data.strip()[0]
        elif self._reading == "summary":
            row.fails_if += data.strip()
        elif self._reading == "control":
            row.controls[-1] += data.strip()


class _DataTables(HTMLParser):
    """The text of each figure's data table in a block of HTML: one list per
    ``<details class="...">`` of the given class, its summary, captions, header and body
    cells and notes in reading order."""

    def __init__(self, details_class: str) -> None:
        super().__init__()
        self.details_class = details_class
        self.tables: list[list[str]] = []
        self._inside = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "details" and dict(attrs).get("class") == self.details_class:
            self.tables.append([])
            self._inside = True
        elif self._inside and tag in ("summary", "caption", "th", "td", "p"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self._inside = False
        elif self._cell is not None and tag in ("summary", "caption", "th", "td", "p"):
            self.tables[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def data_tables(html: str, details_class: str) -> list[list[str]]:
    parser = _DataTables(details_class)
    parser.feed(html)
    return parser.tables


def check_rows(cell: NotebookNode) -> list[CheckRow]:
    """The checks an executed experiment cell displayed."""
    rows = []
    for output in cell.outputs:
        html = output.get("data", {}).get("text/html", "")
        if 'class="whylab-result"' in html:
            parser = _CheckRows()
            parser.feed(html)
            rows += parser.rows
    return rows


def shown_run(cell: NotebookNode) -> ShownRun:
    """Read an executed experiment cell's checks and figures back from its outputs."""
    figures = 0
    for output in cell.outputs:
        data = output.get("data", {})
        if "image/svg+xml" in data:
            svg = minidom.parseString(data["image/svg+xml"]).documentElement
            assert svg.tagName == "svg" and svg.getAttribute("xmlns") == "http://www.w3.org/2000/svg"
            assert svg.getElementsByTagName("style"), "a figure without the explorer's styles"
            figures += 1
    rows = check_rows(cell)
    for row in rows:
        assert row.mark == STATE_MARKS[row.state], f"{row.id}: shows {row.mark!r} for {row.state}"
    return ShownRun(tuple((row.id, row.state) for row in rows), figures)


def mismatches(notebook: NotebookNode, expected: dict[str, ShownRun]) -> list[str]:
    """Where the executed ``notebook`` differs from the ``expected`` runs, in words."""
    problems = []
    seen = set()
    for cell in notebook.cells:
        name = cell.get("metadata", {}).get("whylab", {}).get("experiment")
        if name is None:
            continue
        seen.add(name)
        if name not in expected:
            problems.append(f"{name}: the notebook runs an experiment the topic does not")
            continue
        want, got = expected[name], shown_run(cell)
        if want.timing:
            if [i for i, _ in got.checks] != [i for i, _ in want.checks]:
                problems.append(f"{name}: check ids {got.checks} shown, {want.checks} expected")
        elif got.checks != want.checks:
            problems.append(f"{name}: checks {got.checks} shown, {want.checks} expected")
        if got.figures != want.figures:
            problems.append(f"{name}: {got.figures} SVG figures shown, {want.figures} expected")
    problems += [f"{name}: no cell runs it" for name in sorted(set(expected) - seen)]
    return problems


# A module the tests put beside the kernel's notebooks: the English notebook of a topic
# keeps its runs' results there, and the Chinese one, whose cells run the same code, reuses
# them. It lives in sys.modules, so it outlasts the %reset between notebooks.
SHARED_RUNS_MODULE = '''"""Results of one notebook's runs, for the next notebook to reuse."""

results = {}


def sharing(run):
    """``run``, remembering each result by experiment and parameters."""

    def shared_run(experiment, **params):
        key = (experiment.name, repr(sorted(params.items())))
        if key not in results:
            results[key] = run(experiment, **params)
        return results[key]

    return shared_run
'''
KEEP_RUNS = "import shared_runs\nshared_runs.results.clear()\nrun = shared_runs.sharing(run)"
REUSE_RUNS = "import shared_runs\nrun = shared_runs.sharing(run)"


@pytest.fixture(scope="module")
def execute(tmp_path_factory) -> Iterator[Callable[..., NotebookNode]]:
    """``execute(notebook, share=None)``: run every cell in one python3 kernel shared by the
    tests of this module, its working directory a temporary folder. Each notebook starts
    from an empty namespace (``%reset -f``); only the modules already imported are shared,
    which spares each notebook the seconds a fresh kernel takes to import whylab.

    ``share="keep"`` makes the notebook's ``run`` keep its results (a cell after the setup
    cell wraps it); ``share="reuse"`` makes the next notebook's ``run`` return them."""
    folder = tmp_path_factory.mktemp("notebooks")
    (folder / "shared_runs.py").write_text(SHARED_RUNS_MODULE, encoding="utf-8")
    clients: list[NotebookClient] = []

    def run(notebook: NotebookNode, share: str | None = None) -> NotebookNode:
        if share is not None:
            setup = next(i for i, c in enumerate(notebook.cells) if c.get("id") == "setup")
            wrap = {"keep": KEEP_RUNS, "reuse": REUSE_RUNS}[share]
            notebook.cells.insert(setup + 1, new_code_cell(wrap))
        notebook.cells.insert(0, new_code_cell("%reset -f"))
        client = NotebookClient(
            notebook,
            km=clients[0].km if clients else None,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": str(folder)}},
        )
        clients.append(client)
        client.execute(cleanup_kc=False)  # raises CellExecutionError if a cell fails
        return notebook

    yield run
    if clients and clients[0].km is not None:
        for client in clients:
            if client.kc is not None:
                client.kc.stop_channels()
        run_sync(clients[0].km.shutdown_kernel)(now=True)


def experiment_cells(notebook: NotebookNode) -> dict[str, NotebookNode]:
    return {
        cell.metadata["whylab"]["experiment"]: cell
        for cell in notebook.cells
        if "whylab" in cell.get("metadata", {})
    }


# ---------------------------------------------------------------- generated, not run


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("slug", SLUGS)
def test_notebook_is_valid_and_follows_the_page(slug: str, lang: str) -> None:
    topic = all_topics().topics[slug]
    notebook = nbformat.reads(notebook_json(topic, lang), as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    assert notebook.metadata.whylab.lang == lang
    cells = experiment_cells(notebook)
    assert list(cells) == [p.name for p in topic.placements()], "experiments out of page order"
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            assert "{{" not in cell.source, "a placement line leaked into the prose"
    assert topic.meta[lang].title in notebook.cells[0].source
    for name, cell in cells.items():
        experiment = topic.experiments[name]
        call = next(
            node.value
            for node in ast.parse(cell.source).body
            if isinstance(node, ast.Assign) and node.targets[0].id == "result"
        )
        shown = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
        assert shown == experiment.defaults(), f"{name}: the cell's parameters are not the defaults"
        for param in experiment.params:  # each parameter's comment: its label and its bounds
            line = next(l for l in cell.source.splitlines() if l.strip().startswith(param.name))
            assert param.label.get(lang) in line
            if param.kind in ("int", "float"):
                assert param.show(param.minimum) in line and param.show(param.maximum) in line
        assert (TIMING_COMMENT.get(lang) in cell.source) == experiment.timing


@pytest.mark.parametrize("slug", SLUGS)
def test_both_languages_run_the_same_code(slug: str) -> None:
    topic = all_topics().topics[slug]
    english, chinese = (build_notebook(topic, lang) for lang in LANGS)
    code = [[c.source for c in nb.cells if c.cell_type == "code"] for nb in (english, chinese)]
    assert len(code[0]) == len(code[1])
    assert 'show_in("zh")' in code[1][0]
    code[1][0] = code[1][0].replace('show_in("zh")', 'show_in("en")')
    for en, zh in zip(*code, strict=True):
        assert ast.dump(ast.parse(en)) == ast.dump(ast.parse(zh))  # comments aside


def test_a_topic_outside_the_package_has_no_notebook(fixture_registry) -> None:
    topic = next(iter(fixture_registry))
    with pytest.raises(LookupError, match="not part of the whylab package"):
        build_notebook(topic, "en")


# ---------------------------------------------------------------- the pieces


def test_parameter_comments_name_the_bounds_or_the_choices_in_the_language() -> None:
    fft = all_topics().topics["fft"].experiments["fft-vs-dft"]
    log2n, signal, _ = fft.params
    assert param_comment(log2n, "en").endswith("from 0 to 12")
    assert param_comment(log2n, "zh").endswith("范围 0 至 12")
    assert "'tones' (" in param_comment(signal, "en")
    assert param_comment(signal, "zh").startswith("信号：可选 'tones'（")
    flag = Param("grad", "bool", True, T("gradient", "梯度"))
    assert param_comment(flag, "zh") == "梯度：True 或 False"


def test_chinese_lines_join_without_a_space_but_code_and_headings_keep_their_lines() -> None:
    text = "## 标题\n第一行文字\n接着写。\nEnglish line\n中文\n```\n代码\n代码\n```"
    assert join_wide_line_breaks(text) == (
        "## 标题\n第一行文字接着写。\nEnglish line\n中文\n```\n代码\n代码\n```"
    )


def test_figure_styles_reach_only_their_own_drawing() -> None:
    css = figure_stylesheet("fig-1")
    assert "--c0:" in css and "prefers-color-scheme: dark" in css and ".s0" in css
    rules = re.findall(r"([^{}]+)\{", css)
    selectors = [s.strip() for rule in rules for s in rule.split(",") if "@media" not in s]
    assert selectors and all(s.startswith("svg#fig-1") for s in selectors), selectors


def test_run_checks_parameters_as_the_explorer_does() -> None:
    experiment = all_topics().topics["fft"].experiments["fft-vs-dft"]
    with pytest.raises(ParamError, match="log2n: must be <= 12"):
        run(experiment, log2n=13)
    with pytest.raises(ParamError, match="unknown parameter"):
        run(experiment, n=8)
    with pytest.raises(ValueError, match="lang must be one of en, zh"):
        show_in("fr")


# ---------------------------------------------------------------- served and exported

FAST_TOPIC = "wave-superposition"  # its experiments run in well under a second


@pytest.fixture(scope="module")
def one_topic_registry() -> TopicRegistry:
    return TopicRegistry([all_topics().topics[FAST_TOPIC]], all_topics().topics_dir)


@pytest.mark.parametrize("lang", LANGS)
def test_the_server_sends_the_notebook_as_a_download(one_topic_registry, tmp_path, lang) -> None:
    config = ExplorerConfig(cache_dir=tmp_path / "cache", workers=1, memory_limit_mb=1024)
    with TestClient(create_app(config, registry=one_topic_registry)) as client:
        answer = client.get(f"/{lang}/topics/{FAST_TOPIC}/notebook.ipynb")
        assert answer.status_code == 200
        assert answer.headers["content-type"] == MEDIA_TYPE
        disposition = f'attachment; filename="{FAST_TOPIC}-{lang}.ipynb"'
        assert answer.headers["content-disposition"] == disposition
        notebook = nbformat.reads(answer.text, as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata.whylab.lang == lang
        page = client.get(f"/{lang}/topics/{FAST_TOPIC}").text
        path = f"/{lang}/topics/{FAST_TOPIC}/notebook.ipynb"
        link = f'href="{path}" download="{FAST_TOPIC}-{lang}.ipynb"'
        assert link in page and translate("open_notebook", lang) in page
        assert client.get(f"/{lang}/topics/no-such-topic/notebook.ipynb").status_code == 404
        assert client.get(f"/xx/topics/{FAST_TOPIC}/notebook.ipynb").status_code == 404


def test_a_topic_without_a_notebook_has_no_link_and_no_route(client) -> None:
    page = client.get("/en/topics/tiny-demo")
    assert page.status_code == 200 and "notebook.ipynb" not in page.text
    assert client.get("/en/topics/tiny-demo/notebook.ipynb").status_code == 404


def test_the_static_export_writes_each_notebook_beside_its_page(one_topic_registry, tmp_path):
    site = tmp_path / "site"
    export_site(one_topic_registry, site, wheel=ServedWheel(tmp_path / "cache"))
    for lang in LANGS:
        folder = site / lang / "topics" / FAST_TOPIC
        notebook = nbformat.read(folder / "notebook.ipynb", as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata.whylab.lang == lang
        page = (folder / "index.html").read_text(encoding="utf-8")
        assert f'href="../../../{lang}/topics/{FAST_TOPIC}/notebook.ipynb"' in page


# ---------------------------------------------------------------- executed


def page_result_html(topic: Topic, record: RunRecord, lang: Lang) -> str:
    """The result block of ``record`` as the topic page shows it in ``lang``."""
    experiment = topic.experiments[record.experiment]
    view = ExperimentView(experiment, "experiment", dict(record.params), record=record)
    template = make_environment().get_template("_result.html")
    return template.render(lang=lang, links=Links(), topic=topic, view=view)


def outputs_html(cell: NotebookNode) -> str:
    """Everything an executed cell displayed as HTML or SVG, joined."""
    shown = [o.get("data", {}) for o in cell.get("outputs", [])]
    return "\n".join(d.get("text/html", "") + d.get("image/svg+xml", "") for d in shown)


def table_mismatches(notebook: NotebookNode, topic: Topic, lang: Lang) -> list[str]:
    """Where the data tables under the notebook's figures differ from the page's tables for
    the same run (for a timing experiment: in the header cells and the number of cells)."""
    problems = []
    for name, cell in experiment_cells(notebook).items():
        record = reference_records(topic.slug)[name]
        page = data_tables(page_result_html(topic, record, lang), "data-table")
        shown = data_tables(outputs_html(cell), "whylab-data-table")
        if len(page) != len(record.result.figures):
            problems.append(f"{name}: the page shows {len(page)} data tables")
        if topic.experiments[name].timing:
            page = [(len(table), table[:2]) for table in page]
            shown = [(len(table), table[:2]) for table in shown]
        if shown != page:
            problems.append(f"{name}: data tables {shown} shown, the page's are {page}")
    return problems


def control_mismatches(notebook: NotebookNode, topic: Topic, lang: Lang) -> list[str]:
    """Checks whose "fails if" list is missing or differs from the controls that break them."""
    problems = []
    for name, cell in experiment_cells(notebook).items():
        experiment = topic.experiments[name]
        for row in check_rows(cell):
            labels = [c.label.get(lang) for c in experiment.controls_breaking(row.id)]
            if not labels:
                problems.append(f"{name}: {row.id} has no negative control")
            elif row.fails_if != translate("fails_if", lang) or row.controls != labels:
                problems.append(f"{name}: {row.id} shows {row.fails_if!r} {row.controls}")
    return problems


CHECKS_TABLE = re.compile(r'<table class="whylab-checks">.*?</table>', re.S)
CHECK_NAME = re.compile(r'<td class="whylab-check-name".*?</td>', re.S)
CODE = re.compile(r"<code>(.*?)</code>", re.S)


def untranslated_shown(html: str) -> dict[str, list[str]]:
    """The English words in what a Chinese notebook displayed, by the rules a Chinese page
    is held to (tests/explorer/test_topics_valid.py): check values as a page's check values
    (code, None/True/False kept), everything else as a page's metrics, tables and figures.
    A check's name and its controls' labels are the topic's sentences, as on the page."""
    found = {}
    for table in CHECKS_TABLE.findall(html):
        table = CHECK_NAME.sub("", table)
        for code in CODE.findall(table):
            if words := untranslated_words(unescape(code)):
                found[f"<code> {unescape(code)}"] = words
        found |= untranslated_in_results(CODE.sub("", table))
    return found | untranslated_in_results(CHECKS_TABLE.sub("", html))


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_notebooks_run_and_show_what_check_reports(slug: str, execute) -> None:
    topic = all_topics().topics[slug]
    expected = reference_runs(topic)
    english = execute(build_notebook(topic, "en"), share="keep")
    chinese = execute(build_notebook(topic, "zh"), share="reuse")
    for lang, executed in (("en", english), ("zh", chinese)):
        outputs = [o for cell in executed.cells for o in cell.get("outputs", [])]
        assert not [o for o in outputs if o.output_type == "error"], lang
        assert mismatches(executed, expected) == [], lang
        assert table_mismatches(executed, topic, lang) == [], lang
        assert control_mismatches(executed, topic, lang) == [], lang
    shown = "\n".join(outputs_html(cell) for cell in experiment_cells(chinese).values())
    assert untranslated_shown(shown) == {}


def as_if_shown(notebook: NotebookNode, lang: Lang) -> NotebookNode:
    """``notebook`` with each experiment cell's outputs filled in without a kernel: the
    result block and the figures' data tables of the reference run, as show() makes them."""
    topic = all_topics().topics[notebook.metadata.whylab.topic]
    for name, cell in experiment_cells(notebook).items():
        result = reference_records(topic.slug)[name].result
        shown = [result_html(topic.experiments[name], result, lang)]
        shown += [figure_table_html(figure, lang) for figure in result.figures]
        cell.outputs = [new_output("display_data", data={"text/html": html}) for html in shown]
    return notebook


def test_the_tables_and_controls_comparisons_catch_a_difference() -> None:
    topic = all_topics().topics[FAST_TOPIC]
    for lang in LANGS:
        notebook = as_if_shown(build_notebook(topic, lang), lang)
        assert table_mismatches(notebook, topic, lang) == []
        assert control_mismatches(notebook, topic, lang) == []
    first, *_ = experiment_cells(notebook).values()  # the Chinese notebook's
    tables = first.outputs[1].data["text/html"]
    number = re.search(r'"text-align: right">([^<]+)<', tables).group(1)
    first.outputs[1].data["text/html"] = tables.replace(f">{number}<", ">-1<", 1)
    assert len(table_mismatches(notebook, topic, "zh")) == 1
    english = as_if_shown(build_notebook(topic, "zh"), "en")  # shown in the wrong language
    assert control_mismatches(english, topic, "zh")
    assert untranslated_shown("\n".join(map(outputs_html, english.cells)))
    first.outputs = first.outputs[:1]  # no data table under the figure
    assert len(table_mismatches(notebook, topic, "zh")) == 1


def _with_control(source: str, control: str) -> str:
    """The cell's run inside ``switched_on(control)``; its last line (show) stays outside."""
    *run_lines, show_line = source.splitlines()
    return "\n".join(
        [
            "from whylab.explorer.experiment import switched_on",
            f"with switched_on({control!r}):",
            textwrap.indent("\n".join(run_lines), "    "),
            show_line,
        ]
    )


@pytest.mark.slow
def test_the_comparison_catches_a_tampered_notebook(execute) -> None:
    topic = all_topics().topics["fft"]
    notebook = build_notebook(topic, "en")
    cells = experiment_cells(notebook)
    # A parameter changed: at n = 1 the operation-count checks are not applicable.
    assert "    log2n=10," in cells["fft-vs-dft"].source
    cells["fft-vs-dft"].source = cells["fft-vs-dft"].source.replace("log2n=10,", "log2n=0,")
    # A negative control switched on in the diagram's run.
    control = topic.experiments["butterfly"].controls[0]
    cells["butterfly"].source = _with_control(cells["butterfly"].source, control.name)
    notebook.cells = [notebook.cells[1], cells["fft-vs-dft"], cells["butterfly"]]
    executed = execute(notebook)
    problems = mismatches(executed, reference_runs(topic, ("fft-vs-dft", "butterfly")))
    assert len(problems) == 2, problems
    assert "fft-vs-dft" in problems[0] and "not_applicable" in problems[0]
    assert "butterfly" in problems[1] and "failed" in problems[1]
    assert any(check_id in problems[1] for check_id in control.breaks)
