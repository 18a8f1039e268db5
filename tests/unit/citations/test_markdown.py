"""citations/markdown.py: links and protected spans with their source positions, mapped back."""

from __future__ import annotations

import pytest
from markdown_it.token import Token

from deep_research.citations import markdown
from deep_research.citations.markdown import (
    Inline,
    SourceMap,
    UnmappedSourceError,
    close_open_blocks,
    describe_inline,
    parse,
    plain_text,
)


def inlines(markdown: str) -> list[Inline]:
    return [describe_inline(t) for t in parse(markdown) if t.type == "inline"]


def test_each_kind_of_link_is_found_where_it_is_written() -> None:
    text = (
        'See [one](https://a.org/1 "T"), [two][r], <https://a.org/3>, https://a.org/4 and '
        "![alt *x*](https://a.org/i.png).\n\n[r]: https://a.org/2"
    )
    (inline,) = inlines(text)  # the reference definition is no inline
    found = {(link.kind, link.href, inline.source[link.start : link.end]) for link in inline.links}
    assert found == {
        ("inline", "https://a.org/1", '[one](https://a.org/1 "T")'),
        ("reference", "https://a.org/2", "[two][r]"),
        ("autolink", "https://a.org/3", "<https://a.org/3>"),
        ("bare", "https://a.org/4", "https://a.org/4"),
    }
    labels = {inline.source[slice(*link.label)] for link in inline.links}
    assert labels == {"one", "two", "<https://a.org/3>", "https://a.org/4"}
    (image,) = inline.images
    assert image.alt == "alt x" and inline.source[image.start : image.end].startswith("![alt")


def test_code_html_escapes_and_entities_are_protected_from_prose_rules() -> None:
    (inline,) = inlines(r"a `code [x](https://a.org)` <b>bold</b> \* &amp; end")
    protected = {inline.source[s:e] for s, e in inline.protected}
    assert {"`code [x](https://a.org)`", "<b>", "</b>", r"\*", "&amp;"} <= protected
    assert {inline.source[s:e] for s, e in inline.html} == {"<b>", "</b>"}
    assert inline.links == [], "a link inside code is no link"


def test_file_links_are_links_and_script_links_are_not() -> None:
    (inline,) = inlines("[doc](file:///d/a.pdf#page=2) [bad](javascript:alert(1))")
    assert [link.href for link in inline.links] == ["file:///d/a.pdf#page=2"]


@pytest.mark.parametrize(
    "document",
    [
        "> quoted [q](https://a.org/q)\n> more [r](https://a.org/r)",
        "- item\n  [q](https://a.org/q) continued\n  [r](https://a.org/r)",
        "\u00a0\nafter a no-break line [q](https://a.org/q) [r](https://a.org/r)",
        "| h | i |\n|---|---|\n| [q](https://a.org/q) | [r](https://a.org/r) |",
    ],
)
def test_inline_offsets_map_back_into_the_document(document: str) -> None:
    assert mapped(document) == [
        (document.index("[q]"), "https://a.org/q"),
        (document.index("[r]"), "https://a.org/r"),
    ]


def test_cells_alike_on_one_line_map_to_their_own_places() -> None:
    cell = "[q](https://a.org/q)"
    document = f"| h | i |\n|---|---|\n| {cell} | {cell} |"
    first = document.index(cell)
    assert mapped(document) == [(first, cell[4:-1]), (document.index(cell, first + 1), cell[4:-1])]


def mapped(document: str) -> list[tuple[int, str]]:
    """Each link's document offset and href, checking its whole span maps onto its text."""
    source_map = SourceMap(document)
    found = []
    for token in parse(document):
        if token.type != "inline":
            continue
        to_document = source_map.mapper(token)
        for link in describe_inline(token).links:
            start, end = to_document(link.start), to_document(link.end - 1) + 1
            assert document[start:end] == f"[{link.href[-1]}]({link.href})"
            found.append((start, link.href))
    return found


def test_line_spans_cover_whole_lines_with_their_newline() -> None:
    source_map = SourceMap("one\ntwo\nthree")
    assert source_map.line_span(1, 2) == (4, 8) and source_map.line_span(2, 3) == (8, 13)
    assert source_map.line_span(0, 3) == (0, 13)


def test_a_token_that_is_not_in_the_document_is_an_unmapped_source_error() -> None:
    with pytest.raises(UnmappedSourceError):
        SourceMap("text").mapper(Token("inline", "", 0))
    token = Token("inline", "", 0, map=[0, 1], content="elsewhere")
    with pytest.raises(UnmappedSourceError, match="not found"):
        SourceMap("text").mapper(token)
    with pytest.raises(UnmappedSourceError, match="past the end"):
        SourceMap("").mapper(Token("inline", "", 0, map=[3, 4], content="x"))


def test_hostile_markdown_parses_and_its_spans_stay_inside_the_source() -> None:
    hostile = (
        "[" * 5_000 + "x" + "](" * 2_000 + "\x00\x1b[2J<<<end data 0>>> "
        "<script>alert(1)</script> [a](<https://a.org/ b>) " + "`" * 999
    )
    for inline in inlines(hostile):
        for start, end in [*inline.protected, *((k.start, k.end) for k in inline.links)]:
            assert 0 <= start <= end <= len(inline.source)
    assert plain_text(parse("*a* `b`  \nc")[1].children or []) == "a b c"


def test_closing_open_blocks_reads_blocks_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Which block a text ends in needs no inline rules: not the full parser, whose linkify
    scan is quadratic on a run of `<http://` (a minute for 160 KB)."""

    def full_parse(*args: object) -> object:
        raise AssertionError("the full parser, inline rules and all")

    monkeypatch.setattr(markdown._PARSER, "parse", full_parse)
    text = "<http://" * 2_000
    assert close_open_blocks(text) == text
    assert close_open_blocks(f"{text}\n\n```\ncode") == f"{text}\n\n```\ncode\n```"
