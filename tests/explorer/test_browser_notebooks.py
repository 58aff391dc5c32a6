"""In a real browser: every topic page links its Jupyter notebook, which downloads as a
valid notebook in the page's language, and the wheel its setup cell names (the server has
no public URL here, so by its path on the site) downloads as this whylab's wheel (the
browser tests' server and browser, conftest.py)."""

from __future__ import annotations

import io
import zipfile

import nbformat
import pytest

import whylab
from tests.explorer.test_browser import open_page
from whylab.explorer.content.i18n import translate

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_notebook_link_downloads_the_topic_as_a_notebook(
    browser, base_url, registry, lang, tmp_path
):
    context, page, problems = open_page(browser)
    page.goto(f"{base_url}/{lang}/topics/fft")
    link = page.get_by_role("link", name=translate("open_notebook", lang))
    assert link.count() == 1
    assert link.get_attribute("href") == f"/{lang}/topics/fft/notebook.ipynb"
    answer = page.request.get(base_url + link.get_attribute("href"))
    assert answer.headers["content-type"] == "application/x-ipynb+json"
    assert answer.headers["content-disposition"] == f'attachment; filename="fft-{lang}.ipynb"'
    with page.expect_download() as download_info:
        link.click()
    download = download_info.value
    assert download.suggested_filename == f"fft-{lang}.ipynb"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    notebook = nbformat.read(saved, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.whylab.lang == lang
    assert notebook.cells[0].source.startswith(f"# {registry.get('fft').meta[lang].title}")
    setup = next(cell.source for cell in notebook.cells if cell.get("id") == "setup")
    assert "WHEEL = None" in setup and "://" not in setup
    path = next(line.removeprefix("#").strip() for line in setup.splitlines() if ".whl" in line)
    wheel = page.request.get(base_url + path)
    assert wheel.status == 200 and wheel.headers["content-type"] == "application/zip"
    metadata = zipfile.ZipFile(io.BytesIO(wheel.body())).read(
        f"whylab-{whylab.__version__}.dist-info/METADATA"
    )
    assert f"\nVersion: {whylab.__version__}\n".encode() in metadata
    context.close()
    assert problems == [], problems
