"""search/europepmc.py against a fake Europe PMC search: abstracts without markup, PubMed pages."""

from __future__ import annotations

import pytest

from deep_research.search.europepmc import EuropePmcProvider, full_text_base, without_markup
from deep_research.search.types import SearchError, Years
from tests.support.fakes.scholarly_servers import FakeJsonApi, europepmc_record

PATH = "/europepmc/webservices/rest/search"
TRIAL = europepmc_record(
    "Safety and Efficacy of the BNT162b2 mRNA Covid-19 Vaccine",
    "<h4>Background</h4>Severe acute respiratory syndrome coronavirus 2 (SARS-CoV-2) "
    "infection &amp; <i>disease</i>.<h4>Methods</h4>A trial.",
)


def payload(*records: object) -> dict[str, object]:
    return {"version": "6.9", "hitCount": len(records), "resultList": {"result": list(records)}}


def test_an_abstract_loses_its_markup_and_keeps_its_words() -> None:
    assert without_markup("<h4>Aim</h4>To <b>test</b> &lt;x&gt;\x07.") == "Aim To test <x> ."


async def test_each_record_is_its_abstract_at_its_pubmed_page() -> None:
    with FakeJsonApi(PATH, payload(TRIAL)) as api:
        found = await EuropePmcProvider(api.api_url).search("bnt162b2 efficacy", 5)
        sent = api.requests[0]
    (paper,) = found
    assert paper.url == "https://pubmed.ncbi.nlm.nih.gov/33301246/" and paper.complete
    assert paper.title == (
        "Safety and Efficacy of the BNT162b2 mRNA Covid-19 Vaccine (Polack FP, Thomas SJ., 2020)"
    )
    assert paper.content.startswith("Background Severe acute respiratory syndrome")
    assert "infection & disease . Methods A trial." in paper.content
    assert sent["query"] == "bnt162b2 efficacy" and sent["resultType"] == "core"


async def test_hostile_records_cost_only_themselves_and_name_no_other_host() -> None:
    records = [
        europepmc_record("Preprint", "An abstract.", pmid="PPR123", source="PPR"),
        europepmc_record("Hostile id", "text", pmid="1/../../x", source="MED"),
        europepmc_record("Odd source", "text", pmid="x", source="evil.example"),
        europepmc_record("No abstract", ""),
        42,
    ]
    with FakeJsonApi(PATH, payload(*records)) as api:
        found = await EuropePmcProvider(api.api_url).search("x", 10)
    assert [r.url for r in found] == ["https://europepmc.org/article/PPR/PPR123"]
    assert found.malformed == 4  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body", [b"<html>", b"[]", b'{"resultList": {}}', b"[" * 200_000 + b"]" * 200_000]
)
async def test_an_answer_that_is_not_a_result_list_is_an_error(body: bytes) -> None:
    with FakeJsonApi(PATH, {}, script=[(200, {}, body)]) as api:
        with pytest.raises(SearchError, match="europepmc answered something"):
            await EuropePmcProvider(api.api_url).search("x", 5)


async def test_a_rate_limit_is_an_error_the_chain_can_tell() -> None:
    with FakeJsonApi(PATH, payload(), script=[(429, {"Retry-After": "120"}, b"")]) as api:
        with pytest.raises(SearchError, match="HTTP 429") as raised:
            await EuropePmcProvider(api.api_url).search("x", 5)
    assert raised.value.rate_limited and raised.value.retry_after == 120.0


async def test_a_range_of_years_is_a_first_publication_date_clause() -> None:
    with FakeJsonApi(PATH, payload(TRIAL)) as api:
        provider = EuropePmcProvider(api.api_url)
        await provider.search("bnt162b2 OR mrna", 5, years=Years(2019, 2023))
        await provider.search("bnt162b2", 5, years=Years(None, 2001))
        await provider.search("bnt162b2", 5, years=Years(2020, None))
        await provider.search("bnt162b2", 5)
        sent = [request["query"] for request in api.requests]
    assert sent == [
        "(bnt162b2 OR mrna) AND FIRST_PDATE:[2019-01-01 TO 2023-12-31]",
        "(bnt162b2) AND FIRST_PDATE:[1000-01-01 TO 2001-12-31]",
        "(bnt162b2) AND FIRST_PDATE:[2020-01-01 TO 9999-12-31]",
        "bnt162b2",
    ]


