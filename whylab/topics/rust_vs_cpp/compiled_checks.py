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
    return T(f"the sanitizer's shadow memory needs terabytes of virtual addresses, and this "
             f"worker's hard address-space limit ({refused}) cannot be lifted for the program "
             "without CAP_SYS_RESOURCE; a worker that lowers only its soft limit, `whylab "
             "check`, or a server started with --memory-limit-mb 0 runs it",
             f"消毒器的影子内存要占用数 TB 的虚拟地址，而本工作进程的地址空间硬上限（{refused}）"
             "在没有 CAP_SYS_RESOURCE 权限时无法为这个程序放开；只降低软上限的工作进程、"
             "`whylab check`，或以 --memory-limit-mb 0 启动的服务器可以运行它")


def how_it_ended(run) -> tuple[str, str]:
    """What to add to a run's measured value (English, Chinese) when a limit ended it."""
    if run.timed_out:
        return "; stopped: wall-clock limit", "；被终止：超过墙钟时间上限"
    if run.stopped:
        return f"; stopped: {run.stopped}", f"；被终止：{run.stopped}"
    return "", ""


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
    ended_en, ended_zh = how_it_ended(run)
    shown = f"exit {run.returncode}: {output}" + (
        f"; {', '.join(reports)}" if reports else "") + ended_en
    shown_zh = f"退出码 {run.returncode}: {output}" + (
        "；" + "、".join(f"“{r}”" for r in reports) if reports else "") + ended_zh
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
    ended_en, ended_zh = how_it_ended(run)
    return Check(id=check_id, name=name, passed=kind in reports,
                 measured=T((f"compiled; report: {', '.join(reports)}" if reports else
                             f"compiled; no report, exit {run.returncode}")
                            + ended_en,
                            (f"编译通过；报告：{quoted}" if reports else
                             f"编译通过；没有报告，退出码 {run.returncode}")
                            + ended_zh),
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
