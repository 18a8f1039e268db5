"""Room for PDFs past a page's download cap: the bytes this process's fetches hold at once.

A page is read up to 2 MB (`fetch.MAX_PAGE_BYTES`); a PDF, read whole or not at all, up to
20 MB (`fetch.MAX_PDF_BYTES`). Researchers read many pages at once: 16 researchers, each
step 4 queries of 10 pages, could hold 640 such files, 12.8 GB. So what a PDF reads past
2 MB is taken from one room of `ROOM` bytes shared by every run of the process, from the
download until its text is extracted, and given back then; a PDF that finds too little
room is cut there and skipped saying so, as one over 20 MB is.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

ROOM = 120_000_000  # six PDFs of 20 MB, or sixty of 4 MB


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

    @contextmanager
    def taken(self, wanted: int) -> Iterator[int]:
        """As many of `wanted` bytes as are left (none for a negative), until the block ends."""
        with self._lock:
            granted = max(0, min(wanted, self._left))
            self._left -= granted
        try:
            yield granted
        finally:
            with self._lock:
                self._left += granted


_room = Room(ROOM)


def room() -> Room:
    """The process's room for PDFs past a page's cap."""
    return _room
