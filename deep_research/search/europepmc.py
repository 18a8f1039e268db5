"""Europe PMC as a search provider: its REST search, each article's abstract as the result.

Europe PMC covers PubMed and more. A result's content is the abstract (its section
headings and markup taken out), and its URL the page that shows that abstract as text:
PubMed's for a PubMed record (`https://pubmed.ncbi.nlm.nih.gov/PMID/`), Europe PMC's
otherwise, built from the record's source and identifier, never taken from the answer.
The page is not fetched (`complete`): the abstract is what it shows. A free PDF the record
lists (`fullTextUrlList`: document style "pdf", availability "OA" or "F") is the result's
`pdf_url`, read through the address guard like any result page.

An open-access article in PMC (`isOpenAccess` "Y", a `pmcid`) has its full text on the
same REST service as JATS XML (`/PMCID/fullTextXML`): the result's `full_text_url`, read
before its PDF (search/full_text.py), and its URL is then the article's PMC page
(`https://pmc.ncbi.nlm.nih.gov/articles/PMCID/`), which shows the abstract and that text.

Hand-written: no maintained client library for the REST API exists on PyPI.
"""

from __future__ import annotations

import html
import json
import re
from functools import partial
from typing import Any

from deep_research.search import api_call
from deep_research.search.types import (
    MAX_TITLE_CHARS,
    Results,
    SearchError,
    SearchResult,
    Years,
)
from deep_research.text.urls import checked_web_url
from deep_research.text.wording import one_line

DEFAULT_API_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest/search"
MAX_ABSTRACT_CHARS = 6_000
MAX_QUERY_CHARS = 300
SOURCE = re.compile(r"[A-Z]{3}")
RECORD_ID = re.compile(r"[A-Za-z0-9]{1,20}")
PMID = re.compile(r"[0-9]{1,10}")
PMCID = re.compile(r"PMC[0-9]{1,10}")
PMC_ARTICLES = "https://pmc.ncbi.nlm.nih.gov/articles"  # an article's page: /PMCID/
_TAG = re.compile(r"<[^<>]{0,200}>")
# Open access, free to read (not "S", subscription); a tuple: a hostile list compares, unhashed.
FREE = ("OA", "F")
MAX_FULL_TEXT_URLS = 20  # a record lists a handful of full-text links; more are not read


def without_markup(text: str) -> str:
    """An abstract's text: tags (`<h4>Background</h4>`, `<i>`) out, entities decoded."""
    return api_call.printable_line(html.unescape(_TAG.sub(" ", text)))


def record_url(record: dict[str, Any]) -> str | None:
    source, record_id, pmid = record.get("source"), record.get("id"), record.get("pmid")
    if source == "MED" and isinstance(pmid, str) and PMID.fullmatch(pmid):
        return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
    if (
        isinstance(source, str)
        and SOURCE.fullmatch(source)
        and isinstance(record_id, str)
        and RECORD_ID.fullmatch(record_id)
    ):
        return f"https://europepmc.org/article/{source}/{record_id}"
    return None


def full_text_base(api_url: str) -> str:
    """Where the service's full texts are, beside its search (`.../rest/search`); '' for
    an endpoint not named so, whose full texts are not known."""
    base, slash, last = api_url.rstrip("/").rpartition("/")
    return base if slash and last == "search" else ""


def open_full_text(record: dict[str, Any], base: str) -> tuple[str, str]:
    """An open-access PMC article's full text XML and its page; ('', '') for any other."""
    pmcid = record.get("pmcid")
    if not base or record.get("isOpenAccess") != "Y":
        return "", ""
    if not isinstance(pmcid, str) or not PMCID.fullmatch(pmcid):
        return "", ""
    return pmc_article(pmcid, base)


def pmc_article(pmcid: str, base: str) -> tuple[str, str]:
    """A PMC article's full text XML on the service at `base`, and the article's page."""
    return f"{base}/{pmcid}/fullTextXML", f"{PMC_ARTICLES}/{pmcid}/"


def free_pdf(record: dict[str, Any]) -> str:
    """The first free PDF among the record's full-text links that is a web URL; '' if none."""
    listed = record.get("fullTextUrlList")
    links = listed.get("fullTextUrl") if isinstance(listed, dict) else None
    for link in links[:MAX_FULL_TEXT_URLS] if isinstance(links, list) else ():
        if (
            isinstance(link, dict)
            and link.get("documentStyle") == "pdf"
            and link.get("availabilityCode") in FREE
            and (url := checked_web_url(link.get("url")))
        ):
            return url
    return ""


def first_published(years: Years) -> str:
    """Europe PMC's clause for records first published within `years` (checked integers);
    an open end is the year 1000 or 9999."""
    first = years.first if years.first is not None else 1000
    last = years.last if years.last is not None else 9999
    return f"FIRST_PDATE:[{first:04d}-01-01 TO {last:04d}-12-31]"


class EuropePmcProvider:
    name = "europepmc"
    max_concurrency = 4

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        timeout: float = api_call.TIMEOUT,
        full_texts: str | None = None,
    ) -> None:
        self._url = api_url
        self._timeout = timeout
        # Where full texts are read: beside the search, unless told (a test's own host).
        self._full_texts = full_text_base(api_url) if full_texts is None else full_texts

    async def search(
        self, query: str, max_results: int, *, years: Years | None = None
    ) -> list[SearchResult]:
        text = " ".join(query.split())[:MAX_QUERY_CHARS]
        if not text:
            return Results()
        params = {
            "query": f"({text}) AND {first_published(years)}" if years is not None else text,
            "format": "json",
            "resultType": "core",
            "pageSize": str(max_results),
        }
        return await api_call.parsed(
            self.name,
            query,
            self._url,
            params,
            partial(parse_records, query=query, full_texts=self._full_texts),
            accept="application/json",
            timeout=self._timeout,
            max_results=max_results,
        )


def parse_records(body: bytes, query: str, full_texts: str = "") -> Results:
    """The records of an answer that have a title, an abstract and an identifier; the rest
    counted malformed. Raises `SearchError` for an answer that is not a result list."""
    try:
        payload: Any = json.loads(body)
    except (ValueError, RecursionError) as error:  # RecursionError: arrays nested deeply
        raise SearchError(f"europepmc answered something that is not JSON for {query!r}") from error
    listed = payload.get("resultList") if isinstance(payload, dict) else None
    records = listed.get("result") if isinstance(listed, dict) else None
    if not isinstance(records, list):
        raise SearchError(f"europepmc answered something that is not a result list for {query!r}")
    kept = [result for record in records if (result := _record(record, full_texts)) is not None]
    return Results(kept, malformed=len(records) - len(kept))


def _record(record: object, full_texts: str) -> SearchResult | None:
    if not isinstance(record, dict):
        return None
    title, abstract = record.get("title"), record.get("abstractText")
    title = without_markup(title) if isinstance(title, str) else ""
    abstract = without_markup(abstract) if isinstance(abstract, str) else ""
    url = record_url(record)
    if not title or not abstract or url is None:
        return None
    authors, year = record.get("authorString"), record.get("pubYear")
    byline = ", ".join(
        api_call.printable_line(part)
        for part in (authors, year)
        if isinstance(part, str) and part.strip()
    )
    xml, article = open_full_text(record, full_texts)
    return SearchResult(
        url=article or url,
        title=one_line(f"{title} ({byline})" if byline else title, MAX_TITLE_CHARS),
        content=one_line(abstract, MAX_ABSTRACT_CHARS),
        complete=True,  # the article's page is not fetched: the API gives its text
        pdf_url=free_pdf(record),
        full_text_url=xml,
    )
