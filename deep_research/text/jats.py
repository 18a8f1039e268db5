"""An article's text from JATS XML (Europe PMC's full text of open-access PMC articles).

The text a reader sees on the article's page, in its sections: the abstract first, then
each top-level section of the body that holds prose (its title and its paragraphs, its
subsections' included). Tables, figures, formulas, footnotes, references and the back
matter are left out; their words are not the article's prose, and a quote taken from them
would not be found as written on the page.

The XML is outside input: parsed by defusedxml (a DOCTYPE naming a DTD is allowed and never
loaded, one declaring anything itself is refused; no entity is expanded, no external
reference followed), at most `MAX_ELEMENTS` elements
(markup with more than twice as many `<` is refused unparsed), each section cut at
`MAX_SECTION_CHARS`, at most `MAX_SECTIONS` of them.
"""

from __future__ import annotations

import re
from xml.etree.ElementTree import Element, TreeBuilder

from defusedxml import DTDForbidden
from defusedxml.ElementTree import DefusedXMLParser

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
        "fn",
        "graphic",
        "media",
        "object-id",
        "label",
    }
)
# Elements a browser shows as blocks of their own: words either side are not one word.
BLOCKS = frozenset(
    {
        "p",
        "list",
        "list-item",
        "disp-quote",
        "boxed-text",
        "def-list",
        "def-item",
        "title",
        "break",
        "table-wrap",
        "table",
        "fig",
        "disp-formula",
        "fn",
        "supplementary-material",
        "media",
    }
)
# Blocks that hold paragraphs of their own: a paragraph holding one is split around it, as
# a browser shows it, so that a quote never runs from the one into the other.
HOLDERS = frozenset({"p", "list", "disp-quote", "boxed-text", "def-list"})
# Elements read as paragraphs.
PARAGRAPHS = frozenset({"p", "term"})
_SPACE = re.compile(r"\s+")


class NotAnArticle(DeepResearchError):
    """The XML is unreadable, or not a JATS article with text; the message is fixed words."""


def sections(raw: bytes) -> list[str]:
    """The article's sections as plain text: item 0 its abstract (empty when its front has
    none), then the body's top-level sections with prose in order, none empty. Raises
    `NotAnArticle`."""
    too_many = NotAnArticle(f"an article of more than {MAX_ELEMENTS:,} elements")
    if raw.count(b"<") > 2 * MAX_ELEMENTS:  # more markup than such an article has: unparsed
        raise too_many
    try:
        root = _parsed(raw)
    except Exception as error:  # noqa: BLE001  # expat, defusedxml, an unknown encoding, ...
        raise NotAnArticle(f"unreadable XML ({type(error).__name__})") from error
    if _local(root.tag) != "article":
        raise NotAnArticle("not a JATS article")
    if sum(1 for _ in zip(root.iter(), range(MAX_ELEMENTS + 1), strict=False)) > MAX_ELEMENTS:
        raise too_many
    front = _child(root, "front")
    try:
        opening = _opening(_child(front, "article-meta"))
        body = [part for part in _body(_child(root, "body")) if part]
    except RecursionError as error:  # elements nested deeper than any article's
        raise NotAnArticle("an article nested too deeply") from error
    if not opening and not body:
        raise NotAnArticle("an article without text")
    return [part[:MAX_SECTION_CHARS] for part in [opening, *body][:MAX_SECTIONS]]


class _ArticleParser(DefusedXMLParser):  # type: ignore[misc]  # defusedxml has no types
    """defusedxml's parser (no entity, no external reference) that takes a DOCTYPE naming a
    DTD, as Europe PMC's articles carry one (never loaded), but not one declaring anything
    itself: an attribute default it declared would be copied onto every element it names,
    gigabytes from a page of a few hundred kilobytes."""

    def __init__(self) -> None:
        super().__init__(target=TreeBuilder(), forbid_dtd=False)
        self.parser.StartDoctypeDeclHandler = self._no_declarations

    @staticmethod
    def _no_declarations(name: str, sysid: str, pubid: str, has_internal_subset: bool) -> None:
        if has_internal_subset:
            raise DTDForbidden(name, sysid, pubid)


