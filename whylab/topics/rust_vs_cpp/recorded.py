"""What the compiled programs did when they were last compiled and run, shown where they cannot run.

``recorded.json`` holds real runs of the compiled experiments, one per choice of program
(each ``case``), at their default sizes, made by ``python -m
whylab.topics.rust_vs_cpp.record`` on a machine with rustc and g++: every check as it came
out then, every table, the toolchains' versions, the date and the machine, and each build
the run asked for (observed by :func:`toolchain.noting_builds`): the program's SHA-256, the
flags the experiment gave the compiler, whether it emitted assembly, and the version of the
compiler that built it.

Where a check of a run here is not applicable (no rustc or g++ on this machine, or a worker
that cannot give a sanitizer its address space), :func:`shown_where_not_applicable` appends
the recorded run: a note saying it is not this run, its checks as a table with the outcome
they had then, which program needs which compiler (and whether it is here), and its tables,
each titled with the date. The live checks stay not applicable; nothing recorded is ever
turned into a ✓. A recording is shown only for the builds this run asked for: the same
programs (their hashes), the same flags (a control or an edit that changes them hides it),
and, for each compiler that is here, the same version; otherwise a note says it is not shown.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from whylab.explorer.experiment import Result, T, Table, Text
from whylab.topics.rust_vs_cpp import toolchain

RECORD = Path(__file__).with_name("recorded.json")
OUTCOMES = {"passed": T("passed", "通过"), "failed": T("failed", "未通过"),
            "not_applicable": T("not applicable", "不适用"),
            "inconclusive": T("inconclusive", "无定论")}


def source_hash(source: str) -> str:
    return hashlib.sha256((toolchain.PROGRAMS / source).read_bytes()).hexdigest()


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The recording (empty when there is none)."""
    return json.loads(RECORD.read_text()) if RECORD.exists() else {}


def choice_key(params: dict[str, Any]) -> dict[str, str]:
    """The parameters that pick a program (the choices); sizes are recorded at defaults."""
    return {name: value for name, value in params.items() if isinstance(value, str)}


