"""citations.html: which raw HTML tags in a report stay, which show as text, which go."""

from __future__ import annotations

import pytest

from deep_research.citations.html import is_link_tag, neutralised, pieces, replacement, target


@pytest.mark.parametrize(
    "tag",
    [
        '<a href="https://evil.example/?q=secret">',
        '<img src="x.png">',
        "<p style='x'>",
        "<!DOCTYPE html>",
        "<?php echo 1 ?>",
        "<![CDATA[x]]>",
        '<div onclick="steal()">',
    ],
)
def test_a_tag_with_attributes_or_a_declaration_goes(tag: str) -> None:
    assert replacement(tag, set()) == ""


@pytest.mark.parametrize("tag", ["<sub>", "</sub>", "<think>", "<br/>", "<String>", "<!-- x -->"])
def test_a_bare_tag_of_text_content_stays(tag: str) -> None:
    assert replacement(tag, set()) is None


@pytest.mark.parametrize("tag", ["<script>", "</style>", "<TEXTAREA>", "<svg/>", "<iframe>"])
def test_a_bare_tag_whose_content_is_not_text_is_shown_as_text(tag: str) -> None:
    assert replacement(tag, set()) == "&lt;" + tag[1:]


def test_the_closing_tag_of_an_element_whose_opening_went_goes_too() -> None:
    gone: set[str] = set()
    assert replacement('<A href="x">', gone) == "" and gone == {"a"}
    assert replacement("</a>", gone) == ""
    assert replacement("</b>", gone) is None  # an element that stayed keeps its close


def test_neutralised_keeps_the_text_between_removed_tags() -> None:
    raw = 'See <a href="https://e.example">this</a> and <img src="https://t.example/p.gif">'
    raw += " <sub>2</sub>"
    assert neutralised(raw) == "See this and  <sub>2</sub>"


def test_script_is_shown_not_run() -> None:
    assert neutralised("<script>alert(1)</script>") == "&lt;script>alert(1)&lt;/script>"


def test_tag_like_text_the_grammar_refuses_is_escaped() -> None:
    raw = "<a href=x / > and 3 <b"
    out = neutralised(raw)
    assert "<a" not in out and out.startswith("&lt;a href=x / >")
    assert out.endswith("3 &lt;b")


def test_pieces_name_each_edit_by_its_place() -> None:
    raw = 'x<img src="y">z<script>'
    assert list(pieces(raw)) == [(1, 14, ""), (15, 23, "&lt;script>")]
    prose = "plain text, 1 < 2, a<b"
    at = prose.index("<b")
    assert list(pieces(prose)) == [(at, at + 1, "&lt;")]  # "1 < 2" is not tag-like


def test_a_huge_run_of_unclosed_tags_is_escaped_whole() -> None:
    raw = "<a " * 20_000 + "< " * 20_000
    assert neutralised(raw) == "&lt;a " * 20_000 + "< " * 20_000


@pytest.mark.parametrize(
    ("tag", "url"),
    [
        ('<a href="https://a.example/x">', "https://a.example/x"),
        ("<img SRC='https://b.example/i.png'>", "https://b.example/i.png"),
        ("<a href=https://c.example/ title=t>", "https://c.example/"),
        ('<a title="x">', None),
        ('<a data-href="https://d.example">', None),
    ],
)
def test_target_reads_href_or_src(tag: str, url: str | None) -> None:
    assert target(tag) == url


@pytest.mark.parametrize(
    ("tag", "link"), [('<a href="x">', True), ("<A>", True), ("<a/>", True), ("<abbr>", False)]
)
def test_is_link_tag(tag: str, link: bool) -> None:
    assert is_link_tag(tag) is link
