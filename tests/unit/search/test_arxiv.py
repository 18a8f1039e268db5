"""search/arxiv.py against a fake arXiv API speaking Atom: papers, hostile feeds, errors."""

from __future__ import annotations

from datetime import date

import pytest

from deep_research.search import chain as chain_module
from deep_research.search.arxiv import ArxivProvider, search_query, submitted
from deep_research.search.chain import SearchChain
from deep_research.search.types import SearchError, Years
from tests.support.fakes.scholarly_servers import (
    ARXIV_ERROR_FEED,
    FakeArxivServer,
    Paper,
    entry_xml,
    feed_xml,
)

ATTENTION = Paper(
    "2101.00001v2",
    "Attention Is\n  Enough for Heat Pumps",
    "We show that attention\n  predicts heat pump efficiency $\\eta$ in cold climates.",
    authors=["Grace Hopper", "Alan Turing"],
)
OLD_STYLE = Paper("hep-th/9901001v1", "Strings", "An old abstract.", authors=[])


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chain_module, "BACKOFF_BASE", 0.0)


def test_a_query_becomes_its_significant_words_all_required() -> None:
    assert search_query('What is "attention" (in) heat-pump: AND OR') == (
        "all:attention AND all:heat-pump"
    )
    assert search_query("the of and") == ""


async def test_each_paper_is_its_abstract_at_its_versioned_abs_page() -> None:
    with FakeArxivServer([ATTENTION, OLD_STYLE]) as arxiv:
        found = await ArxivProvider(arxiv.api_url).search("attention for heat pumps", 5)
        sent = arxiv.requests
    assert [r.url for r in found] == [
        "https://arxiv.org/abs/2101.00001v2",
        "https://arxiv.org/abs/hep-th/9901001v1",
    ]
    paper = found[0]
    assert paper.title == "Attention Is Enough for Heat Pumps (Grace Hopper et al., 2021)"
    assert paper.content == (
        "We show that attention predicts heat pump efficiency $\\eta$ in cold climates."
    )
    assert paper.complete and found[1].title == "Strings (2021)"
    assert sent[0]["search_query"] == "all:attention AND all:heat AND all:pumps"
    assert sent[0]["max_results"] == "5"


async def test_no_significant_word_sends_no_request() -> None:
    with FakeArxivServer([ATTENTION]) as arxiv:
        assert await ArxivProvider(arxiv.api_url).search("the of", 5) == []
        assert arxiv.requests == []


async def test_hostile_entries_cost_only_themselves_and_name_no_other_host() -> None:
    entries = [
        entry_xml(ATTENTION).replace("http://arxiv.org/abs/", "http://169.254.169.254/abs/", 1),
        entry_xml(Paper("2101.00002v1", "x" * 5_000, "y " * 50_000)),
        entry_xml(Paper("2101.00003v1", "Markup", "<script>alert(1)</script>\u202e text")),
        entry_xml(Paper("2101.00004v1", "No abstract", "")),
        entry_xml(Paper("../../etc/passwd", "Traversal", "abstract")),
    ]
    with FakeArxivServer(script=[(200, {}, feed_xml(entries))]) as arxiv:
        found = await ArxivProvider(arxiv.api_url).search("heat", 10)
    assert [r.url for r in found] == [
        "https://arxiv.org/abs/2101.00002v1",
        "https://arxiv.org/abs/2101.00003v1",
    ]
    assert found.malformed == 3  # type: ignore[attr-defined]
    assert len(found[0].title) <= 300 and len(found[0].content) <= 4_000
    assert found[1].content == "<script>alert(1)</script> text"  # text, fenced downstream


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"<feed><entry>", "not XML"),
        (b"<html><body>maintenance</body></html>", "not an Atom feed"),
        (
            b'<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
            b'<feed xmlns="http://www.w3.org/2005/Atom">&b;</feed>',
            "not XML",
        ),
        (ARXIV_ERROR_FEED, "refused the query"),
    ],
)
async def test_an_answer_that_is_not_a_feed_is_an_error_in_fixed_words(
    body: bytes, words: str
) -> None:
    with FakeArxivServer(script=[(200, {}, body)]) as arxiv:
        with pytest.raises(SearchError, match=words) as raised:
            await ArxivProvider(arxiv.api_url).search("heat", 5)
    assert "IGNORE" not in str(raised.value) and not raised.value.transient


async def test_an_empty_feed_is_no_results() -> None:
    with FakeArxivServer([]) as arxiv:
        assert await ArxivProvider(arxiv.api_url).search("heat", 5) == []


async def test_a_server_error_is_retried_by_the_chain() -> None:
    with FakeArxivServer([ATTENTION], script=[(500, {}, b"oops")]) as arxiv:
        found = await SearchChain([ArxivProvider(arxiv.api_url)]).search("attention", 5)
        assert len(arxiv.requests) == 2
    assert [r.url for r in found.results] == ["https://arxiv.org/abs/2101.00001v2"]


