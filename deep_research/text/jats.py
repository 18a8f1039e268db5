"""An article's text from JATS XML (Europe PMC's full text of open-access PMC articles).

The text a reader sees on the article's page, in its sections: the title with the abstract
first, then each top-level section of the body (its title and its paragraphs, its
subsections' included). Tables, figures, formulas, references and the back matter are left
out; their words are not the article's prose, and a quote taken from them would not be
found as written on the page.

The XML is outside input: parsed by defusedxml (no DTD entities, no external references),
at most `MAX_ELEMENTS` elements (more are refused before parsing when the markup could
hold them), each section cut at `MAX_SECTION_CHARS`.
"""

from __future__ import annotations

import re
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from deep_research.errors import DeepResearchError

MAX_ELEMENTS = 50_000  # a long review with its references has some 10,000
MAX_SECTIONS = 100
MAX_SECTION_CHARS = 100_000
# Elements whose words are not the article's running text.
SKIPPED = frozenset(
    {
        "table-wrap",
        "table",
        "fig",
        "disp-formula",
        "inline-formula",
        "tex-math",
        "ref-list",
        "supplementary-material",
        "fn-group",
        "graphic",
        "media",
        "object-id",
        "label",
    }
)
_SPACE = re.compile(r"\s+")


class NotAnArticle(DeepResearchError):
    """The XML is unreadable, or not a JATS article with text; the message is fixed words."""


def sections(raw: bytes) -> list[str]:
    """The article's sections as plain text: the title and abstract first, then the body's
    top-level sections in order; none empty. Raises `NotAnArticle`."""
    too_many = NotAnArticle(f"an article of more than {MAX_ELEMENTS:,} elements")
    if raw.count(b"<") > 2 * MAX_ELEMENTS:  # each element opens and closes: never parsed
        raise too_many
    try:
        root = fromstring(raw, forbid_dtd=True)
    except (ParseError, DefusedXmlException, ValueError) as error:
        raise NotAnArticle(f"unreadable XML ({type(error).__name__})") from error
    if _local(root.tag) != "article":
        raise NotAnArticle("not a JATS article")
    if sum(1 for _ in zip(root.iter(), range(MAX_ELEMENTS + 1), strict=False)) > MAX_ELEMENTS:
        raise too_many
    try:
        found = [_opening(_first(root, "front")), *_body(_first(root, "body"))]
    except RecursionError as error:  # elements nested deeper than any article's
        raise NotAnArticle("an article nested too deeply") from error
    kept = [section[:MAX_SECTION_CHARS] for section in found if section]
    if not kept:
        raise NotAnArticle("an article without text")
    return kept[:MAX_SECTIONS]


def _body(body: Element | None) -> list[str]:
    """The body's top-level sections; paragraphs outside any come first, as one."""
    if body is None:
        return []
    found, loose = [], []
    for child in body:
        if _local(child.tag) == "sec":
            found.append("\n\n".join(_paragraphs(child)))
        elif _local(child.tag) not in SKIPPED and (text := _text(child)):
            loose.append(text)
    return ["\n\n".join(loose), *found] if loose else found


def _opening(front: Element | None) -> str:
    """The title, then the abstract's paragraphs (a structured abstract's headings too)."""
    if front is None:
        return ""
    parts = []
    if (title := _first(front, "article-title")) is not None:
        parts.append(_text(title))
    if (abstract := _first(front, "abstract")) is not None:
        parts.extend(_paragraphs(abstract))
    return "\n\n".join(part for part in parts if part)


def _paragraphs(element: Element) -> list[str]:
    """Titles and paragraphs under `element`, in document order, skipped elements left out."""
    found = []
    for child in element:
        tag = _local(child.tag)
        if tag in SKIPPED:
            continue
        if tag in ("title", "p"):
            if text := _text(child):
                found.append(text)
        else:
            found.extend(_paragraphs(child))
    return found


def _text(element: Element) -> str:
    """The element's words on one line, skipped elements' left out (their tails kept)."""
    words = [element.text or ""]
    for child in element:
        _collect(child, words)
    return _SPACE.sub(" ", "".join(words)).strip()


def _collect(element: Element, words: list[str]) -> None:
    if _local(element.tag) not in SKIPPED:
        words.append(element.text or "")
        for child in element:
            _collect(child, words)
    words.append(element.tail or "")


def _first(root: Element, tag: str) -> Element | None:
    return next((e for e in root.iter() if _local(e.tag) == tag), None)


def _local(tag: object) -> str:
    """A tag's name without its namespace (`{uri}name`); '' for a comment or instruction."""
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""
