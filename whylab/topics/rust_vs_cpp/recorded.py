"""What the compiled programs did when they were last compiled and run, shown where they cannot run.

``recorded.json`` holds real runs of the compiled experiments, one per choice of program
(each ``case``), at their default sizes, made by ``python -m
whylab.topics.rust_vs_cpp.record`` on a machine with rustc and g++: every check as it came
out then, every table, the toolchains' versions, the date and the machine, and the SHA-256
of each program the run compiled (observed by :func:`toolchain.sources_built`).

Where a check of a run here is not applicable (no rustc or g++ on this machine, or a worker
that cannot give a sanitizer its address space), :func:`with_recording` appends the
recorded run: a note saying it is not this run, its checks as a table with the outcome they
had then, which program needs which compiler (and whether it is here), and its tables, each
titled with the date. The live checks stay not applicable;
nothing recorded is ever turned into a ✓. A recording whose programs have changed since is
not shown (its source hashes no longer match).
"""

from __future__ import annotations

import hashlib
import json
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


def find(experiment: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The recorded run of ``experiment`` with the same program choices, if still current."""
    for entry in load().get("runs", []):
        if entry["experiment"] == experiment and \
                choice_key(entry["params"]) == choice_key(params):
            current = all(source_hash(name) == digest
                          for name, digest in entry["sources"].items())
            return entry if current else None
    return None


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


def programs_table(sources: dict[str, str]) -> Table:
    """The programs the run compiled, the compiler each needs, and whether it is here."""
    rust = (T("“rustc” (or rustup's)", "“rustc”（或用 “rustup” 安装的）"), "“rustc”")
    cxx = (T("“g++” or “clang++”", "“g++” 或 “clang++”"), "“g++”")  # (compiler, package)
    rows = [[source, *(rust if source.endswith(".rs") else cxx),
             T("found", "有") if toolchain.compiler_for(source) else T("missing", "没有")]
            for source in sources]
    return Table(title=T("What this experiment compiles, and the compiler each program needs",
                         "这个实验编译什么，以及每个程序需要的编译器"),
                 columns=[T("program", "程序"), T("compiler on PATH", "PATH 上的编译器"),
                          T("Debian package", "软件包（“Debian”）"),
                          T("on this server", "本服务器上")], rows=rows)


def quoted(claim: Text) -> Text:
    """A claim as the page stated it then, in quotation marks."""
    return T(f"“{claim.en}”", f"“{claim.zh}”")


def with_recording(result: Result, experiment: str, params: dict[str, Any]) -> Result:
    """``result``, and where one of its checks could not run here, the recorded run after it."""
    if not any(c.state == "not_applicable" for c in result.checks):
        return result
    entry = find(experiment, params)
    if entry is None:
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
    result.tables.append(programs_table(entry["sources"]))
    for table in entry["tables"]:
        title = words_from_json(table["title"])
        result.tables.append(Table(
            title=T(f"Recorded on {date}: {title.en}", f"记录于 {date}：{title.zh}"),
            columns=[words_from_json(c) for c in table["columns"]],
            rows=[[words_from_json(cell) for cell in row] for row in table["rows"]]))
    return result
