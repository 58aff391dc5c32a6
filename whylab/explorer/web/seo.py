"""What search engines and link previews read: each page's description, Open Graph
tags, canonical and hreflang links, ``robots.txt``, ``sitemap.xml``, and the
``X-Robots-Tag: noindex`` header on fragments and the JSON API.

Absolute URLs come only from the configured public base URL
(``ExplorerConfig.public_url``, ``whylab serve --public-url``), never from the
request's ``Host`` header: a client chooses that header, and a page kept in the
page cache would hand its host to every later reader. Without a base URL the
server writes root-relative canonical and hreflang links (the reader's browser
resolves them against the address it really asked), leaves out ``og:url`` (Open
Graph wants an absolute URL) and serves no sitemap (sitemaps.org wants absolute
URLs); ``robots.txt`` is then served without its ``Sitemap:`` line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

from whylab.explorer.content.i18n import translate
from whylab.explorer.experiment import LANGS, Lang

HREFLANG: dict[str, str] = {"en": "en", "zh": "zh-Hans"}  # BCP 47, as <html lang>
OG_LOCALE: dict[str, str] = {"en": "en_US", "zh": "zh_CN"}  # Open Graph: language_TERRITORY
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"


def check_public_url(text: str) -> str:
    """The public base URL where readers reach the site (``https://host[:port][/prefix]``),
    without its trailing ``/``; ValueError naming what is wrong otherwise."""
    if any(ch.isspace() or ord(ch) < 32 or ch in "<>\"'`" for ch in text):
        raise ValueError(
            f"public URL must not contain spaces, quotes or control characters: {text!r}"
        )
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"public URL must be an http:// or https:// URL with a host, got {text!r}")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ValueError(f"public URL must not have a query or fragment, got {text!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"public URL must not carry a user name or password, got {text!r}")
    try:
        parts.port  # noqa: B018  # raises on a port out of range or not a number
    except ValueError:
        raise ValueError(f"public URL has a bad port, got {text!r}") from None
    return text.rstrip("/")


@dataclass(frozen=True)
class PageSeo:
    """The head of one page as search engines and link previews read it."""

    title: str
    description: str
    og_type: str  # "website" (home) or "article" (a topic)
    lang: Lang
    canonical: str | None  # None: a static export without a base URL
    hreflang: tuple[tuple[str, str], ...]  # (hreflang, href), x-default last when known
    noindex: bool = False  # search result listings: not pages of their own

    @property
    def og_url(self) -> str | None:
        """The canonical URL when absolute (Open Graph allows nothing else)."""
        return self.canonical if self.canonical and "://" in self.canonical else None

    @property
    def og_locale(self) -> str:
        return OG_LOCALE[self.lang]

    @property
    def og_locale_alternates(self) -> list[str]:
        return [OG_LOCALE[code] for code in LANGS if code != self.lang]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def page_seo(
    links,
    lang: Lang,
    title: str,
    description: str,
    og_type: str,
    fallback: dict[str, str],
    slug: str | None = None,
    tag: str | None = None,
    noindex: bool = False,
) -> PageSeo:
    """The head of a home (``slug`` None) or topic page. ``fallback`` is the page in each
    language as the page links it, for the hreflang links of an export with no address."""
    canonical = {code: links.canonical(code, slug=slug, tag=tag) for code in LANGS}
    if canonical[lang] is None:
        hreflang = tuple((HREFLANG[code], fallback[code]) for code in LANGS)
    else:
        hreflang = tuple((HREFLANG[code], canonical[code]) for code in LANGS)
        # x-default: the language chooser at the root on a plain home or topic's
        # alternates; a tag page has no neutral version, so its English one stands in.
        default = links.site_root() if tag is None else canonical["en"]
        hreflang += (("x-default", default),)
    return PageSeo(
        title=_one_line(title),
        description=_one_line(description),
        og_type=og_type,
        lang=lang,
        canonical=canonical[lang],
        hreflang=hreflang,
        noindex=noindex,
    )


def home_seo(links, lang: Lang, alternates: dict[str, str], tag: str | None, searched: bool):
    """A home page's head; a search listing is not a page of its own (noindex)."""
    return page_seo(
        links,
        lang,
        translate("site_name", lang),
        translate("site_description", lang),
        "website",
        alternates,
        tag=tag or None,
        noindex=searched,
    )


def topic_seo(links, lang: Lang, meta, slug: str) -> PageSeo:
    """A topic page's head: its title and summary. The canonical page drops the
    experiment parameters (one page, many states; tracking parameters never count)."""
    fallback = {code: links.topic(code, slug) for code in LANGS}
    return page_seo(links, lang, meta.title, meta.summary, "article", fallback, slug=slug)


def source_seo(links, lang: Lang, slug: str, experiment) -> PageSeo:
    """An experiment's source page: its title and description. Absolute canonical and
    hreflang links under the public URL, root-relative without one; x-default is the
    English page (a source page has no language-neutral version)."""
    paths = {code: links.source(code, slug, experiment.name) for code in LANGS}
    base = links.public_url or ""
    hreflang = tuple((HREFLANG[code], base + paths[code]) for code in LANGS)
    hreflang += (("x-default", base + paths["en"]),)
    title = getattr(experiment.title, lang)
    heading = translate("show_code_timing" if experiment.timing else "show_code", lang)
    return PageSeo(
        title=_one_line(f"{heading}{translate('colon', lang)}{title}"),
        description=_one_line(getattr(experiment.description, lang)),
        og_type="article",
        lang=lang,
        canonical=base + paths[lang],
        hreflang=hreflang,
    )


def error_page_seo(lang: Lang, title: str) -> PageSeo:
    """An error or not-found page: not a page to index, and no address of its own."""
    return PageSeo(
        title=_one_line(title),
        description=_one_line(translate("site_description", lang)),
        og_type="website",
        lang=lang,
        canonical=None,
        hreflang=(),
        noindex=True,
    )


# ---------------------------------------------------------------- robots.txt, sitemap.xml

# Result fragments, the card list and the measure form's target are parts of pages, a
# control run (its fragment and its page) is no result of the topic and costs a worker
# run, and the JSON API is data: crawlers are kept off them here, and the X-Robots-Tag below
# keeps them out of an index for crawlers that reach them anyway.
ROBOTS_DISALLOW = (
    "/api/",
    "/openapi.json",
    "/*/cards",
    "/*/topics/*/experiments/*/result",
    "/*/topics/*/experiments/*/measure",
    "/*/topics/*/experiments/*/control-",
)


def robots_txt(public_url: str | None) -> str:
    """The robots.txt (RFC 9309): every page allowed (no rule matches it), fragments and the
    API not. No ``Allow: /`` line: parsers that take the first matching rule, not the
    longest, would let it win over every ``Disallow``."""
    lines = ["User-agent: *"] + [f"Disallow: {path}" for path in ROBOTS_DISALLOW]
    if public_url:
        lines += ["", f"Sitemap: {public_url}/sitemap.xml"]
    return "\n".join(lines) + "\n"


def sitemap_xml(links, slugs: list[str]) -> str:
    """Every home and topic page in both languages, each with its language alternates as
    ``xhtml:link`` (Google's sitemap form of hreflang). ``links`` must have a public URL."""
    pages = [None, *slugs]
    entries = []
    for slug in pages:
        alternates = [(HREFLANG[code], links.canonical(code, slug=slug)) for code in LANGS]
        alternates.append(("x-default", links.site_root()))
        alt_lines = "".join(
            f'    <xhtml:link rel="alternate" hreflang="{code}" href="{xml_escape(href)}"/>\n'
            for code, href in alternates
        )
        for code in LANGS:
            loc = xml_escape(links.canonical(code, slug=slug))
            entries.append(f"  <url>\n    <loc>{loc}</loc>\n{alt_lines}  </url>\n")
    head = f'<urlset xmlns="{SITEMAP_NS}" xmlns:xhtml="{XHTML_NS}">\n'
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + head + "".join(entries) + "</urlset>\n"


# ---------------------------------------------------------------- noindex on fragments

# A control run's page is no page to index either: it is not the topic's result.
_NOT_PAGES = re.compile(
    r"^/(api/.*|openapi\.json|[^/]+/cards"
    r"|[^/]+/topics/[^/]+/experiments/[^/]+/(result|measure|control-result|control-run))$"
)


def is_fragment_path(path: str) -> bool:
    """Whether ``path`` answers a part of a page or data, not a page to index."""
    return _NOT_PAGES.match(path) is not None


class NoIndexMiddleware:
    """ASGI middleware: ``X-Robots-Tag: noindex`` on every answer from a fragment or the
    JSON API (errors too), so no search engine lists them as pages."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not is_fragment_path(scope.get("path", "")):
            await self.app(scope, receive, send)
            return

        async def send_marked(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k != b"x-robots-tag"]
                message = {**message, "headers": [*headers, (b"x-robots-tag", b"noindex")]}
            await send(message)

        await self.app(scope, receive, send_marked)