async def test_a_rate_limit_is_waited_out_when_it_says_soon_and_not_otherwise() -> None:
    soon = (429, {"Retry-After": "0"}, b"slow down")
    with FakeArxivServer([ATTENTION], script=[soon]) as arxiv:
        found = await SearchChain([ArxivProvider(arxiv.api_url)]).search("attention", 5)
        assert len(arxiv.requests) == 2 and len(found.results) == 1
    later = (429, {"Retry-After": "86400"}, b"slow down")
    with FakeArxivServer([ATTENTION], script=[later]) as arxiv:
        with pytest.raises(SearchError, match="HTTP 429") as raised:
            await SearchChain([ArxivProvider(arxiv.api_url)]).search("attention", 5)
        assert len(arxiv.requests) == 1 and raised.value.rate_limited


async def test_a_huge_answer_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from deep_research.search import api_call

    monkeypatch.setattr(api_call, "MAX_ANSWER_BYTES", 10_000)
    huge = feed_xml([entry_xml(ATTENTION)] * 200)
    with FakeArxivServer(script=[(200, {}, huge)]) as arxiv:
        with pytest.raises(SearchError, match="over 10,000 bytes"):
            await ArxivProvider(arxiv.api_url).search("attention", 5)


async def test_a_range_of_years_is_a_submitted_date_clause_of_checked_integers() -> None:
    with FakeArxivServer([ATTENTION]) as arxiv:
        provider = ArxivProvider(arxiv.api_url)
        await provider.search("attention heat pumps", 5, years=Years(2019, 2023))
        await provider.search("attention", 5, years=Years(None, 1995))
        await provider.search("attention", 5, years=Years(2020, None))
        await provider.search("attention", 5)
        sent = [request["search_query"] for request in arxiv.requests]
    next_year = date.today().year + 1
    assert sent == [
        "all:attention AND all:heat AND all:pumps AND submittedDate:[201901010000 TO 202312312359]",
        "all:attention AND submittedDate:[199101010000 TO 199512312359]",
        f"all:attention AND submittedDate:[202001010000 TO {next_year}12312359]",
        "all:attention",
    ]
    assert submitted(Years(1991, 1991)) == "submittedDate:[199101010000 TO 199112312359]"


HOSTILE_LINKS = [
    "javascript:alert(1)",
    "http://mirror.example/pdf/" + "a" * 5_000,
    "http://mirror.example/pdf/\u202efdp.exe",
    "http://mirror.example/pdf/a\nb",
    "http://mirror.example/pdf/\u200bx",
    "//mirror.example/pdf/x",
]


async def test_each_paper_names_its_pdf_on_arxiv_or_its_mirror_and_never_a_hostile_link() -> None:
    mirrored = Paper("2101.00005v1", "Mirrored", "On a mirror.", pdf_link="https://m.example/p/5")
    other = Paper("2101.00006v1", "Other", "Names another paper's PDF.")
    export = Paper("2101.00008v1", "Export", "On export.", pdf_link="http://export.arxiv.org/x/1")
    hostile = [
        Paper(f"2101.0001{n}v1", "Hostile", "x", pdf_link=link)
        for n, link in enumerate(HOSTILE_LINKS)
    ]
    entries = [
        entry_xml(ATTENTION),
        entry_xml(mirrored),
        entry_xml(other).replace("arxiv.org/pdf/2101.00006v1", "arxiv.org/pdf/9999.99999"),
        entry_xml(Paper("2101.00007v1", "No PDF", "None linked.", pdf_link="")),
        entry_xml(export),
        *(entry_xml(paper) for paper in hostile),
    ]
    with FakeArxivServer(script=[(200, {}, feed_xml(entries))]) as arxiv:
        found = await ArxivProvider(arxiv.api_url).search("heat", 20)
    assert [r.pdf_url for r in found] == [
        "https://arxiv.org/pdf/2101.00001v2",  # arXiv's own link, over https
        "https://m.example/p/5",  # a mirror's, read through the address guard
        "https://arxiv.org/pdf/2101.00006v1",  # on arxiv.org: always the entry's own paper
        "",
        "https://arxiv.org/pdf/2101.00008v1",  # any host of arxiv.org's: the entry's own too
        *([""] * len(HOSTILE_LINKS)),
    ]


async def test_a_paper_on_arxiv_or_a_mirror_of_its_paths_names_its_html_rendering() -> None:
    """`/html/<id>` beside a PDF at `/pdf/<id>` (built from the identifier); none beside a
    PDF at any other path, or for a paper without a PDF."""
    papers = [
        Paper("2101.00011v1", "Mirror", "x", pdf_link="http://m.example/pdf/2101.00011v1.pdf"),
        Paper("2101.00012v1", "Other path", "x", pdf_link="https://m.example/p/12"),
        Paper("2101.00013v1", "Query", "x", pdf_link="http://m.example/pdf/2101.00013v1?a=b"),
        Paper("2101.00014v1", "Not its id", "x", pdf_link="http://m.example/pdf/2101.00099v1"),
        Paper("2101.00015v1", "No PDF", "x", pdf_link=""),
        Paper("2101.00016v1", "Suffix", "x", pdf_link="http://m.example/pdf/2101.00016v1x"),
    ]
    entries = [entry_xml(ATTENTION), *(entry_xml(paper) for paper in papers)]
    with FakeArxivServer(script=[(200, {}, feed_xml(entries))]) as arxiv:
        found = await ArxivProvider(arxiv.api_url).search("heat", 20)
    assert [r.html_url for r in found] == [
        "https://arxiv.org/html/2101.00001v2",
        "http://m.example/html/2101.00011v1",
        "",
        "",
        "",
        "",
        "",
    ]