def _parsed(raw: bytes) -> Element:
    parser = _ArticleParser()
    parser.feed(raw)
    root: Element = parser.close()
    return root


def _body(body: Element | None) -> list[str]:
    """The body's top-level sections that hold prose (a heading alone, over a table or a
    supplement, is none); what stands outside any comes first, as one."""
    if body is None:
        return []
    found: list[str] = []
    loose: list[tuple[str, str]] = []
    for child in body:
        tag = _local(child.tag)
        if tag == "sec":
            found.append(_prose(_paragraphs(child)))
        else:  # a paragraph, a list, a boxed text, a quote: read as inside a section
            _read(child, loose)
    return [_prose(loose), *found] if loose else found


def _prose(parts: list[tuple[str, str]]) -> str:
    """The parts as paragraphs, or '' when no paragraph has words (headings alone)."""
    if not any(tag == "p" and text for tag, text in parts):
        return ""
    return "\n\n".join(text for _, text in parts if text)


def _opening(meta: Element | None) -> str:
    """The article's main abstract (a structured abstract's headings too): not a graphical
    or teaser abstract while there is another, nor a sub-article's. The title is the
    search result's own."""
    if meta is None:
        return ""
    abstracts = [e for e in meta if _local(e.tag) == "abstract"]
    main = [e for e in abstracts if not e.get("abstract-type")] or abstracts
    return _prose(_paragraphs(main[0])) if main else ""


def _paragraphs(
    element: Element, found: list[tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    """Titles and paragraphs under `element` ('title' or 'p', and the text; some empty), in
    document order, skipped elements left out, added to `found` (one list for the whole
    walk: a deep nesting costs its depth, not its square)."""
    found = [] if found is None else found
    for child in element:
        _read(child, found)
    return found


def _read(element: Element, found: list[tuple[str, str]]) -> None:
    """One element's titles and paragraphs, added to `found`."""
    tag = _local(element.tag)
    if tag == "title":
        found.append(("title", _text(element)))
    elif tag in PARAGRAPHS:
        _split(element, found)
    elif tag not in SKIPPED:
        _paragraphs(element, found)


def _split(paragraph: Element, found: list[tuple[str, str]]) -> None:
    """A paragraph, split around the blocks it holds (a list, a quote), added to `found`:
    its words before, each block's own paragraphs, its words after."""
    words = [paragraph.text or ""]
    for child in paragraph:
        if _local(child.tag) in HOLDERS:
            found.append(("p", _joined(words)))
            if _local(child.tag) == "p":
                _split(child, found)
            else:
                _paragraphs(child, found)
            words = [child.tail or ""]
        else:
            _collect(child, words)
    found.append(("p", _joined(words)))


def _text(element: Element) -> str:
    """The element's words on one line, skipped elements' left out (their tails kept)."""
    words = [element.text or ""]
    for child in element:
        _collect(child, words)
    return _joined(words)


def _joined(words: list[str]) -> str:
    return _SPACE.sub(" ", "".join(words)).strip()


def _collect(element: Element, words: list[str]) -> None:
    tag = _local(element.tag)
    gap = " " if tag in BLOCKS else ""  # words either side of a block are two words
    if tag not in SKIPPED:
        words.append(gap + (element.text or ""))
        for child in element:
            _collect(child, words)
    words.append(gap + (element.tail or ""))


def _child(parent: Element | None, tag: str) -> Element | None:
    """The first child of `parent` named `tag` (any namespace); None for none."""
    if parent is None:
        return None
    return next((e for e in parent if _local(e.tag) == tag), None)


def _local(tag: object) -> str:
    """A tag's name without its namespace (`{uri}name`); '' for a comment or instruction."""
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""