async def test_a_free_pdf_the_record_lists_is_its_pdf_and_nothing_else_is() -> None:
    pdf = "https://europepmc.org/articles/PMC7745181?pdf=render"
    free = europepmc_record("Free", "A free PDF.", pmid="1", pdf_url=pdf)
    links = free["fullTextUrlList"]["fullTextUrl"]
    free_to_read = {**europepmc_record("F", "Free to read.", pmid="2")}
    free_to_read["fullTextUrlList"] = {"fullTextUrl": [{**links[1], "availabilityCode": "F"}]}

    def listing(*entries: object) -> dict[str, object]:
        return {**europepmc_record("No", "No free PDF.", pmid="3"), "fullTextUrlList": entries[0]}

    none_free = [
        listing({"fullTextUrl": [{**links[1], "availabilityCode": "S"}]}),  # subscription
        listing({"fullTextUrl": [{**links[1], "documentStyle": "html"}]}),  # not a PDF
        listing({"fullTextUrl": [{**links[1], "url": "ftp://x.example/a.pdf"}]}),
        listing({"fullTextUrl": [{**links[1], "url": "https://x.example/" + "a" * 5_000}]}),
        listing({"fullTextUrl": [{**links[1], "availabilityCode": ["OA"]}]}),
        listing({"fullTextUrl": [*[links[0]] * 30, links[1]]}),  # beyond the links looked at
        listing({"fullTextUrl": "not a list"}),
        listing(None),
    ]
    records = [free, free_to_read, europepmc_record("Closed", "Subscription only.", pmid="4")]
    with FakeJsonApi(PATH, payload(*records, *none_free)) as api:
        found = await EuropePmcProvider(api.api_url).search("x", 20)
    assert [r.pdf_url for r in found] == [pdf, pdf, "", *[""] * len(none_free)]
    assert found[0].url == "https://pubmed.ncbi.nlm.nih.gov/1/", "the abstract at its own page"


async def test_an_open_access_pmc_article_is_read_as_its_full_text_at_its_pmc_page() -> None:
    article = europepmc_record("Open", "An open article.", pmid="5", pmcid="PMC7745181")
    hostile = [
        {**article, "pmcid": "PMC7745181/../../admin"},
        {**article, "pmcid": "pmc1"},
        {**article, "pmcid": ["PMC1"]},
        {**article, "pmcid": "PMC" + "1" * 11},
        {**article, "pmcid": "PMC\u0661\u0662"},  # digits, not ASCII ones: no URL of them
        {**article, "isOpenAccess": "N"},  # in PMC, not open access: no full text to read
        {**article, "isOpenAccess": True},
    ]
    with FakeJsonApi(PATH, payload(article, *hostile)) as api:
        found = await EuropePmcProvider(api.api_url).search("x", 20)
        base = api.api_url.removesuffix("/search")
    assert (found[0].url, found[0].full_text_url, found[0].complete) == (
        "https://pmc.ncbi.nlm.nih.gov/articles/PMC7745181/",
        f"{base}/PMC7745181/fullTextXML",
        True,  # never fetched as a page: its text comes from the service
    )
    assert [(r.url, r.full_text_url) for r in found[1:]] == [
        ("https://pubmed.ncbi.nlm.nih.gov/5/", "")
    ] * len(hostile)


@pytest.mark.parametrize(
    ("endpoint", "base"),
    [
        (
            "https://www.ebi.ac.uk/europepmc/webservices/rest/search",
            "https://www.ebi.ac.uk/europepmc/webservices/rest",
        ),
        ("https://mirror.example/rest/search/", "https://mirror.example/rest"),
        ("https://mirror.example/find", ""),  # not named as Europe PMC's: none known
        ("search", ""),
    ],
)
def test_full_texts_are_read_beside_the_search_endpoint(endpoint: str, base: str) -> None:
    assert full_text_base(endpoint) == base
