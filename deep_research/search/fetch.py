"""Fetching pages: SSRF-safe, size- and type-capped, redirects followed hop by hop; a page
whose text its scripts write rendered in a browser when the step has a renderer
(search/browser.py, RENDER_PAGES)."""

from __future__ import annotations

import asyncio
import functools
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from types import TracebackType
from typing import NamedTuple

import httpx

from deep_research.search import pdf_room
from deep_research.search.browser import Renderer, RenderFailed, looks_scripted
from deep_research.search.capped_body import ACCEPT_ENCODING, UnreadableBody, read_capped
from deep_research.search.netguard import AddressPolicy, BlockedAddress, GuardedTransport
from deep_research.text import extract

MAX_REDIRECTS = 5
MAX_PAGE_BYTES = 2_000_000
# A PDF is read whole or not at all (its cross-reference table is at its end: pypdf reads
# none of a file cut short), and a paper with figures is often several MB.
MAX_PDF_BYTES = 20_000_000
USER_AGENT = "Mozilla/5.0 (compatible; deep_research/0.1; research agent)"
READABLE_TYPES = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "application/pdf": "pdf",
    # An article as JATS XML (Europe PMC's full text); other XML is refused when read.
    "application/xml": "jats",
    "text/xml": "jats",
}
# RFC 6838 type/subtype names; anything else in a Content-Type header is not shown.
MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")
SHOWN_MEDIA_TYPE = 60
EXTRACTION_THREADS = 4
NO_TEXT = "no main text could be extracted"


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
    pdf_total: int = 0  # the PDF's pages, read or not (reading stops at `extract.WEB_PDF`)
    # An article's sections (JATS XML, item 0 its abstract), each cut to the page limit: a
    # researcher reads the abstract and those on its topic (search/full_text.py).
    sections: tuple[str, ...] = ()


class Html(NamedTuple):
    """A downloaded HTML body and the URL its redirects ended at."""

    raw: bytes
    url: str


class PageFetcher:
    """Fetches pages in parallel over one shared client; use as `async with PageFetcher(...)`."""

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        timeout: float,
        max_chars: int,
        max_bytes: int = MAX_PAGE_BYTES,
        max_pdf_bytes: int = MAX_PDF_BYTES,
        renderer: Renderer | None = None,
    ) -> None:
        self._policy = policy
        self._renderer = renderer
        self._timeout = timeout
        self._max_chars = max_chars
        self._max_bytes = max_bytes
        self._max_pdf = max_pdf_bytes
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
                page, html = await self._fetch(url)
        except TimeoutError:
            return Page(url, skipped=f"timed out after {self._timeout:g} s")
        except httpx.InvalidURL:
            return Page(url, skipped="invalid URL")  # its message quotes what a redirect sent
        except httpx.HTTPError as error:
            return Page(url, skipped=skip_reason(error))
        if self._renderer is not None and html and looks_scripted(html.raw, page.text):
            return await self._rendered(page, html.url, self._renderer)
        return page

    async def _rendered(self, page: Page, final_url: str, renderer: Renderer) -> Page:
        """`page` as a browser shows it, extracted again; `page` itself, with why, if not."""
        try:
            rendered = await renderer.html(final_url)  # where the redirects, if any, ended
            text = await asyncio.get_running_loop().run_in_executor(
                _extractors(),
                extract.to_text,
                "html",
                rendered.html.encode(),
                "utf-8",
                rendered.url,
            )
        except (RenderFailed, extract.ExtractionFailed) as error:
            return _with_remark(page, str(error))
        if len(text) <= len(page.text):
            return _with_remark(page, "no more text once rendered in a browser")
        note = "rendered in a headless browser (its scripts write the text)"
        if rendered.refused:
            note += f"; {rendered.refused} of its {rendered.requests} requests refused"
        return Page(
            page.url, text=extract.clip(text, self._max_chars), note=note, raw_bytes=page.raw_bytes
        )

    async def _fetch(self, url: str) -> tuple[Page, Html | None]:
        """The page, and its raw HTML when it is HTML (for `looks_scripted`)."""
        with ExitStack() as held:  # a PDF's room past a page's cap, until it is extracted
            return await self._fetch_holding(url, held)

    async def _fetch_holding(self, url: str, held: ExitStack) -> tuple[Page, Html | None]:
        current = httpx.URL(url)
        for _ in range(MAX_REDIRECTS + 1):
            self._policy.check_url(current)
            async with self._client.stream("GET", current) as response:
                if response.is_redirect:
                    current = current.join(response.headers["location"])
                    continue
                if response.status_code >= 400:
                    return Page(url, skipped=f"HTTP {response.status_code}"), None
                media_type = bare_media_type(response.headers.get("content-type", "text/html"))
                kind = READABLE_TYPES.get(media_type)
                if not media_type:
                    return Page(url, skipped="a malformed content type is not read"), None
                if kind is None:
                    return Page(url, skipped=f"content type {media_type!r} is not read"), None
                cap = pdf_room.cap(kind, response.headers, held, self._max_bytes, self._max_pdf)
                if cap.refused:
                    return Page(url, skipped=cap.refused), None  # never downloaded
                try:
                    raw, cut = await read_capped(response, cap.size, cap.room)
                except UnreadableBody as error:
                    return Page(url, skipped=str(error)), None
                if kind == "pdf" and cut:
                    return Page(url, skipped=cap.why_cut(len(raw)), raw_bytes=len(raw)), None
                charset = response.charset_encoding
            try:
                read = await _extracted(held, kind, raw, charset, str(current))
            except extract.ExtractionFailed as error:
                return Page(url, skipped=str(error), raw_bytes=len(raw)), None
            note = f"only the first {cap.size:,} bytes were read" if cut else ""
            note = "; ".join(filter(None, [note, read.note]))
            html = Html(raw, str(current)) if kind == "html" else None
            if not read.text:
                return Page(url, skipped=NO_TEXT, raw_bytes=len(raw)), html
            clip = functools.partial(extract.clip, limit=self._max_chars)
            page = Page(
                url,
                clip(read.text),
                note=note,
                raw_bytes=len(raw),
                pdf_pages=tuple(map(clip, read.pdf_pages)),
                pdf_total=read.pdf_total,
                sections=tuple(map(clip, read.sections)),
            )
            return page, html
        return Page(url, skipped=f"more than {MAX_REDIRECTS} redirects"), None


async def _extracted(
    held: ExitStack, kind: str, raw: bytes, charset: str | None, url: str
) -> extract.Read:
    """`extract.read_body` on the extraction threads. What `held` holds (a PDF's room) goes
    back when the extraction ends, not before: cancelled by the fetch's deadline, a job
    still queued lets its bytes go at once, one under way when its thread does."""
    box = [raw]
    job = _extractors().submit(_read_boxed, box, kind, charset, url)
    room_back = held.pop_all()
    job.add_done_callback(lambda _: room_back.close())
    try:
        return await asyncio.wrap_future(job)
    except asyncio.CancelledError:
        box.clear()
        raise


def _read_boxed(box: list[bytes], kind: str, charset: str | None, url: str) -> extract.Read:
    try:
        raw = box.pop()
    except IndexError:  # its fetch ended while the job waited for a thread
        raise extract.ExtractionFailed("the fetch ended before its text was extracted") from None
    return extract.read_body(kind, raw, charset, url)


def _with_remark(page: Page, remark: str) -> Page:
    """`page` with why rendering did not help, beside its skip reason or its note."""
    if page.skipped:
        return replace(page, skipped=f"{page.skipped}; {remark}")
    return replace(page, note=f"{page.note}; {remark}" if page.note else remark)


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
