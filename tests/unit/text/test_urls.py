"""text/urls.py: which page a URL names (page_key) and the citation check's URL helpers."""

from __future__ import annotations

import pytest

from deep_research.text.urls import (
    checked_web_url,
    file_key,
    is_citable_url,
    is_file_url,
    is_pdf,
    is_web_url,
    page_key,
    pdf_page_anchor,
    pdf_page_number,
    pdf_page_url,
    source_base,
    source_key,
    split_fragment,
)

PAGE = "https://example.org/a/b"
SPELLINGS = [
    "HTTPS://Example.ORG/a/b",
    "https://example.org:443/a/b/",
    "https://example.org/a/b#section",
    "https://example.org/a/%62",
    " https://example.org/a/b\n",
    "https://example.org/a/b?utm_source=x&UTM_Medium=y&fbclid=1&gclid=2",
]
# A malformed host: the providers' URL pattern lets it through (search/providers.py).
BAD_IPV6 = "https://[::1/x"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_a_page_is_one_key(spelling: str) -> None:
    assert page_key(spelling) == page_key(PAGE)


@pytest.mark.parametrize(
    "other",
    [
        "http://example.org/a/b",  # http and https may serve different things
        "https://example.org:8443/a/b",
        "https://example.org/a/B",
        "https://example.org/a/b?id=2",
        "https://example.org/a/b/c",
    ],
)
def test_different_pages_keep_different_keys(other: str) -> None:
    assert page_key(other) != page_key(PAGE)


def test_parameter_order_and_escaping_do_not_matter_but_values_do() -> None:
    assert page_key("https://a.org/p?b=2&a=1") == page_key("https://a.org/p?a=1&b=2")
    assert page_key("https://a.org/a b") == page_key("https://a.org/a%20b")
    assert page_key("https://a.org/p?x=1&x=0") != page_key("https://a.org/p?x=0")
    assert page_key("https://a.org:99999/p") != page_key("https://a.org/p"), "bad port kept"


def test_a_pdf_page_is_a_page_of_its_own_and_other_fragments_are_not() -> None:
    for doc in ["file:///docs/r.pdf", "https://a.org/r.pdf"]:
        assert page_key(doc + "#page=2") != page_key(doc + "#page=3") != page_key(doc)
        assert page_key(doc + "#page=0") == page_key(doc + "#top") == page_key(doc)
        assert pdf_page_anchor(doc, "page=7") == "page=7"
        for fragment in ["page=1234567", "page=2&x", "page=02", "Page=2", "page=-1"]:
            assert pdf_page_anchor(doc, fragment) == ""
    assert page_key("file:///docs/r.pdf").startswith("file:///docs/")
    assert page_key("HTTPS://A.org:443/r.pdf/#page=2") == "https://a.org/r.pdf#page=2"
    for url in ["javascript:x", "ftp://a.org/r.pdf", "data:x"]:
        assert pdf_page_anchor(url, "page=2") == ""


def test_a_pdf_file_is_one_fetch_and_its_pages_are_numbered() -> None:
    pdf = "https://a.org/r.pdf"
    assert file_key(pdf + "#page=2") == file_key(pdf + "#page=9") == file_key(pdf) == page_key(pdf)
    assert pdf_page_url(pdf + "#page=2", 5) == pdf + "#page=5"
    assert pdf_page_url(pdf, 1) == pdf + "#page=1"
    assert pdf_page_number(pdf + "#page=12") == 12 == pdf_page_number("file:///d/a.pdf#page=12")
    assert pdf_page_number(pdf + "#top") == pdf_page_number(pdf) == pdf_page_number("x#page=2") == 0


def test_which_urls_are_web_files_or_citable() -> None:
    assert is_web_url(" HTTPS://a.org") and not is_web_url("javascript:alert(1)")
    assert is_file_url("file:///a/b.txt") and not is_file_url("file://host/a.txt")
    assert not is_file_url("file:a.txt") and not is_file_url("/etc/passwd")
    for url in ["data:text/html,<b>", "ftp://a.org/x", "", "mailto:a@b.c", "about:blank"]:
        assert not is_citable_url(url)
    assert is_citable_url("https://a.org/") and is_citable_url("file:///d/a.pdf")


def test_a_source_keeps_a_pdf_page_anchor_and_drops_other_fragments() -> None:
    assert split_fragment("https://a.org/p#x#y") == ("https://a.org/p", "x#y")
    assert split_fragment("https://a.org/p") == ("https://a.org/p", "")
    assert source_base("https://a.org/p#:~:text=heat") == "https://a.org/p"
    assert source_base("file:///d/a.pdf#page=4") == "file:///d/a.pdf#page=4"
    assert source_base("file:///d/a.pdf#chapter") == "file:///d/a.pdf"
    assert source_base("https://a.org/r.pdf#page=2") == "https://a.org/r.pdf#page=2"
    assert source_base("https://a.org/r.pdf#page=2:~:text=x") == "https://a.org/r.pdf#page=2"
    assert source_base("https://a.org/r.pdf#page=x:~:text=x") == "https://a.org/r.pdf"


def test_pdfs_by_path_or_by_a_search_engines_tag() -> None:
    assert is_pdf("https://a.org/R.PDF?dl=1") and is_pdf("https://a.org/x", "  [pdf] Study")
    assert not is_pdf("https://a.org/pdf-guide") and not is_pdf("https://a.org/x.pdf.html")


def test_hostile_urls_still_give_a_key() -> None:
    huge = "https://a.org/" + "x/" * 100_000 + "?q=" + "%" * 1000
    for url in [huge, "https://a.org/\x00\x1b[2J", "https://exämple.org/ü", "::::", "%%%"]:
        assert isinstance(page_key(url), str)


def test_a_malformed_host_gives_a_key_and_is_not_a_web_url() -> None:
    # urlsplit raises on an unclosed IPv6 bracket; a search result may carry one, and the
    # sources' reducer (state.merge_sources) keys every page with page_key.
    assert page_key(BAD_IPV6) != page_key("https://[::1]/x")
    assert not is_citable_url(BAD_IPV6)


def test_a_source_s_key_keeps_a_web_page_anchor_only_on_a_marked_pdf_page() -> None:
    pdf = "https://a.example/r.pdf#page=2"
    assert source_key({"url": pdf, "pdf_page": 2}) == page_key(pdf)
    assert source_key({"url": pdf}) == page_key("https://a.example/r.pdf")
    assert source_key({"url": "file:///d/a.pdf#page=2"}) == page_key("file:///d/a.pdf#page=2")


@pytest.mark.parametrize(
    "value",
    [
        None,
        42,
        ["https://a.example/x.pdf"],
        "",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "//a.example/x.pdf",
        "https:///x.pdf",
        "https://a.example/" + "a" * 2_100,
        "https://a.example/a b.pdf",
        "https://a.example/\x00.pdf",
        "https://a.example/\u202efdp.exe",
        "https://a.example/\u200b.pdf",
        "https://a.example/\ud800.pdf",
        "http://[::1/x.pdf",
    ],
)
def test_an_outside_url_to_fetch_is_a_bounded_printable_web_url(value: object) -> None:
    assert checked_web_url(value) is None


def test_a_web_url_to_fetch_is_kept_as_it_is() -> None:
    for url in ("https://arxiv.org/pdf/2101.00001v2", "HTTP://a.example/r?pdf=render&x=é"):
        assert checked_web_url(url) == url
