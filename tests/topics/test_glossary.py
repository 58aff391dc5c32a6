"""One Chinese term per concept (whylab/topics/glossary.toml), wherever a reader sees text.

What a reader sees in Chinese: every topic's zh.md and the Chinese fields of its
meta.toml (the ``synonyms`` excepted: they are the words readers *search* with, and list
variants on purpose), the interface strings and templates, and every string in the
package's code that holds Chinese -- check names, metrics, tables, figure and diagram
labels, notebooks' cells, all of which are written as string literals. The test fails
on any variant the glossary replaces, on a calque it lists, and on an ASCII double
quote inside Chinese text (Chinese takes “” or 「」). Two negative controls plant a
variant and an ASCII quote and must be caught.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "whylab"
GLOSSARY = tomllib.loads((PACKAGE / "topics" / "glossary.toml").read_text(encoding="utf-8"))
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# ASCII " with Chinese right beside it (a space between is allowed)
ASCII_QUOTE_IN_CHINESE = re.compile(
    r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef] ?\"|\" ?[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
CODE_OR_MATH = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$", re.DOTALL)


def forbidden() -> dict[str, str]:
    """variant -> what to write instead."""
    wrong = {}
    for term in GLOSSARY["term"]:
        for variant in term["variants"]:
            wrong[variant] = f"{term['zh']} ({term['en']})"
    for calque in GLOSSARY["calque"]:
        wrong[calque["replaces"]] = calque["zh"]
    return wrong


def python_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal in ``path`` that holds Chinese (docstrings,
    which no reader of a page sees, left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant):
            docstrings.add(id(body[0].value))
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings and CJK.search(node.value)):
            found.append((node.lineno, node.value))
    return found


def _meta_texts(path: Path) -> list[tuple[int, str]]:
    zh = tomllib.loads(path.read_text(encoding="utf-8")).get("zh", {})
    texts = []
    for key, value in zh.items():
        if key == "synonyms":
            continue
        texts += [(0, v) for v in (value if isinstance(value, list) else [value])]
    return texts


def reader_texts(package: Path = PACKAGE) -> dict[str, list[tuple[int, str]]]:
    """Every place with Chinese a reader sees: location -> [(line, text), ...]."""
    texts: dict[str, list[tuple[int, str]]] = {}
    for path in sorted((package / "topics").rglob("zh.md")):
        prose = path.read_text(encoding="utf-8")
        texts[str(path)] = [(n, CODE_OR_MATH.sub(" ", line)) for n, line in
                            enumerate(prose.splitlines(), start=1)]
    for path in sorted((package / "topics").rglob("meta.toml")):
        texts[str(path)] = _meta_texts(path)
    for path in sorted((package / "explorer" / "templates").rglob("*.html")):
        texts[str(path)] = list(enumerate(path.read_text(encoding="utf-8").splitlines(), 1))
    for folder in ("topics", "explorer"):
        for path in sorted((package / folder).rglob("*.py")):
            strings = python_strings(path)
            if strings:
                texts[str(path)] = strings
    return texts


def problems_in(texts: dict[str, list[tuple[int, str]]]) -> list[str]:
    wrong = forbidden()
    found = []
    for where, lines in texts.items():
        for line, text in lines:
            for variant, right in wrong.items():
                if variant in text:
                    found.append(f"{where}:{line}: {variant!r}, write {right}")
            if ASCII_QUOTE_IN_CHINESE.search(text):
                found.append(f"{where}:{line}: ASCII quote in Chinese text: {text[:60]!r}")
    return found


def test_glossary_lists_one_term_per_concept():
    terms = GLOSSARY["term"]
    assert len({t["en"] for t in terms}) == len(terms)
    assert len({t["zh"] for t in terms}) == len(terms)
    for term in terms:
        assert term["zh"] not in term["variants"] and term["variants"], term
        assert {"concept", "en", "zh", "variants"} <= set(term)


def test_no_variant_and_no_ascii_quote_anywhere_a_reader_sees_chinese():
    texts = reader_texts()
    assert any(where.endswith("i18n.py") for where in texts)  # the interface is scanned
    assert sum(where.endswith("zh.md") for where in texts) >= 10
    found = problems_in(texts)
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "planted, caught",
    [
        ("另一个反向对照让循环跑在稠密矩阵上。", "'反向对照', write 阴性对照"),
        ("第一次调用要换入内存。", "'换入内存'"),
        ('所谓"打包"数组其实是完整矩阵', "ASCII quote"),
        ("## 时钟同意吗？", "write 实测耗时是否吻合"),
    ],
)
def test_a_planted_variant_is_caught(tmp_path, planted, caught):
    topic = tmp_path / "topics" / "planted"
    topic.mkdir(parents=True)
    (topic / "zh.md").write_text(f"正文。\n\n{planted}\n", encoding="utf-8")
    (topic / "experiments.py").write_text(f"NAME = {planted!r}\n", encoding="utf-8")
    (tmp_path / "explorer" / "templates").mkdir(parents=True)
    found = problems_in(reader_texts(tmp_path))
    assert any(caught in p and "zh.md:3" in p for p in found), found
    assert any(caught in p and "experiments.py:1" in p for p in found), found


def test_code_and_math_in_prose_are_not_prose():
    clean = {"x.md": [(1, CODE_OR_MATH.sub(" ", '用 `print("打包存储")` 和 $a"b$ 表示。'))]}
    assert problems_in(clean) == []
