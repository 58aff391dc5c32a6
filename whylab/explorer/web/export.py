"""A static copy of the explorer, for hosting without a server.

``whylab export DIR`` writes every page in both languages as plain files with
relative links (so the copy also works opened straight from disk), the
stylesheet and script, one page per tag (the tag filter without a server),
each topic's Jupyter notebook in both languages (beside its page, as
``notebook.ipynb``) with the wheel of this whylab that its first cell installs
(``downloads/``, :mod:`whylab.explorer.web.wheel`; left out, and not named by the
notebooks, where it cannot be built), and every experiment run once at its default
parameters.
Parameter forms are shown disabled; with ``--live-url`` they link to a live explorer instead.

With ``--public-url`` (where the copy will be hosted) the pages carry absolute
canonical, hreflang and ``og:url`` links and the copy gets ``robots.txt`` and
``sitemap.xml``; without it both files are left out (a sitemap's URLs must be
absolute) and the hreflang links are relative. Crawlers read ``robots.txt`` only at
a host's root, so it helps only when the copy is hosted there.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from whylab.explorer.content.ipynb import WheelLink, has_notebook, notebook_json
from whylab.explorer.content.topics import TopicRegistry
from whylab.explorer.experiment import LANGS
from whylab.explorer.runs.cache import default_cache_dir
from whylab.explorer.runs.service import run_locally
from whylab.explorer.web.render import (
    ExperimentView,
    Links,
    home_context,
    make_environment,
    topic_context,
)
from whylab.explorer.web.seo import check_public_url, robots_txt, sitemap_xml
from whylab.explorer.web.static_files import STATIC_DIR
from whylab.explorer.web.wheel import ServedWheel, WheelUnavailable, download_path, wheel_link

REDIRECT_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0; url=en/index.html">
<title>whylab</title>
</head>
<body>
<p><a href="en/index.html" hreflang="en">English</a> ·
<a href="zh/index.html" hreflang="zh-Hans" lang="zh-Hans">中文</a></p>
</body>
</html>
"""


def export_site(
    registry: TopicRegistry,
    out_dir: Path,
    live_url: str | None = None,
    public_url: str | None = None,
    on_experiment: Callable[[str, str], None] | None = None,
    wheel: ServedWheel | None = None,
) -> list[Path]:
    """Write the site under ``out_dir``; returns the files written.

    ``on_experiment(topic, name)`` is called before each experiment runs (the
    CLI uses it for progress). ``wheel`` is where the wheel comes from (default: built,
    or kept from before, under the default cache directory).
    """
    public_url = check_public_url(public_url) if public_url is not None else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    env = make_environment()
    written: list[Path] = []

    def write(relative: str, html: str) -> None:
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        written.append(path)

    # Run every experiment once; both languages show the same run.
    runs: dict[tuple[str, str], ExperimentView] = {}
    for topic in registry:
        for placement in topic.placements():
            experiment = topic.experiments[placement.name]
            if on_experiment is not None:
                on_experiment(topic.slug, experiment.name)
            view = ExperimentView(experiment, placement.kind, experiment.defaults())
            try:
                view.record = run_locally(topic, experiment, experiment.defaults())
            except Exception as error:  # shown in the block, like a failed run on the server
                view.error = f"{type(error).__name__}: {error}"
            runs[(topic.slug, experiment.name)] = view

    write("index.html", REDIRECT_PAGE)
    link = (
        _write_wheel(out, wheel, public_url, written) if any(map(has_notebook, registry)) else None
    )
    for lang in LANGS:
        home = env.get_template("home.html")
        write(
            f"{lang}/index.html",
            home.render(**home_context(registry, lang, Links(1, live_url, public_url))),
        )
        for tag in registry.tags():
            context = home_context(registry, lang, Links(3, live_url, public_url), tag=tag.key)
            write(f"{lang}/tags/{tag.key}/index.html", home.render(**context))
        for topic in registry:
            views = {p.name: runs[(topic.slug, p.name)] for p in topic.placements()}
            context = topic_context(
                topic, lang, Links(3, live_url, public_url), views, page_query=[], registry=registry
            )
            write(
                f"{lang}/topics/{topic.slug}/index.html",
                env.get_template("topic.html").render(**context),
            )
            if has_notebook(topic):
                notebook = notebook_json(topic, lang, link)
                write(f"{lang}/topics/{topic.slug}/notebook.ipynb", notebook)
    if public_url is not None:
        write("robots.txt", robots_txt(public_url))
        write("sitemap.xml", sitemap_xml(Links(0, None, public_url), [t.slug for t in registry]))
    static_out = out / "static"
    static_out.mkdir(exist_ok=True)
    for asset in sorted(STATIC_DIR.rglob("*")):  # fonts/ too
        if asset.is_file():
            target = static_out / asset.relative_to(STATIC_DIR)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(asset, target)
            written.append(target)
    return written


def _write_wheel(
    out: Path, wheel: ServedWheel | None, public_url: str | None, written: list[Path]
) -> WheelLink | None:
    """Write the wheel the notebooks install under ``out``; how the notebooks name it
    (None where it cannot be built: they then say how to install a clone instead)."""
    wheel = wheel or ServedWheel(default_cache_dir())
    try:
        data = wheel.get().data
    except WheelUnavailable:
        return None
    path = out / download_path().lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    written.append(path)
    return wheel_link(wheel, public_url)
