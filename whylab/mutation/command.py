"""``whylab check --mutants``: run the mutants of each topic and print (or store) the scores."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from whylab.mutation.report import read_equivalents, update_table
from whylab.mutation.runner import MutantOutcome, Target, run_mutants

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = "whylab"


def topic_target(topic) -> Target:
    """What to mutate for a topic of whylab's own (its folder inside the package)."""
    try:
        relative = topic.folder.resolve().relative_to(REPO_ROOT / PACKAGE / "topics")
    except ValueError:
        raise ValueError(
            f"topic {topic.slug}: mutants run only for whylab's own topics "
            f"(its folder {topic.folder} is outside {REPO_ROOT / PACKAGE / 'topics'})"
        ) from None
    return Target(
        slug=topic.slug,
        root=REPO_ROOT,
        package=PACKAGE,
        module=f"{PACKAGE}.topics.{relative.as_posix().replace('/', '.')}.experiments",
        under_test=topic.under_test,
        equivalents=read_equivalents(topic.folder),
    )


def check_mutants(topics, sample: int | None, write_table: bool, console: Console,
                  errors: Console) -> int:
    """Exit 0 when every topic run had a passing baseline and nothing stale; 1 otherwise.

    The scores themselves do not decide the exit code: they are what the table reports.
    """
    results, problems = [], []
    for topic in topics:
        if not topic.under_test:
            problems.append(f"{topic.slug}: meta.toml declares no under_test files")
            continue
        target = topic_target(topic)

        def shown(outcome: MutantOutcome, done: int, total: int, slug=topic.slug) -> None:
            mark = {"killed": "[green]killed[/green]", "timed out": "[green]timed out[/green]",
                    "survived": "[red]survived[/red]", "equivalent": "equivalent"}
            console.print(f"{escape(slug)} {done}/{total} {mark[outcome.outcome]} "
                          f"{escape(outcome.mutant.id)} ({outcome.seconds:.1f} s) "
                          f"{escape(outcome.detail)}", highlight=False)

        console.print(f"[bold]{escape(topic.slug)}[/bold]: mutating "
                      f"{escape(', '.join(topic.under_test))}")
        result = run_mutants(target, sample, on_mutant=shown)
        results.append(result)
        problems.extend(result.problems)
    table = Table(title="mutants")
    for column in ("topic", "mutants", "tried", "killed", "timed out", "survived",
                   "equivalent", "score"):
        table.add_column(column)
    for r in results:
        score = "—" if r.score is None else f"{r.score:.0%}"
        table.add_row(escape(r.slug), str(r.mutants_total), str(len(r.outcomes)),
                      str(r.count("killed")), str(r.count("timed out")),
                      str(r.count("survived")), str(r.count("equivalent")), score)
    console.print(table)
    for r in results:
        for o in r.outcomes:
            if o.outcome == "survived":
                console.print(f"survived {escape(o.mutant.id)}: {escape(o.mutant.source_line)}",
                              highlight=False)
    if write_table:
        update_table(results)
    for problem in problems:
        errors.print(f"[red]✗[/red] {escape(problem)}")
    return 1 if problems else 0
