"""Raw HTML in a report: which tags may stay, and what a removed tag pointed at.

Markdown passes raw HTML through to the page, so `<a href>` is a link no check has seen
and `<img src>` (or `<iframe>`, `<video>`, a `style` with `url(...)`) loads a URL without
a click, which can carry data out. Allow-listing is the only safe direction: a tag stays
only if it is a formatting element with no attributes at all, so nothing in it can name a
URL. Everything else is removed and the text between tags stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it.common import html_re

# Formatting elements a report might reasonably use; without attributes they cannot link,
# load or script anything.
ALLOWED_TAGS = frozenset(
    {"b", "i", "em", "strong", "u", "s", "del", "ins", "mark", "small", "sub", "sup", "kbd",
     "code", "var", "samp", "abbr", "cite", "q", "br", "hr", "p", "div", "span", "pre",
     "blockquote", "details", "summary", "ul", "ol", "li", "dl", "dt", "dd", "table",
     "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "h1", "h2", "h3", "h4", "h5",
     "h6"}
)  # fmt: skip
# Built from markdown-it's own pieces, so a tag here is exactly what it parses as one.
_ANY_TAG = re.compile(
    "|".join([html_re.open_tag, html_re.close_tag, html_re.comment, html_re.processing,
              html_re.declaration, html_re.cdata])
)  # fmt: skip
_TAG_START = re.compile(r"<[A-Za-z/!?]")
_BARE_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)\s*/?>")
_COMMENT = re.compile(r"<!--.*-->\Z|<!---?>\Z", re.DOTALL)
_URL_ATTRIBUTE = re.compile(
    r"""\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE
)


def is_allowed(tag: str) -> bool:
    """Whether one raw HTML tag (or comment) may stay in the report."""
    if _COMMENT.match(tag):  # never rendered
        return True
    bare = _BARE_TAG.fullmatch(tag)
    return bare is not None and bare.group(1).lower() in ALLOWED_TAGS


def is_link_tag(tag: str) -> bool:
    return re.match(r"<a[\s>/]", tag, re.IGNORECASE) is not None


def target(tag: str) -> str | None:
    """The URL an `href` or `src` attribute of `tag` names, if any."""
    match = _URL_ATTRIBUTE.search(tag)
    return next((group for group in match.groups() if group is not None), None) if match else None


def pieces(raw: str) -> Iterator[tuple[int, int, str | None]]:
    """What in raw HTML a browser could read as markup, other than allowed tags.

    `(start, end, tag)` for each tag that may not stay, and `(start, start + 1, None)` for a
    `<` that starts something tag-like this grammar does not accept (`<a href=x / >`, say):
    a browser is more forgiving than any grammar, so such a `<` must become `&lt;`.
    """
    position = 0
    while match := _TAG_START.search(raw, position):
        tag = _ANY_TAG.match(raw, match.start())
        if tag is None:
            yield match.start(), match.start() + 1, None
            position = match.start() + 1
            continue
        if not is_allowed(tag.group()):
            yield tag.start(), tag.end(), tag.group()
        position = tag.end()


def without_disallowed(raw: str) -> str:
    """`raw` as the check leaves it, to see whether anything of it is left."""
    for start, end, tag in reversed(list(pieces(raw))):
        raw = raw[:start] + ("" if tag else "&lt;") + raw[end:]
    return raw
