"""search/openalex.py against a fake OpenAlex /works API: abstracts rebuilt, DOIs as links."""

from __future__ import annotations

import pytest

from deep_research.search.openalex import OpenAlexProvider, abstract_text
from deep_research.search.types import SearchError, Years
from tests.support.fakes.scholarly_servers import FakeJsonApi, openalex_work

WORK = openalex_work(
    "The state of OA",
    "Despite growing interest in Open Access, little is known.",
    "https://doi.org/10.7717/peerj.4375",
)


def test_an_inverted_index_is_put_back_in_order_within_its_bound() -> None:
    assert abstract_text({"b": [1], "a": [0, 2]}) == "a b a"
    assert abstract_text({"a": [0, 10**9], "b": ["x", 1]}) == "a b"
    assert abstract_text({"a": "0"}) == "" and abstract_text(None) == ""


async def test_each_work_is_its_abstract_at_its_doi() -> None:
    with FakeJsonApi("/works", {"meta": {"count": 1}, "results": [WORK]}) as api:
        found = await OpenAlexProvider(api.api_url).search("open  access", 5)
        sent = api.requests[0]
    assert [(r.url, r.title) for r in found] == [
        ("https://doi.org/10.7717/peerj.4375", "The state of OA (2020)")
    ]
    assert found[0].content == "Despite growing interest in Open Access, little is known."
    assert sent == {"search": "open access", "per-page": "5"}


async def test_hostile_works_cost_only_themselves() -> None:
    works = [
        openalex_work("No DOI", "Has a landing page.", None),
        {
            **openalex_work("Bad link", "text", None),
            "primary_location": {"landing_page_url": "javascript:x"},
        },
        {**openalex_work("Odd DOI", "text", "10.1/x y"), "primary_location": None},
        {**openalex_work("Surrogate", "text", "10.1234/a\ud800"), "primary_location": None},
        openalex_work("", "no title", "10.1234/a"),
        {**openalex_work("No abstract", "x", "10.1234/b"), "abstract_inverted_index": None},
        "not a work",
    ]
    with FakeJsonApi("/works", {"results": works}) as api:
        found = await OpenAlexProvider(api.api_url).search("x", 10)
    assert [r.url for r in found] == ["https://journal.example/article/1"]
    assert found.malformed == 6  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body", [b"<html>", b"{}", b'{"results": 3}', b"[" * 200_000 + b"]" * 200_000]
)
async def test_an_answer_that_is_not_a_works_list_is_an_error(body: bytes) -> None:
    with FakeJsonApi("/works", {}, script=[(200, {}, body)]) as api:
        with pytest.raises(SearchError, match="openalex answered something"):
            await OpenAlexProvider(api.api_url).search("x", 5)


async def test_no_works_is_no_results() -> None:
    with FakeJsonApi("/works", {"meta": {"count": 0}, "results": []}) as api:
        assert await OpenAlexProvider(api.api_url).search("x", 5) == []


async def test_a_range_of_years_is_a_publication_date_filter() -> None:
    with FakeJsonApi("/works", {"meta": {"count": 1}, "results": [WORK]}) as api:
        provider = OpenAlexProvider(api.api_url)
        await provider.search("open access", 5, years=Years(2019, 2023))
        await provider.search("open access", 5, years=Years(None, 2001))
        await provider.search("open access", 5, years=Years(2020, None))
        await provider.search("open access", 5, years=Years())
        sent = [request.get("filter") for request in api.requests]
    assert sent == [
        "from_publication_date:2019-01-01,to_publication_date:2023-12-31",
        "to_publication_date:2001-12-31",
        "from_publication_date:2020-01-01",
        None,
    ]


