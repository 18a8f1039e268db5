"""A report as one self-contained HTML page that can run nothing and load nothing.

A report is model output built from web text, so the page is safe by construction, three
ways over: markdown-it-py parses with raw HTML off (a `<script>` or `onclick=` in the
report is shown as text), links and images keep only the schemes a citation may have
(`text.urls.is_citable_url`: http, https and the library's `file:///`; in-page `#` anchors
too), and a Content-Security-Policy forbids every script, frame, font, image and fetch
should anything slip through. Images become links: showing one would load it. The PDF
and the Word file are made from this same page, so its rules hold for them too.
"""

from __future__ import annotations

import html
import re
from functools import cache
from importlib import resources

from markdown_it import MarkdownIt
from markdown_it.token import Token

from deep_research.export.report import ReportInfo, title_of
from deep_research.text.urls import is_citable_url

# Nothing may load or run; the inline stylesheet is the one thing allowed.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; font-src 'none'; "
    "script-src 'none'; connect-src 'none'; frame-src 'none'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
# Explicit direction overrides and isolates: in link text they can make a URL or a name
# read as another ("Trojan Source"). Arabic and Hebrew need none of them to read right.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def allowed_href(url: str) -> bool:
    """Whether a link may lead to `url`: a citable page or file, or a place in the page."""
    return is_citable_url(url) or (url.startswith("#") and "\\" not in url)


@cache
def _parser() -> MarkdownIt:
    # "commonmark" with raw HTML off, plus the GFM pieces reports use: tables,
    # ~~strikethrough~~ and bare URLs as links.
    parser = MarkdownIt("commonmark", {"html": False, "linkify": True})
    parser.enable(["table", "strikethrough", "linkify"])
    # markdown-it's own check refuses file: (library documents); ours refuses all but ours.
    parser.validateLink = allowed_href  # type: ignore[method-assign]
    return parser


def report_html(markdown: str, info: ReportInfo, *, title_heading: bool = True) -> str:
    """The whole page: title, the report, the footer; UTF-8, no external reference.

    Without `title_heading` the title is only the page's `<title>` (pandoc makes that the
    Word file's own title paragraph, which a heading would repeat)."""
    title, shown = title_of(markdown, info)
    body = render_body(markdown)
    heading = "" if shown or not title_heading else f"<h1>{html.escape(title)}</h1>\n"
    footer = "".join(f"<p>{html.escape(line)}</p>" for line in info.footer_lines())
    css = resources.files("deep_research.export").joinpath("report.css").read_text("utf-8")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{css}</style>\n</head>\n<body>\n"
        # <article>, not <main>: pandoc reads only a page's <main>, and the footer counts.
        f"<article>\n{heading}{body}</article>\n<footer>{footer}</footer>\n</body>\n</html>\n"
    )


def render_body(markdown: str) -> str:
    """The report's Markdown as HTML: raw HTML as text, only allowed links, no images."""
    parser = _parser()
    tokens = parser.parse(_BIDI_CONTROLS.sub("", markdown))
    for token in tokens:
        for child in token.children or []:
            if child.type == "image":
                _image_as_link(child)
            elif child.type == "link_open":
                # `rel`: a followed link tells the page neither where it came from nor a
                # handle back to this one.
                child.attrSet("rel", "noopener noreferrer")
    return parser.renderer.render(tokens, parser.options, {})


def _image_as_link(token: Token) -> None:
    """An image becomes its alt text linking to it (an image shown would be a load)."""
    src = str(token.attrGet("src") or "")  # markdown-it made an image only if allowed_href
    alt = "".join(child.content for child in token.children or []) or "image"
    # Inline HTML built from escaped parts: the only raw HTML the page ever contains.
    token.type, token.children = "html_inline", None
    token.content = (
        f'<a href="{html.escape(src)}" rel="noopener noreferrer">'
        f"{html.escape(f'[image: {alt}]')}</a>"
    )
