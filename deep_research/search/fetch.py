"""Fetching pages: SSRF-safe, size- and type-capped, redirects followed hop by hop."""

from __future__ import annotations

import asyncio
import functools
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType

import httpx

from deep_research.search.capped_body import ACCEPT_ENCODING, UnreadableBody, read_capped
from deep_research.search.netguard import AddressPolicy, BlockedAddress, GuardedTransport
from deep_research.text import extract

MAX_REDIRECTS = 5
MAX_PAGE_BYTES = 2_000_000
USER_AGENT = "Mozilla/5.0 (compatible; deep_research/0.1; research agent)"
READABLE_TYPES = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "application/pdf": "pdf",
}
# RFC 6838 type/subtype names; anything else in a Content-Type header is not shown.
MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")
SHOWN_MEDIA_TYPE = 60
EXTRACTION_THREADS = 4


@functools.cache
def _extractors() -> ThreadPoolExecutor:
    """Threads for page extraction alone (CPU-bound, bounded by `extract.MAX_NODES`).

    Not the event loop's default executor, where relevance scoring runs and, while the
    model loads, waits: one researcher's pages are then never queued behind another's
    scoring. Created on the first page, never at import.
    """
    return ThreadPoolExecutor(EXTRACTION_THREADS, thread_name_prefix="extract")


@dataclass(frozen=True)
class Page:
    """What fetching one URL gave: extracted text, or the reason there is none."""

    url: str
    text: str = ""
    skipped: str = ""  # why no text was read; empty when `text` holds the page
    note: str = ""  # a remark on text that was read, e.g. that the download was cut
    raw_bytes: int = 0  # body bytes read (decompressed), for the frugality benchmark
    # A PDF's pages (item 0 is page 1), each cut to the page limit: a researcher reads the
    # few that answer its query, each a source of its own (search/pdf_pages.py).
    pdf_pages: tuple[str, ...] = ()


class PageFetcher:
    """Fetches pages in parallel over one shared client; use as `async with PageFetcher(...)`."""

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        timeout: float,
        max_chars: int,
        max_bytes: int = MAX_PAGE_BYTES,
    ) -> None:
        self._policy = policy
        self._timeout = timeout
        self._max_chars = max_chars
        self._max_bytes = max_bytes
        self._client = httpx.AsyncClient(
            transport=GuardedTransport(policy),
            follow_redirects=False,  # followed by hand so every hop is checked
            timeout=timeout,
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html,text/plain;q=0.9,*/*;q=0.5",
                "Accept-Encoding": ACCEPT_ENCODING,
            },
        )

    async def __aenter__(self) -> PageFetcher:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._client.aclose()

    async def fetch(self, url: str) -> Page:
        """The page at `url`; every failure becomes a `Page` that says why it was skipped."""
        try:
            # One deadline for the whole fetch: httpx's timeouts are per read, which a
            # server trickling bytes would never trip.
            async with asyncio.timeout(self._timeout):
                return await self._fetch(url)
        except TimeoutError:
            return Page(url, skipped=f"timed out after {self._timeout:g} s")
        except httpx.InvalidURL:
            return Page(url, skipped="invalid URL")  # its message quotes what a redirect sent
        except httpx.HTTPError as error:
            return Page(url, skipped=skip_reason(error))

    async def _fetch(self, url: str) -> Page:
        current = httpx.URL(url)
        for _ in range(MAX_REDIRECTS + 1):
            self._policy.check_url(current)
            async with self._client.stream("GET", current) as response:
                if response.is_redirect:
                    current = current.join(response.headers["location"])
                    continue
                if response.status_code >= 400:
                    return Page(url, skipped=f"HTTP {response.status_code}")
                media_type = bare_media_type(response.headers.get("content-type", "text/html"))
                kind = READABLE_TYPES.get(media_type)
                if not media_type:
                    return Page(url, skipped="a malformed content type is not read")
                if kind is None:
                    return Page(url, skipped=f"content type {media_type!r} is not read")
                try:
                    raw, cut = await read_capped(response, self._max_bytes)
                except UnreadableBody as error:
                    return Page(url, skipped=str(error))
                charset = response.charset_encoding
            loop = asyncio.get_running_loop()
            try:
                if kind == "pdf":
                    pages = await loop.run_in_executor(_extractors(), extract.pdf_pages, raw)
                    text = "\n\n".join(pages).strip()
                else:
                    pages = []
                    text = await loop.run_in_executor(
                        _extractors(), extract.to_text, kind, raw, charset, str(current)
                    )
            except extract.ExtractionFailed as error:
                return Page(url, skipped=str(error), raw_bytes=len(raw))
            note = f"only the first {self._max_bytes:,} bytes were read" if cut else ""
            if not text:
                return Page(url, skipped="no main text could be extracted", raw_bytes=len(raw))
            clipped = tuple(extract.clip(page, self._max_chars) for page in pages)
            return Page(
                url,
                text=extract.clip(text, self._max_chars),
                note=note,
                raw_bytes=len(raw),
                pdf_pages=clipped,
            )
        return Page(url, skipped=f"more than {MAX_REDIRECTS} redirects")


def bare_media_type(header: str) -> str:
    """The type/subtype of a Content-Type header, at most 60 characters; '' if malformed.

    A skip reason names it, and skip reasons reach the model outside the fences, so the
    header's parameters (free text a server chooses) are never kept.
    """
    media = header.split(";", 1)[0].strip().lower()
    if not MEDIA_TYPE.fullmatch(media):
        return ""
    return media if len(media) <= SHOWN_MEDIA_TYPE else media[: SHOWN_MEDIA_TYPE - 1] + "…"


def skip_reason(error: httpx.HTTPError) -> str:
    """Why a fetch failed, in words that may reach the model outside the fences.

    Only the error's type is kept, not its message: protocol errors quote the server's
    status or header lines, others name hosts a redirect chose. Refusals are netguard's
    own words (fixed text and IP addresses).
    """
    if isinstance(error, BlockedAddress):
        return f"refused: {error}"
    return type(error).__name__
