"""A response body read within a byte cap, decompressed here rather than by httpx.

httpx decompresses each network chunk without any bound and applies every encoding a
server lists (`Content-Encoding: gzip, gzip`), so a few kilobytes on the wire can become
gigabytes in memory before a cap on decoded bytes is ever checked. Here the bytes on the
wire count against the cap, one encoding at most is accepted, and zlib is never asked for
more output than the room left under the cap.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import httpx

from deep_research.errors import DeepResearchError

# Sent instead of httpx's default, which also offers zstd and br when their packages
# are installed: nothing but these is decoded here.
ACCEPT_ENCODING = "gzip, deflate"
_ALIASES = {"x-gzip": "gzip", "x-deflate": "deflate"}


class UnreadableBody(DeepResearchError):
    """The body cannot be read safely; the message is fixed text, safe to show the model."""


class _Inflater:
    """Decompresses a gzip or deflate stream, never producing more than the room given."""

    def __init__(self, coding: str) -> None:
        self._coding = coding
        self._head = b""  # deflate: bytes held until the stream's first two can be sniffed
        self._tail = b""  # input not decoded yet: the room was full
        self._zlib: zlib._Decompress | None = None

    def feed(self, data: bytes, room: int) -> bytes:
        """Up to `room` bytes of output for `data`; input left over waits for `more`."""
        if self._zlib is None:
            self._head += data
            if self._coding == "deflate" and len(self._head) < 2:
                return b""
            data, self._head = self._head, b""
            self._zlib = zlib.decompressobj(_window_bits(self._coding, data))
        self._tail += data
        return self.more(room)

    def more(self, room: int) -> bytes:
        """Up to `room` more bytes of output from the input left over. What the room cannot
        take waits for it to grow (a PDF's, pdf_room.Growing), or the body is cut there."""
        if self._zlib is None or room <= 0 or self._zlib.eof:
            return b""  # data after the end of the stream is ignored, as browsers do
        try:
            out = self._zlib.decompress(self._tail, room)
        except zlib.error as error:
            raise UnreadableBody("the compressed body is corrupt") from error
        self._tail = self._zlib.unconsumed_tail
        return out


def _window_bits(coding: str, head: bytes) -> int:
    if coding == "gzip":
        return 47  # 32 + 15: a gzip or zlib header, detected from the stream
    # "deflate" means zlib-wrapped (RFC 9110), but some servers send a raw deflate stream;
    # a zlib header is a deflate method nibble and a 16-bit value divisible by 31.
    is_zlib = head[0] & 0x0F == 8 and int.from_bytes(head[:2], "big") % 31 == 0
    return 15 if is_zlib else -15


def content_coding(headers: httpx.Headers) -> str:
    """'identity', 'gzip' or 'deflate'; raises `UnreadableBody` for anything else."""
    listed = headers.get_list("content-encoding", split_commas=True)
    codings = [c.strip().lower() for c in listed if c.strip().lower() not in ("", "identity")]
    if len(codings) > 1:  # stacked encodings multiply a bomb's ratio; no real site needs them
        raise UnreadableBody("more than one content encoding")
    if not codings:
        return "identity"
    coding = _ALIASES.get(codings[0], codings[0])
    if coding not in ("gzip", "deflate"):
        raise UnreadableBody("unsupported content encoding")
    return coding


async def read_capped(
    response: httpx.Response, cap: int, room: Callable[[int], int] | None = None
) -> tuple[bytes, bool]:
    """At most `cap` decoded bytes of the body, and whether it was cut.

    Reading stops once `cap` bytes came over the wire or `cap` bytes were decoded, so
    neither the download nor the memory used can grow past the cap (by more than one
    network chunk on the wire side). Each step decodes at most `cap` bytes from one chunk,
    which keeps the event loop free. With `room`, what may be held starts at `room(0)`
    and grows as the body does: `room(n)` is how far it may now go, trying for `n` bytes
    (never past `cap`); a body that outgrows it is cut there.
    """
    coding = content_coding(response.headers)
    inflater = _Inflater(coding) if coding != "identity" else None
    allowed = (lambda wanted: min(cap, room(wanted))) if room else (lambda wanted: cap)
    chunks: list[bytes] = []
    wire = size = 0
    limit = allowed(0)
    async for raw in response.aiter_raw():
        wire += len(raw)
        if inflater is None:
            # One byte past what is held: a body that ends there is whole.
            limit = _grown(allowed, limit, min(cap, size + len(raw) + 1))
            piece = raw[: limit - size]
            chunks.append(piece)
            size += len(piece)
        else:
            piece = inflater.feed(raw, limit - size)
            chunks.append(piece)
            size += len(piece)
            while size >= limit and limit < cap:  # the room is full: grow it, then go on
                grown = _grown(allowed, limit, min(cap, limit + len(raw) + 1))
                if grown <= limit:
                    break
                limit = grown
                chunks.append(inflater.more(limit - size))  # a part of its own: never copied
                size += len(chunks[-1])
        if size >= limit or wire >= cap:
            return b"".join(chunks), True  # the rest is never downloaded
    return b"".join(chunks), False


def _grown(allowed: Callable[[int], int], limit: int, wanted: int) -> int:
    """How far a body may go once `wanted` bytes are asked for: the room is asked again
    while it grows and falls short (each answer past the last, so this ends)."""
    while limit < wanted:
        grown = allowed(wanted)
        if grown <= limit:
            break
        limit = grown
    return limit