async def test_an_open_access_work_names_its_pdf_and_only_a_web_one() -> None:
    pdf = "https://repository.example/files/oa.pdf"
    closed = openalex_work("Closed", "Behind a paywall.", "10.1234/c")
    landing_only = {
        **openalex_work("Landing", "OA at a page.", "10.1234/l", pdf_url=pdf),
        "best_oa_location": {"pdf_url": None, "landing_page_url": "https://r.example/x"},
        "open_access": {"is_oa": True, "oa_url": "https://r.example/x"},
    }
    oa_url_pdf = {
        **openalex_work("Only oa_url", "Its oa_url is a PDF.", "10.1234/o"),
        "open_access": {"is_oa": True, "oa_url": "https://r.example/o.pdf"},
    }
    hostile = [
        {**openalex_work("Hostile", "x", f"10.1234/h{n}"), "best_oa_location": location}
        for n, location in enumerate(
            [
                {"pdf_url": "file:///etc/passwd"},
                {"pdf_url": "https://r.example/" + "a" * 5_000 + ".pdf"},
                {"pdf_url": "https://r.example/\u202eevil.pdf"},
                {"pdf_url": ["https://r.example/a.pdf"]},
                "not a location",
            ]
        )
    ]
    works = [openalex_work("Open", "Green OA.", "10.1234/g", pdf_url=pdf), closed, landing_only]
    with FakeJsonApi("/works", {"results": [*works, oa_url_pdf, *hostile]}) as api:
        found = await OpenAlexProvider(api.api_url).search("x", 20)
    assert [r.pdf_url for r in found] == [pdf, "", "", "https://r.example/o.pdf", *[""] * 5]
    assert found[0].url == "https://doi.org/10.1234/g", "the abstract stays at its DOI"


BASE = "https://www.ebi.ac.uk/europepmc/webservices/rest"
COPY = (f"{BASE}/PMC5815332/fullTextXML", "https://pmc.ncbi.nlm.nih.gov/articles/PMC5815332/")


@pytest.mark.parametrize(
    ("pmcid", "is_oa", "full_texts", "copy"),
    [
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/5815332", True, BASE, COPY),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC5815332/", True, BASE, COPY),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/0005815332", True, BASE, COPY),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC0", True, BASE, ("", "")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/5815332", False, BASE, ("", "")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/5815332", "true", BASE, ("", "")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/5815332", True, "", ("", "")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/\u0665\u0668\u0661", True, BASE, ("", "")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/58/../../x", True, BASE, ("", "")),
        ("https://evil.example/pmc/articles/5815332", True, BASE, ("", "")),
        ("https://www.ncbi.nlm.nih.gov/pmc/articles/" + "9" * 11, True, BASE, ("", "")),
        (["https://www.ncbi.nlm.nih.gov/pmc/articles/5815332"], True, BASE, ("", "")),
        (None, True, BASE, ("", "")),
    ],
)
async def test_an_open_access_work_in_pmc_is_read_as_its_copy_there(
    pmcid: object, is_oa: object, full_texts: str, copy: tuple[str, str]
) -> None:
    """Its full text on Europe PMC's service, cited at its PMC page; any other work, or an
    id that is not PMC's number, keeps its DOI and has no full text."""
    work = {**WORK, "ids": {"pmcid": pmcid}, "open_access": {"is_oa": is_oa}}
    with FakeJsonApi("/works", {"results": [work]}) as api:
        [found] = await OpenAlexProvider(api.api_url, full_texts=full_texts).search("oa", 5)
    xml, page = copy
    assert (found.full_text_url, found.url) == (xml, page or "https://doi.org/10.7717/peerj.4375")
    assert not found.complete, "its page is read when neither copy can be"


async def test_the_configured_openalex_reads_pmc_copies_from_the_configured_europe_pmc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from deep_research.search.providers import make_provider

    work = {**WORK, "ids": {"pmcid": "https://www.ncbi.nlm.nih.gov/pmc/articles/5815332"}}
    with FakeJsonApi("/works", {"results": [{**work, "open_access": {"is_oa": True}}]}) as api:
        monkeypatch.setenv("OPENALEX_API_URL", api.api_url)
        monkeypatch.setenv("EUROPEPMC_API_URL", "http://127.0.0.1:9/mirror/rest/search")
        [found] = await make_provider("openalex").search("oa", 5)
    assert found.full_text_url == "http://127.0.0.1:9/mirror/rest/PMC5815332/fullTextXML"
