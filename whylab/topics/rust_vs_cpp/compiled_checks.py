"""Checks the compiled experiments share: a rustc refusal, a clean run, a sanitizer report.

Each returns a :class:`Check`, or a not-applicable one that names the toolchain a
missing compiler needs or why a sanitized run could not start here.
"""

from __future__ import annotations

import re

from whylab.explorer.experiment import Check, T, Text
from whylab.topics.rust_vs_cpp import toolchain

NEEDS_RUSTC = T("needs rustc on the server's PATH (Debian package rustc, or rustup)",
                "服务器的 PATH 上需要有 rustc（Debian 软件包 rustc，或 rustup）")
NEEDS_CXX = T("needs g++ or clang++ on the server's PATH (Debian package g++)",
              "服务器的 PATH 上需要有 g++ 或 clang++（Debian 软件包 g++）")


def refused_why(refused: str) -> Text:
    return T(f"the sanitizer's shadow memory needs terabytes of virtual addresses, which this "
             f"worker's memory limit forbids ({refused}); `whylab check` and a server started "
             "with --memory-limit-mb 0 run it",
             f"消毒器的影子内存要占用数 TB 的虚拟地址，而本工作进程的内存上限不允许（{refused}）；"
             "`whylab check` 或以 --memory-limit-mb 0 启动的服务器可以运行它")


def rejected_check(check_id: str, name: Text, build, code: str, function: str) -> Check:
    """rustc refused the program with ``code`` in ``function`` (read from its JSON output)."""
    if build is None:
        return Check.not_applicable(id=check_id, name=name, expected=code, why=NEEDS_RUSTC)
    found = [d for d in build.diagnostics if d.function == function]
    if found:
        measured = T("; ".join(f"{d.code} (line {d.line}): “{d.message}”" for d in found),
                     "；".join(f"{d.code}（第 {d.line} 行）：“{d.message}”" for d in found))
    elif build.ok:
        measured = T("compiled", "编译通过")
    else:
        measured = T(f"no error in {function}()", f"{function}() 中没有错误")
    return Check(id=check_id, name=name,
                 passed=not build.ok and [d.code for d in found] == [code],
                 measured=measured,
                 expected=T(f"{code} in {function}()", f"{function}() 中的 {code}"))


def clean_run_check(check_id: str, name: Text, build, run, expected_output: str,
                    needs: Text, sanitized: bool = False) -> Check:
    """The program ran, exited 0, printed ``expected_output`` and no sanitizer report."""
    if build is None:
        return Check.not_applicable(id=check_id, name=name, expected=expected_output, why=needs)
    if run is not None and run.refused:
        return Check.not_applicable(id=check_id, name=name, expected=expected_output,
                                    why=refused_why(run.refused))
    if not build.ok or run is None:
        return Check(id=check_id, name=name, passed=False,
                     measured=T("did not compile", "没有编译通过"), expected=expected_output)
    reports = toolchain.sanitizer_reports(run.stderr) if sanitized else []
    output = run.stdout.strip()
    passed = run.returncode == 0 and not reports and output == expected_output
    shown = f"exit {run.returncode}: {output}" + (f"; {', '.join(reports)}" if reports else "")
    shown_zh = f"退出码 {run.returncode}: {output}" + (
        "；" + "、".join(f"“{r}”" for r in reports) if reports else "")
    return Check(id=check_id, name=name, passed=passed,
                 measured=T(shown, shown_zh),
                 expected=T(f"exit 0: {expected_output}", f"退出码 0: {expected_output}"))


def report_check(check_id: str, name: Text, build, run, kind: str) -> Check:
    """The C++ program compiled without complaint and its run drew a ``kind`` report."""
    if build is None:
        return Check.not_applicable(id=check_id, name=name, expected=kind, why=NEEDS_CXX)
    if run is not None and run.refused:
        return Check.not_applicable(id=check_id, name=name, expected=kind,
                                    why=refused_why(run.refused))
    if not build.ok or run is None:
        return Check(id=check_id, name=name, passed=False,
                     measured=T("did not compile", "没有编译通过"), expected=kind)
    reports = toolchain.sanitizer_reports(run.stderr)
    quoted = "、".join(f"“{r}”" for r in reports)  # the sanitizer's words, as it printed them
    return Check(id=check_id, name=name, passed=kind in reports,
                 measured=T(f"compiled; report: {', '.join(reports)}" if reports else
                            f"compiled; no report, exit {run.returncode}",
                            f"编译通过；报告：{quoted}" if reports else
                            f"编译通过；没有报告，退出码 {run.returncode}"),
                 expected=T(f"compiled; report: {kind}", f"编译通过；报告：“{kind}”"))


def source_of(path_text: str, start_pattern: str) -> str:
    """The lines of one function of a program, from its header to its closing brace, in
    “…”: quoted as the file has it (the page's word checks leave quotations alone)."""
    lines = path_text.splitlines()
    start = next((i for i, row in enumerate(lines) if re.search(start_pattern, row)), None)
    if start is None:
        return ""
    depth, body = 0, []
    for row in lines[start:]:
        body.append(row)
        depth += row.count("{") - row.count("}")
        if depth == 0 and "}" in row:
            break
    return "“" + "\n".join(body) + "”"
