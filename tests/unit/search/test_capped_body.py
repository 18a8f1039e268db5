"""capped_body: a body read within a byte cap, counted on the wire and after decoding."""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import AsyncIterator

import httpx
import pytest

from deep_research.search.capped_body import (
    ACCEPT_ENCODING,
    UnreadableBody,
    content_coding,
    read_capped,
)


def _response(body: bytes | list[bytes], **headers: str) -> httpx.Response:
    chunks = body if isinstance(body, list) else [body]

    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return httpx.Response(200, headers=headers, content=stream())


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


def test_only_gzip_and_deflate_are_offered() -> None:
    assert {c.strip() for c in ACCEPT_ENCODING.split(",")} == {"gzip", "deflate"}


@pytest.mark.parametrize(
    ("header", "coding"),
    [
        (None, "identity"),
        ("identity", "identity"),
        ("GZIP", "gzip"),
        ("x-gzip", "gzip"),
        ("x-deflate", "deflate"),
        ("identity, gzip", "gzip"),
        (" deflate ", "deflate"),
    ],
)
def test_content_coding_names(header: str | None, coding: str) -> None:
    headers = httpx.Headers({"content-encoding": header} if header is not None else {})
    assert content_coding(headers) == coding


@pytest.mark.parametrize("header", ["gzip, gzip", "gzip, deflate", "br", "zstd", "compress"])
def test_stacked_or_unknown_encodings_are_refused(header: str) -> None:
    with pytest.raises(UnreadableBody):
        content_coding(httpx.Headers({"content-encoding": header}))


async def test_identity_body_under_the_cap_is_whole() -> None:
    body = b"<p>hello</p>" * 10
    assert await read_capped(_response([body[:50], body[50:]]), cap=1000) == (body, False)


async def test_identity_body_is_cut_at_the_cap() -> None:
    body = os.urandom(5000)
    data, cut = await read_capped(_response([body[:3000], body[3000:]]), cap=1000)
    assert (data, cut) == (body[:1000], True)


@pytest.mark.parametrize("coding", ["gzip", "x-gzip"])
async def test_gzip_body_is_decoded(coding: str) -> None:
    body = b"ordinary page text " * 100
    data, cut = await read_capped(
        _response(gzip.compress(body), **{"content-encoding": coding}), 10_000
    )
    assert (data, cut) == (body, False)


@pytest.mark.parametrize("packed", [zlib.compress, _raw_deflate], ids=["zlib", "raw"])
async def test_deflate_body_is_decoded_zlib_wrapped_or_raw(packed) -> None:  # type: ignore[no-untyped-def]
    body = b"deflated page " * 100
    wire = packed(body)
    # One byte at a time: the zlib header is sniffed across chunks.
    chunks = [wire[i : i + 1] for i in range(len(wire))]
    data, cut = await read_capped(_response(chunks, **{"content-encoding": "deflate"}), 10_000)
    assert (data, cut) == (body, False)


async def test_a_gzip_bomb_decodes_no_more_than_the_cap() -> None:
    bomb = gzip.compress(b"\0" * (50 << 20))  # 50 MiB of zeros, about 50 KiB on the wire
    data, cut = await read_capped(_response(bomb, **{"content-encoding": "gzip"}), cap=4096)
    assert cut and data == b"\0" * 4096


async def test_the_wire_counts_against_the_cap_too() -> None:
    # Incompressible bytes gzip to more than they decode to; the download stops at the cap.
    wire = gzip.compress(os.urandom(20_000))
    pulled: list[int] = []

    async def stream() -> AsyncIterator[bytes]:
        for start in range(0, len(wire), 1000):
            pulled.append(start)
            yield wire[start : start + 1000]

    response = httpx.Response(200, headers={"content-encoding": "gzip"}, content=stream())
    data, cut = await read_capped(response, cap=5000)
    assert cut and len(data) <= 5000
    assert len(pulled) == 5  # 5 chunks of 1000 bytes, then it stopped reading


