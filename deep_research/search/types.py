"""What every search provider speaks: a result, a provider's results, its error, its shape.

Apart from the providers themselves so that the library's provider, the cache, the chain
and relevance scoring share these without importing every web client.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from deep_research.errors import DeepResearchError

# A title is a one-line label: whitespace collapsed, and cut to this many characters.
MAX_TITLE_CHARS = 300


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    content: str
    score: float | None = None  # the provider's own score, on its own scale (informational)
    # The content is the text of the page at `url` (an arXiv abstract on its abs page):
    # there is nothing more to read there, so the page is not fetched.
    complete: bool = False
    pdf_page: int = 0  # the page of a PDF this result is (search/pdf_pages.py); 0: none
    # The open-access PDF of a paper the API names (a checked web URL; "": none): read in
    # place of the result's page, its best pages sources of their own (search/pdf_pages.py).
    pdf_url: str = ""
    # An open-access article's full text as JATS XML (Europe PMC's; "": none), read before
    # its PDF; its sections are shown at `url`, the article's page (search/full_text.py).
    full_text_url: str = ""
    # The paper rendered as a web page (arXiv's HTML; "": none), read in place of its PDF
    # when that cannot be read; its text is cited there (search/full_text.py).
    html_url: str = ""


@dataclass(frozen=True)
class Years:
    """Publication years a search is limited to, each end included; either may be open.
    Both are checked integers (researcher/sources.py): a provider puts nothing else of
    the researcher's into its date filter."""

    first: int | None = None
    last: int | None = None

    def key(self) -> str:
        """The range in a search's key: the same query over other years is another search."""
        return f"{self.first or ''}-{self.last or ''}"


class Results(list[SearchResult]):
    """A provider's usable results, and how many of its answer's results were malformed."""

    def __init__(self, results: Iterable[SearchResult] = (), malformed: int = 0) -> None:
        super().__init__(results)
        self.malformed = malformed


class SearchError(DeepResearchError, RuntimeError):
    """A provider failed for one query; the message names the provider and the query.

    `transient` errors (timeouts, connection failures, 5xx) are worth retrying;
    `rate_limited` ones are better answered by the next provider than by waiting, unless
    the provider said when to come back (`retry_after`, seconds) and that is soon.
    """

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        rate_limited: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ):
        super().__init__(message)
        self.transient = transient
        self.rate_limited = rate_limited
        self.retry_after = retry_after
        self.status = status  # the HTTP status the provider answered, when that was the failure


# The providers whose `search` takes a range of years (`years=`, a keyword); the chain
# gives it to no other, and says so (search/chain.py).
DATED_PROVIDERS = frozenset({"arxiv", "openalex", "europepmc", "tavily"})


class SearchProvider(Protocol):
    name: str
    max_concurrency: int  # searches in flight at once, across every researcher of the process

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


class DatedSearchProvider(SearchProvider, Protocol):
    """A provider named in `DATED_PROVIDERS`: its search also takes a range of years."""

    async def search(
        self, query: str, max_results: int, *, years: Years | None = None
    ) -> list[SearchResult]: ...
