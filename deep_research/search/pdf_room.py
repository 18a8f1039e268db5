"""How far a PDF is downloaded, and the room its bytes past a page's cap take.

A page is read up to 2 MB (`fetch.MAX_PAGE_BYTES`); a PDF, read whole or not at all (its
cross-reference table comes last: pypdf reads none of a file cut short), up to 20 MB
(`fetch.MAX_PDF_BYTES`). Researchers read many pages at once: 16 researchers, each step 4
queries of 10 pages, could hold 640 such files, 12.8 GB. So the bytes a PDF may read past
2 MB are taken from one room of `ROOM` for every run of the process: what its stated
length needs, before the download; for one that states none (or a compressed one, whose
stated length is not what is read), as its body grows past 2 MB, `STEP` bytes at a time
(`Growing`). They are given back once its text is extracted (`fetch._extracted`). A PDF
that finds too little room is skipped saying so, as one over 20 MB is. The room counts
those reservations, not the process's memory.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import NamedTuple

import httpx

from deep_research.search.capped_body import UnreadableBody, content_coding

# Six PDFs of 20 MB, or sixty of 4 MB, whether they state their length or not.
ROOM = 120_000_000
# A PDF that states no length takes room as its body grows, this much at a time.
STEP = 256 * 1024


class Room:
    """Bytes shared by whoever takes them, given back when each is done (thread-safe)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._left = size
        self._lock = threading.Lock()

    @property
    def left(self) -> int:
        with self._lock:
            return self._left

    def take(self, wanted: int) -> int:
        """As many of `wanted` bytes as are left (none for a negative); `give` them back."""
        with self._lock:
            granted = max(0, min(wanted, self._left))
            self._left -= granted
            return granted

    def give(self, taken: int) -> None:
        with self._lock:
            self._left += taken

    @contextmanager
    def taken(self, wanted: int) -> Iterator[int]:
        """As many of `wanted` bytes as are left, until the block ends."""
        granted = self.take(wanted)
        try:
            yield granted
        finally:
            self.give(granted)


class Growing:
    """A PDF's room as its body grows: `free` bytes without any, then what the process's
    room grants, `STEP` bytes at a time, up to `most` in all (what it may read whole); given
    back when `held` lets go. The body may go one byte further: reaching it is how a body
    too long is told."""

    def __init__(self, held: ExitStack, free: int, most: int) -> None:
        self.free, self.most = free, most
        self.taken = 0
        held.callback(lambda: room().give(self.taken))

    @property
    def limit(self) -> int:
        """How far the body may go now: one byte past what it holds."""
        return self.free + self.taken + 1

    def __call__(self, wanted: int) -> int:
        """How far the body may now go, `wanted` bytes tried for (capped_body.read_capped)."""
        need = min(wanted - 1, self.most) - self.free - self.taken
        if need > 0:
            self.taken += room().take(min(max(need, STEP), self.most - self.free - self.taken))
        return self.limit

    def ran_out(self, read: int) -> bool:
        """Whether a body cut after `read` bytes was cut for want of room, not its size."""
        return read >= self.limit and self.free + self.taken < self.most


_room = Room(ROOM)


def room() -> Room:
    """The process's room for PDFs past a page's cap."""
    return _room


class Cap(NamedTuple):
    """How many bytes of a body are read; why it is not read at all, or once cut there;
    and, for a PDF that states no length, the room it takes as it grows."""

    size: int
    refused: str = ""
    when_cut: str = ""
    room: Growing | None = None

    def why_cut(self, read: int) -> str:
        """Why a PDF cut after `read` bytes is not read."""
        if self.room is not None and self.room.ran_out(read):
            return too_big(read - 1, now=True)
        return self.when_cut


def cap(kind: str, headers: httpx.Headers, held: ExitStack, page: int, most: int) -> Cap:
    """How far a body of `kind` is read: `page` bytes, or a PDF up to `most`, whole or not
    at all, its room past `page` taken for as long as `held` holds it. A PDF's cap is one
    byte past what it may read whole: a body that reaches it counts as cut."""
    if kind != "pdf":
        return Cap(page)
    page = min(page, most)
    over = too_big(most)
    declared = stated_length(headers)
    if declared > most:
        return Cap(0, refused=over)
    # A compressed body's stated length is its compressed size: not what is read.
    if declared < 0 or _coding(headers) != "identity":
        return Cap(most + 1, when_cut=over, room=Growing(held, page, most))
    wanted = declared - page
    granted = held.enter_context(room().taken(wanted))
    if granted < wanted:
        short = too_big(page + granted, now=True)
        return Cap(page + granted + 1, refused=short, when_cut=short)
    # Longer than it said (a chunked body beside a length): not what it said.
    return Cap(max(page, declared) + 1, when_cut=LONGER_THAN_STATED)


LONGER_THAN_STATED = "a PDF longer than its stated length is not read"


def too_big(size: int, now: bool = False) -> str:
    """Why a PDF over `size` bytes is not read (fixed words): a PDF cut short cannot be."""
    if now:
        return (
            f"a PDF over {size:,} bytes is not read now: other PDFs being read hold the room "
            "for more (cut short, none of it can be)"
        )
    return f"a PDF over {size:,} bytes is not read (cut short, none of it can be)"


def stated_length(headers: httpx.Headers) -> int:
    """The body's size its Content-Length header states (over the wire); -1 when it states
    none a number can be read from (h11 refuses more than 20 digits, and other framing)."""
    value = headers.get("content-length", "").strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 20 else -1


def _coding(headers: httpx.Headers) -> str:
    try:
        return content_coding(headers)
    except UnreadableBody:
        return "unreadable"  # refused by the read itself
