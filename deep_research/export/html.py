"""A report as one self-contained HTML page that can run nothing and load nothing.

A report is model output built from web text, so the page is safe by construction, three
ways over: markdown-it-py parses with raw HTML off (a `<script>` or `onclick=` in the
report is shown as text), links and images keep only http, https, in-page `#` anchors and
`file:///` links to the library's own documents (the paths `ReportInfo.library` names; any
other file, `/etc/passwd` say, is plain text), and a Content-Security-Policy forbids every
script, frame, font, image and fetch should anything slip through. Images become links:
showing one would load it. The PDF and the Word file are made from this same page, so its
rules hold for them too. A table longer than `TABLE_ROWS` rows is cut into several.
"""

from __future__ import annotations

import copy
import html
import re
from functools import lru_cache
from importlib import resources
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

from deep_research.export.report import ReportInfo, title_of
from deep_research.text.urls import is_file_url, is_web_url

# Nothing may load or run; the inline stylesheet is the one thing allowed.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; font-src 'none'; "
    "script-src 'none'; connect-src 'none'; frame-src 'none'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
# Explicit direction overrides and isolates: in link text they can make a URL or a name
# read as another ("Trojan Source"). Arabic and Hebrew need none of them to read right.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Body rows per table: WeasyPrint lays out a table that runs over many pages in time that
# grows faster than its rows (a 20,000-row table did not end), and a table of this many
# rows in time that grows with them; a longer one becomes several, the header repeated.
TABLE_ROWS = 100


def allowed_href(url: str, library: frozenset[str] = frozenset()) -> bool:
    """Whether a link may lead to `url`: a web page, a place in the page, or one of the
    `library` documents (their absolute paths) as the library links them, `file:///…`."""
    if is_web_url(url) or (url.startswith("#") and "\\" not in url):
        return True
    if not is_file_url(url):
        return False
    parts = urlsplit(url.strip())
    return not parts.query and unquote(parts.path) in library


@lru_cache(maxsize=8)
def _parser(library: frozenset[str]) -> MarkdownIt:
    # "commonmark" with raw HTML off, plus the GFM pieces reports use: tables,
    # ~~strikethrough~~ and bare URLs as links.
    parser = MarkdownIt("commonmark", {"html": False, "linkify": True})
    parser.enable(["table", "strikethrough", "linkify"])
    # markdown-it's own check refuses file: (library documents); ours refuses all but ours.
    parser.validateLink = lambda url: allowed_href(url, library)  # type: ignore[method-assign]
    return parser


def report_html(markdown: str, info: ReportInfo, *, title_heading: bool = True) -> str:
    """The whole page: title, the report, the footer; UTF-8, no external reference.

    Without `title_heading` the title is only the page's `<title>` (pandoc makes that the
    Word file's own title paragraph, which a heading would repeat)."""
    title, shown = title_of(markdown, info)
    body = render_body(markdown, info.library)
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


def render_body(markdown: str, library: frozenset[str] = frozenset()) -> str:
    """The report's Markdown as HTML: raw HTML as text, only allowed links (`file:` ones to
    the `library` paths only), no images, no table longer than `TABLE_ROWS` rows."""
    parser = _parser(frozenset(library))
    tokens = split_tables(parser.parse(_BIDI_CONTROLS.sub("", markdown)))
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


def split_tables(tokens: list[Token], rows: int = TABLE_ROWS) -> list[Token]:
    """`tokens` with each table of more than `rows` body rows cut into tables of `rows`,
    each opening with the original's header row."""
    out: list[Token] = []
    table_open: Token | None = None
    header: list[Token] = []
    in_header, done = False, 0
    for index, token in enumerate(tokens):
        if token.type == "table_open":
            table_open, header, done = token, [], 0
        elif token.type == "thead_open":
            in_header = True
        if in_header:
            header.append(token)
        if token.type == "thead_close":
            in_header = False
        out.append(token)
        if token.type != "tr_close" or in_header or table_open is None:
            continue
        done += 1
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if done % rows == 0 and following is not None and following.type == "tr_open":
            out += [_closing(token, "tbody"), _closing(token, "table"), copy.copy(table_open)]
            out += [*header, _opening(token, "tbody")]
    return out


def _closing(like: Token, tag: str) -> Token:
    return Token(f"{tag}_close", tag, -1, level=max(like.level - 2, 0), block=True)


def _opening(like: Token, tag: str) -> Token:
    return Token(f"{tag}_open", tag, 1, level=max(like.level - 1, 0), block=True)