async def test_corrupt_gzip_is_unreadable_with_a_fixed_message() -> None:
    body = b"\x1f\x8b\x08\x00" + b"<script>alert(1)</script>" * 4
    with pytest.raises(UnreadableBody) as caught:
        await read_capped(_response(body, **{"content-encoding": "gzip"}), 10_000)
    assert "script" not in str(caught.value)


async def test_bytes_after_the_end_of_the_stream_are_ignored() -> None:
    body = gzip.compress(b"the page") + b"trailing garbage"
    data, cut = await read_capped(_response(body, **{"content-encoding": "gzip"}), 10_000)
    assert (data, cut) == (b"the page", False)


async def test_stacked_encoding_is_refused_before_reading() -> None:
    response = _response(gzip.compress(gzip.compress(b"x")), **{"content-encoding": "gzip, gzip"})
    with pytest.raises(UnreadableBody):
        await read_capped(response, 10_000)


class _Steps:
    """A room that grows by `step` bytes each time it is asked, up to `most`."""

    def __init__(self, free: int, step: int, most: int) -> None:
        self.limit, self.step, self.most = free, step, most
        self.asked: list[int] = []

    def __call__(self, wanted: int) -> int:
        self.asked.append(wanted)
        if wanted > self.limit:
            self.limit = min(self.most, self.limit + self.step)
        return self.limit


@pytest.mark.parametrize("coding", ["identity", "gzip", "deflate"])
async def test_a_room_that_grows_with_the_body_reads_it_whole(coding: str) -> None:
    """The room is asked for more as the body grows: a chunk that decodes to more than the
    room holds waits for it to grow rather than losing its input."""
    body = os.urandom(3_000) + b"compressible text " * 2_000  # 39 KB
    packed = {"identity": body, "gzip": gzip.compress(body), "deflate": zlib.compress(body)}
    wire = packed[coding]
    chunks = [wire[i : i + 4_096] for i in range(0, len(wire), 4_096)]
    headers = {} if coding == "identity" else {"content-encoding": coding}
    room = _Steps(1_000, 700, 10**6)  # less than a chunk decodes to, each time
    data, cut = await read_capped(_response(chunks, **headers), 10**6, room)
    assert (data, cut) == (body, False)
    assert room.asked[0] == 0 and max(room.asked) <= len(body) + 4_096 + 1


@pytest.mark.parametrize("coding", ["identity", "gzip"])
async def test_a_room_that_stops_growing_cuts_the_body_there(coding: str) -> None:
    body = b"text that goes on " * 1_000
    wire = body if coding == "identity" else gzip.compress(body)
    headers = {} if coding == "identity" else {"content-encoding": coding}
    chunks = [wire[i : i + 512] for i in range(0, len(wire), 512)]
    data, cut = await read_capped(_response(chunks, **headers), 10**6, _Steps(100, 400, 2_500))
    assert (data, cut) == (body[:2_500], True)


@pytest.mark.parametrize("size", [100, 101, 150])
async def test_a_body_that_ends_where_the_room_grew_to_is_whole(size: int) -> None:
    """The room is asked for one byte past a chunk: a body that ends at what the room gave
    is read whole, not cut there (a room that gives exactly what is asked)."""
    body = os.urandom(size)
    data, cut = await read_capped(_response(body), 10**6, lambda wanted: max(100, wanted))
    assert (data, cut) == (body, False)


async def test_input_that_comes_while_the_room_holds_none_waits_for_it() -> None:
    body = b"compressible " * 3_000
    wire = gzip.compress(body)
    answers = iter([0])  # none at first, then all it asks for

    def room(wanted: int) -> int:
        return next(answers, wanted)

    chunks = [wire[i : i + 100] for i in range(0, len(wire), 100)]
    data, cut = await read_capped(_response(chunks, **{"content-encoding": "gzip"}), 10**6, room)
    assert (data, cut) == (body, False)
