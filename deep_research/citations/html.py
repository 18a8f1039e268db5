"""Raw HTML in a report: which tags may stay, which are shown as text, which go.

Markdown passes raw HTML through to the page, so `<a href>` is a link no check has seen
and `<img src>` (or `<iframe src>`, a `style` with `url(...)`) loads a URL without a
click, which can carry data out. Only attributes can name a URL, so a tag with any goes
(the text between tags stays). A tag without attributes stays as written (`<sub>`, or
prose like "wrapped in <think> tags", "List<String>"), unless its element's content is
not text: script runs, style can load URLs, and the others change how everything after
them parses; those are shown as text, as the model wrote them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it.common import html_re

_RAW_CONTENT = frozenset(
    {
        "script",
        "style",
        "textarea",
        "title",
        "xmp",
        "plaintext",
        "noscript",
        "noembed",
        "noframes",
        "template",
        "iframe",
        "object",
        "embed",
        "applet",
        "svg",
        "math",
        "select",
    }
)
# Built from markdown-it's own pieces, so a tag here is exactly what it parses as one.
_ANY_TAG = re.compile(
    "|".join(
        [
            html_re.open_tag,
            html_re.close_tag,
            html_re.comment,
            html_re.processing,
            html_re.declaration,
            html_re.cdata,
        ]
    )
)
_TAG_START = re.compile(r"<[A-Za-z/!?]")
_TAG_NAME = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)")
_BARE_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)\s*/?>")
_COMMENT = re.compile(r"<!--.*-->\Z|<!---?>\Z", re.DOTALL)
_URL_ATTRIBUTE = re.compile(
    r"""\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE
)


def replacement(tag: str, gone: set[str]) -> str | None:
    """What one raw HTML tag becomes in the report: None when it stays as it is.

    `gone` holds the names of elements whose opening tags went; their closing tags go
    too, rather than dangle. Removing an opening tag adds its name.
    """
    if _COMMENT.match(tag):  # never rendered
        return None
    bare = _BARE_TAG.fullmatch(tag)
    if bare is None:  # attributes, or a declaration, processing instruction or CDATA
        if opened := _TAG_NAME.match(tag):
            gone.add(opened.group(1).lower())
        return ""
    name = bare.group(1).lower()
    if tag.startswith("</") and name in gone:
        return ""
    return "&lt;" + tag[1:] if name in _RAW_CONTENT else None


def is_link_tag(tag: str) -> bool:
    return re.match(r"<a[\s>/]", tag, re.IGNORECASE) is not None


def target(tag: str) -> str | None:
    """The URL an `href` or `src` attribute of `tag` names, if any."""
    match = _URL_ATTRIBUTE.search(tag)
    return next((group for group in match.groups() if group is not None), None) if match else None


def pieces(raw: str, gone: set[str] | None = None) -> Iterator[tuple[int, int, str]]:
    """`(start, end, replacement)` for each tag in raw HTML that may not stay as it is.

    A `<` that starts something tag-like this grammar does not accept (`<a href=x / >`,
    say) becomes `&lt;`: a browser is more forgiving than any grammar.
    """
    gone = set() if gone is None else gone
    position = 0
    while match := _TAG_START.search(raw, position):
        tag = _ANY_TAG.match(raw, match.start())
        if tag is None:
            yield match.start(), match.start() + 1, "&lt;"
            position = match.start() + 1
            continue
        if (text := replacement(tag.group(), gone)) is not None:
            yield tag.start(), tag.end(), text
        position = tag.end()


def neutralised(raw: str, gone: set[str] | None = None) -> str:
    """`raw` as the check leaves it."""
    for start, end, text in reversed(list(pieces(raw, gone))):
        raw = raw[:start] + text + raw[end:]
    return raw