def recorded_run(experiment: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The recorded run of ``experiment`` with the same program choices, current or not."""
    return next((entry for entry in load().get("runs", []) if entry["experiment"] == experiment
                 and choice_key(entry["params"]) == choice_key(params)), None)


def build_to_json(asked: toolchain.BuildAsked) -> dict[str, Any]:
    return {"source": asked.source, "sha256": source_hash(asked.source),
            "flags": list(asked.flags), "assembly": asked.assembly, "compiler": asked.compiler}


def builds_to_json(asked: list[toolchain.BuildAsked]) -> list[dict[str, Any]]:
    """Each distinct build asked for, in a fixed order."""
    return [build_to_json(a) for a in sorted(set(asked), key=lambda a: (a.source, a.flags,
                                                                         a.assembly))]


def build_key(source: str, flags, assembly: bool) -> tuple[str, tuple[str, ...], bool]:
    return source, tuple(flags), assembly


def is_current(entry: dict[str, Any], asked: list[toolchain.BuildAsked]) -> bool:
    """Whether the recorded run built what this run asked for: the same programs, unchanged,
    with the same flags, by the same compiler versions where a compiler is here."""
    here = {build_key(a.source, a.flags, a.assembly): a.compiler for a in asked}
    then = {build_key(b["source"], b["flags"], b["assembly"]): b for b in entry["builds"]}
    return here.keys() == then.keys() and all(
        source_hash(b["source"]) == b["sha256"] and here[key] in ("", b["compiler"])
        for key, b in then.items())


# ---------------------------------------------------------------- to and from JSON


def words_to_json(value: Any) -> Any:
    return {"en": value.en, "zh": value.zh} if isinstance(value, Text) else value


def words_from_json(value: Any) -> Any:
    return T(value["en"], value["zh"]) if isinstance(value, dict) else value


def table_to_json(table: Table) -> dict[str, Any]:
    return {"title": words_to_json(table.title),
            "columns": [words_to_json(c) for c in table.columns],
            "rows": [[words_to_json(cell) for cell in row] for row in table.rows]}


def result_to_json(result: Result) -> dict[str, Any]:
    return {"checks": [{"id": c.id, "name": words_to_json(c.name),
                        "measured": words_to_json(c.measured),
                        "expected": words_to_json(c.expected), "state": c.state}
                       for c in result.checks],
            "tables": [table_to_json(t) for t in result.tables]}


# ---------------------------------------------------------------- on the page


def toolchains_line(record: dict[str, Any]) -> Text:
    versions = record["toolchains"].values()
    return T(", ".join(versions), "、".join(f"“{v}”" for v in versions))  # printed as is


def programs_table(builds: list[dict[str, Any]]) -> Table:
    """The builds the run made: program, flags, the compiler that built it then, the
    compiler it needs, and whether that is here."""
    rust = (T("“rustc” (or rustup's)", "“rustc”（或用 “rustup” 安装的）"), "“rustc”")
    cxx = (T("“g++” or “clang++”", "“g++” 或 “clang++”"), "“g++”")  # (compiler, package)
    rows = [[b["source"], "“" + " ".join(b["flags"]) + "”" if b["flags"] else "—",
             f"“{b['compiler']}”", *(rust if b["source"].endswith(".rs") else cxx),
             T("found", "有") if toolchain.compiler_for(b["source"]) else T("missing", "没有")]
            for b in builds]
    return Table(title=T("What this experiment compiles, and the compiler each program needs",
                         "这个实验编译什么，以及每个程序需要的编译器"),
                 columns=[T("program", "程序"), T("flags", "编译选项"),
                          T("built then by", "当时的编译器"),
                          T("compiler on PATH", "PATH 上的编译器"),
                          T("Debian package", "软件包（“Debian”）"),
                          T("on this server", "本服务器上")], rows=rows)


def quoted(claim: Text) -> Text:
    """A claim as the page stated it then, in quotation marks."""
    return T(f"“{claim.en}”", f"“{claim.zh}”")


NOT_CURRENT = T(
    "The checks of this run that are not applicable could not run on this machine. A "
    "recording of these programs exists but is not shown: it was built from other sources, "
    "with other flags or by other compiler versions than this run asked for.",
    "本次运行中不适用的检查无法在这台机器上运行。这些程序有一份记录，但没有显示：它所编译的"
    "源代码、编译选项或编译器版本与本次运行所要求的不同。")


def shown_where_not_applicable(experiment: str) -> Callable:
    """Decorate an experiment's function: note the builds it asks for, and where one of its
    checks could not run here, append the recorded run made with those builds."""
    def wrap(run: Callable[..., Result]) -> Callable[..., Result]:
        @functools.wraps(run)
        def run_and_show(**params: Any) -> Result:
            with toolchain.noting_builds() as asked:
                result = run(**params)
            return with_recording(result, experiment, params, asked)
        return run_and_show
    return wrap


def with_recording(result: Result, experiment: str, params: dict[str, Any],
                   asked: list[toolchain.BuildAsked]) -> Result:
    """``result``, and where one of its checks could not run here, the recorded run after it."""
    if not any(c.state == "not_applicable" for c in result.checks):
        return result
    entry = recorded_run(experiment, params)
    if entry is None:
        return result
    if not is_current(entry, asked):
        result.notes.append(NOT_CURRENT)
        return result
    record = load()
    date, tools, machine = record["recorded_on"], toolchains_line(record), record["machine"]
    cpu, cores = machine["cpu"], machine["cores"]
    sizes = ", ".join(f"“{k} = {v}”" for k, v in entry["params"].items()) or "—"
    result.notes.append(T(
        "The checks of this run that are not applicable could not run on this machine. The "
        f"tables titled “Recorded on {date}” show what these programs did when they were "
        f"last compiled and run: on {date}, with {tools.en}, on {cpu} ({cores} cores), with "
        f"{sizes}. They are recorded outputs, not this run's.",
        f"本次运行中不适用的检查无法在这台机器上运行。标题为“记录于 {date}”的表格是这些"
        f"程序上一次被编译和运行时的输出：{date}，用 {tools.zh}，在 {cpu}（{cores} 核）上，"
        f"参数 {sizes}。它们是记录下来的输出，不是本次运行的结果。"))
    rows = [[quoted(words_from_json(c["name"])), words_from_json(c["measured"]),
             words_from_json(c["expected"]), OUTCOMES[c["state"]]] for c in entry["checks"]]
    result.tables.append(Table(
        title=T(f"Recorded on {date} ({tools.en}): the checks as they came out then",
                f"记录于 {date}（{tools.zh}）：当时各项检查的结果"),
        columns=[T("check", "检查"), T("measured then", "当时测得"), T("expected", "预期"),
                 T("outcome then", "当时的结论")], rows=rows))
    result.tables.append(programs_table(entry["builds"]))
    for table in entry["tables"]:
        title = words_from_json(table["title"])
        result.tables.append(Table(
            title=T(f"Recorded on {date}: {title.en}", f"记录于 {date}：{title.zh}"),
            columns=[words_from_json(c) for c in table["columns"]],
            rows=[[words_from_json(cell) for cell in row] for row in table["rows"]]))
    return result
