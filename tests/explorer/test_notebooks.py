"""Every topic's Jupyter notebook runs, and reports the checks ``whylab check`` reports.

Each topic's notebook is generated in both languages and validated with
nbformat. The English notebooks are executed with nbclient (a python3 kernel
from ipykernel, in a temporary directory); each experiment cell's checks, read
back from what the cell displayed, must have the ids and states that the
default run of ``whylab check`` gives (the same call: ``run_locally`` at the
experiment's defaults), its figures must come out as SVG, and no cell may fail.
Timing experiments are compared by their check ids only: whether a speed claim
holds on a loaded machine can differ from one run to the next.

The Chinese notebooks are not all executed again (that would add a minute or
more on a loaded machine): their code cells must be the English ones token for
token, comments aside (the language is chosen once, in the setup cell), so they
run the same experiments; one Chinese notebook is executed, for the Chinese
side of what the cells display. All notebooks run in one kernel, each from an
empty namespace (see the ``execute`` fixture).

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
from dataclasses import dataclass
from html.parser import HTMLParser
from xml.dom import minidom

import nbformat
import pytest
from fastapi.testclient import TestClient
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from whylab.explorer.app import ExplorerConfig, create_app
from whylab.explorer.experiment import LANGS, Param, ParamError, T
from whylab.explorer.export import export_site
from whylab.explorer.i18n import translate
from whylab.explorer.ipynb import (
    MEDIA_TYPE,
    TIMING_COMMENT,
    build_notebook,
    join_wide_line_breaks,
    notebook_json,
    param_comment,
)
from whylab.explorer.notebook import STATE_MARKS, figure_stylesheet, run, show_in
from whylab.explorer.service import run_locally
from whylab.explorer.topics import (
    Topic,
    TopicRegistry,
    discover_topic_folders,
    load_registry,
    slug_of,
)

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


def reference_runs(topic: Topic, names: tuple[str, ...] = ()) -> dict[str, ShownRun]:
    """The default run of every experiment (or those ``names``), as ``whylab check`` makes it."""
    runs = {}
    for experiment in topic.experiments.values():
        if names and experiment.name not in names:
            continue
        result = run_locally(topic, experiment, experiment.defaults()).result
        checks = tuple((c.id, c.state) for c in result.checks)
        runs[experiment.name] = ShownRun(checks, len(result.figures), experiment.timing)
    return runs


class _CheckRows(HTMLParser):
    """The check rows of a result block: (id, state, the mark shown in the first cell)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in_first_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "tr" and "data-check" in values:
            self.rows.append([values["data-check"] or "", values.get("data-state") or "", ""])
            self._in_first_cell = False
        elif tag == "td" and self.rows and not self.rows[-1][2]:
            self._in_first_cell = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_first_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_first_cell and data.strip():
            self.rows[-1][2] += data.strip()[0]


def shown_run(cell: NotebookNode) -> ShownRun:
    """Read an executed experiment cell's checks and figures back from its outputs."""
    checks: list[tuple[str, str]] = []
    figures = 0
    for output in cell.outputs:
        data = output.get("data", {})
        if "image/svg+xml" in data:
            svg = minidom.parseString(data["image/svg+xml"]).documentElement
            assert svg.tagName == "svg" and svg.getAttribute("xmlns") == "http://www.w3.org/2000/svg"
            assert svg.getElementsByTagName("style"), "a figure without the explorer's styles"
            figures += 1
        elif 'class="whylab-result"' in data.get("text/html", ""):
            parser = _CheckRows()
            parser.feed(data["text/html"])
            for check_id, state, mark in parser.rows:
                assert mark == STATE_MARKS[state], f"{check_id}: shows {mark!r} for {state}"
                checks.append((check_id, state))
    return ShownRun(tuple(checks), figures)


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


@pytest.fixture(scope="module")
def execute(tmp_path_factory) -> Iterator[Callable[[NotebookNode], NotebookNode]]:
    """``execute(notebook)``: run every cell in one python3 kernel shared by the tests of
    this module, its working directory a temporary folder. Each notebook starts from an
    empty namespace (``%reset -f``); only the modules already imported are shared, which
    spares each notebook the seconds a fresh kernel takes to import whylab."""
    folder = str(tmp_path_factory.mktemp("notebooks"))
    clients: list[NotebookClient] = []

    def run(notebook: NotebookNode) -> NotebookNode:
        notebook.cells.insert(0, new_code_cell("%reset -f"))
        client = NotebookClient(
            notebook,
            km=clients[0].km if clients else None,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": folder}},
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
    export_site(one_topic_registry, tmp_path)
    for lang in LANGS:
        folder = tmp_path / lang / "topics" / FAST_TOPIC
        notebook = nbformat.read(folder / "notebook.ipynb", as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata.whylab.lang == lang
        page = (folder / "index.html").read_text(encoding="utf-8")
        assert f'href="../../../{lang}/topics/{FAST_TOPIC}/notebook.ipynb"' in page


# ---------------------------------------------------------------- executed


# Every topic in English; in Chinese one topic, for the Chinese side of show().
EXECUTED = [(slug, "en") for slug in SLUGS] + [(FAST_TOPIC, "zh")]


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "lang"), EXECUTED)
def test_notebook_runs_and_shows_what_check_reports(slug: str, lang: str, execute) -> None:
    topic = all_topics().topics[slug]
    executed = execute(build_notebook(topic, lang))
    assert not [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert mismatches(executed, reference_runs(topic)) == []


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
