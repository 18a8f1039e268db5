"""OpenAlex as a search provider: its works API, each work's abstract as the result.

OpenAlex keeps an abstract as an inverted index (word -> positions); it is put back into
text here, within a bound on words and positions a hostile answer cannot stretch. A
result's URL is the work's DOI (`https://doi.org/...`, built from the DOI itself), read
like any result page through the address guard, or, without a DOI, its landing page when
that is a web URL; a work with neither is skipped. The work's open-access PDF, when
OpenAlex knows one (`best_oa_location.pdf_url`), is the result's `pdf_url`: read in place
of the landing page, through the same guard. An open-access work with a copy in PMC
(`ids.pmcid`) is read first as that copy's full text, from Europe PMC's service
(`europepmc.pmc_article`), and cited at its PMC page, as a Europe PMC result is; when
that full text cannot be read, the PMC page is, then the PDF (search/full_text.py).

Hand-written: `pyalex` is synchronous (requests) and reads whole answers; the API is one
GET of JSON here, through `api_call`.
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import Any
from urllib.parse import quote

from deep_research.search import api_call
from deep_research.search.europepmc import pmc_article
from deep_research.search.types import (
    MAX_TITLE_CHARS,
    Results,
    SearchError,
    SearchResult,
    Years,
)
from deep_research.text.urls import checked_web_url, is_pdf
from deep_research.text.wording import one_line

DEFAULT_API_URL = "https://api.openalex.org/works"
MAX_ABSTRACT_WORDS = 1_500  # abstracts are a few hundred words
MAX_ABSTRACT_CHARS = 6_000
MAX_QUERY_CHARS = 300
DOI = re.compile(r"(?:https?://(?:dx\.)?doi\.org/)?(10\.[0-9]{4,9}/[!-~]{1,300})")
# `ids.pmcid` as OpenAlex gives it, with or without "PMC" before the number; leading zeros
# dropped, so that one article is one URL (PMC's own form).
PMC_COPY = re.compile(
    r"https?://www\.ncbi\.nlm\.nih\.gov/pmc/articles/(?:PMC)?0*([1-9][0-9]{0,9})/?"
)


def abstract_text(index: object) -> str:
    """The abstract an inverted index holds; '' for anything that is not one."""
    if not isinstance(index, dict):
        return ""
    placed: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(word, str) or not isinstance(positions, list):
            return ""
        for position in positions:
            if not isinstance(position, int) or not 0 <= position < MAX_ABSTRACT_WORDS:
                continue  # beyond the bound (or not a position): dropped
            placed[position] = word
    return " ".join(placed[p] for p in sorted(placed))


def work_url(work: dict[str, Any]) -> str | None:
    doi = work.get("doi")
    match = DOI.fullmatch(doi) if isinstance(doi, str) else None
    if match:
        return "https://doi.org/" + quote(match[1], safe="/:;()._-")
    location = work.get("primary_location")
    return checked_web_url(location.get("landing_page_url") if isinstance(location, dict) else None)


def open_access_pdf(work: dict[str, Any]) -> str:
    """The work's open-access PDF: its best open-access location's `pdf_url`, else its
    `open_access.oa_url` when that names a PDF file; '' when neither is a web URL."""
    best, access = work.get("best_oa_location"), work.get("open_access")
    if isinstance(best, dict) and (url := checked_web_url(best.get("pdf_url"))):
        return url
    oa_url = checked_web_url(access.get("oa_url")) if isinstance(access, dict) else None
    return oa_url if oa_url is not None and is_pdf(oa_url) else ""


def pmc_copy(work: dict[str, Any], full_texts: str) -> tuple[str, str]:
    """An open-access work's copy in PMC: its full text XML on Europe PMC's service at
    `full_texts`, and its PMC page; ('', '') for any other work, or without `full_texts`."""
    access, ids = work.get("open_access"), work.get("ids")
    if not full_texts or not isinstance(access, dict) or access.get("is_oa") is not True:
        return "", ""
    pmcid = ids.get("pmcid") if isinstance(ids, dict) else None
    match = PMC_COPY.fullmatch(pmcid) if isinstance(pmcid, str) else None
    return pmc_article(f"PMC{match[1]}", full_texts) if match else ("", "")


def publication_dates(years: Years) -> str:
    """OpenAlex's filter for works published within `years` (checked integers)."""
    ends = []
    if years.first is not None:
        ends.append(f"from_publication_date:{years.first:04d}-01-01")
    if years.last is not None:
        ends.append(f"to_publication_date:{years.last:04d}-12-31")
    return ",".join(ends)


class OpenAlexProvider:
    name = "openalex"
    max_concurrency = 4

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        timeout: float = api_call.TIMEOUT,
        full_texts: str = "",
    ) -> None:
        """`full_texts`: Europe PMC's full-text service (`europepmc.full_text_base`), where
        open-access works' PMC copies are read; '' reads none."""
        self._url = api_url
        self._timeout = timeout
        self._full_texts = full_texts

    async def search(
        self, query: str, max_results: int, *, years: Years | None = None
    ) -> list[SearchResult]:
        text = " ".join(query.split())[:MAX_QUERY_CHARS]
        if not text:
            return Results()
        params = {"search": text, "per-page": str(max_results)}
        if years is not None and (dates := publication_dates(years)):
            params["filter"] = dates
        return await api_call.parsed(
            self.name,
            query,
            self._url,
            params,
            partial(parse_works, query=query, full_texts=self._full_texts),
            accept="application/json",
            timeout=self._timeout,
            max_results=max_results,
        )


def parse_works(body: bytes, query: str, full_texts: str = "") -> Results:
    """The works of an answer that have a title, an abstract and a URL; the rest counted
    malformed. Raises `SearchError` for an answer that is not a works list."""
    try:
        payload: Any = json.loads(body)
    except (ValueError, RecursionError) as error:  # RecursionError: arrays nested deeply
        raise SearchError(f"openalex answered something that is not JSON for {query!r}") from error
    works = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(works, list):
        raise SearchError(f"openalex answered something that is not a works list for {query!r}")
    kept = [result for work in works if (result := _work(work, full_texts)) is not None]
    return Results(kept, malformed=len(works) - len(kept))


def _work(work: object, full_texts: str) -> SearchResult | None:
    if not isinstance(work, dict):
        return None
    title = work.get("display_name") or work.get("title")
    title = api_call.printable_line(title) if isinstance(title, str) else ""
    abstract = api_call.printable_line(abstract_text(work.get("abstract_inverted_index")))
    url = work_url(work)
    if not title or not abstract or url is None:
        return None
    year = work.get("publication_year")
    label = f"{title} ({year})" if isinstance(year, int) and not isinstance(year, bool) else title
    xml, article = pmc_copy(work, full_texts)
    return SearchResult(
        url=article or url,
        title=one_line(label, MAX_TITLE_CHARS),
        content=one_line(abstract, MAX_ABSTRACT_CHARS),
        pdf_url=open_access_pdf(work),
        full_text_url=xml,
    )
