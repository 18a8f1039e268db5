"""Documents read in a child process bounded in time and memory, one child per batch.

The readers bound what is known to be costly (bytes, pages, page content, a DOCX's
unpacked size and its table cells); this holds what nobody foresaw. The child runs
under an address-space limit (`MAX_READER_MEMORY`: a parser that asks for more gets a
MemoryError, or dies) and is killed when a file takes it over `MAX_READ_SECONDS`. The
file is then reported as unreadable with the reason, a new child reads the next one,
and the batch goes on. One child reads a whole batch: a file costs a few milliseconds
more than in process, and starting a child (its imports) about a second
(`python -m benchmarks.library_reading`).

Parent and child speak in frames (an 8-byte length, then the bytes) over the child's
stdin and stdout: a request is the path as JSON and the file's bytes, a reply is JSON.
No pickle: nothing the child sends is run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import IO, Any

from deep_research.library.readers import MAX_TEXT_CHARS, Document, Section, Unreadable

MAX_READ_SECONDS = 120  # per file; a 2,000-page PDF at the content limit takes under a minute
START_SECONDS = 60  # a child's imports, not counted in a file's time
MAX_READER_MEMORY = 1_500_000_000  # bytes of address space, the imports (~100 MB) included
MAX_REPLY_BYTES = 8 * MAX_TEXT_CHARS + 1_000_000  # the text as JSON, escapes included
MEMORY_NOTE = f"needed over {MAX_READER_MEMORY / 1e9:g} GB of memory to read; skipped"
# `-P`: the working directory is not on the child's path, so a `pypdf.py` among the files
# being added is a file to read, never a module to run.
COMMAND = [sys.executable, "-P", "-m", "deep_research.library.worker"]
_FRAME = 8  # bytes of a frame's length


class Reader:
    """Reads documents in one child process, started on first use, replaced after a kill."""

    def __init__(self, command: list[str] | None = None) -> None:
        self.command = command or COMMAND
        self._child: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> Reader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def read(self, path: Path, raw: bytes) -> Document:
        """The document in `raw` (the bytes of `path`); raises Unreadable with the reason."""
        child = self._child or await self._start()
        try:
            reply = await asyncio.wait_for(_exchange(child, path, raw), MAX_READ_SECONDS)
        except TimeoutError:
            await self._stop()
            raise Unreadable(f"took over {MAX_READ_SECONDS} s to read; skipped") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            code = await self._stop()
            raise Unreadable(_died(code)) from None
        except ValueError:  # what follows in the pipe cannot be trusted either
            await self._stop()
            raise Unreadable("the reader's reply was malformed; skipped") from None
        if reply.get("stop"):  # it asked for more memory than it has: a fresh one next
            await self._stop()
        return _document(reply)

    async def close(self) -> None:
        """Let the child end at the end of its input; kill it if it does not."""
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            child.stdin.close()
        try:
            await asyncio.wait_for(child.wait(), 5)
        except TimeoutError:
            child.kill()
            await child.wait()

    async def _start(self) -> asyncio.subprocess.Process:
        package_root = str(Path(__file__).resolve().parents[2])
        paths = [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
        self._child = child = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,  # parsers' warnings may quote the file
            env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        )
        assert child.stdout is not None
        try:  # it says when its imports are done: they are not a file's time
            await asyncio.wait_for(child.stdout.readexactly(_FRAME), START_SECONDS)
        except (TimeoutError, asyncio.IncompleteReadError):
            code = await self._stop()
            raise Unreadable(f"the reader did not start (exit {code})") from None
        return child

    async def _stop(self) -> int | None:
        child, self._child = self._child, None
        if child is None:
            return None
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
        return await child.wait()


async def _exchange(child: asyncio.subprocess.Process, path: Path, raw: bytes) -> dict[str, Any]:
    assert child.stdin is not None and child.stdout is not None
    header = json.dumps({"path": str(path)}).encode()
    for data in (header, raw):
        child.stdin.write(len(data).to_bytes(_FRAME, "big") + data)
    await child.stdin.drain()
    size = int.from_bytes(await child.stdout.readexactly(_FRAME), "big")
    if size > MAX_REPLY_BYTES:
        raise ValueError("reply too large")
    reply = json.loads(await child.stdout.readexactly(size))
    if not isinstance(reply, dict):
        raise ValueError("reply is not an object")
    return reply


def _died(code: int | None) -> str:
    if code is not None and code < 0:  # killed by a signal: the C allocator, or a crash
        return f"the reader crashed (signal {-code}) or ran out of memory; skipped"
    return f"the reader stopped (exit {code}); skipped"


def _document(reply: dict[str, Any]) -> Document:
    if "unreadable" in reply:
        raise Unreadable(str(reply["unreadable"])[:200])
    try:
        fields = reply["document"]
        sections = [Section(str(text), int(page)) for text, page in fields["sections"]]
        return Document(str(fields["title"]), str(fields["kind"]), sections, str(fields["cut"]))
    except (KeyError, TypeError, ValueError):
        raise Unreadable("the reader's reply was malformed; skipped") from None


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash writes no 1.5 GB core file
    with contextlib.suppress(ValueError, OSError):  # macOS refuses RLIMIT_AS
        resource.setrlimit(resource.RLIMIT_AS, (MAX_READER_MEMORY, MAX_READER_MEMORY))


def _receive(stream: IO[bytes]) -> bytes | None:
    head = stream.read(_FRAME)
    if len(head) < _FRAME:
        return None
    size = int.from_bytes(head, "big")
    data = stream.read(size)
    return data if len(data) == size else None


def _send(stream: IO[bytes], reply: dict[str, Any]) -> None:
    data = json.dumps(reply).encode()  # ASCII: a lone surrogate a parser made stays legal
    stream.write(len(data).to_bytes(_FRAME, "big") + data)
    stream.flush()


def main() -> None:
    """The child: read requests from stdin until it closes, one reply each on stdout."""
    import signal

    _limit_memory()
    from deep_research.library.readers import read_document

    requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a parser that prints cannot break a frame
    replies.write(bytes(_FRAME))  # ready
    replies.flush()
    while (header := _receive(requests)) is not None and (raw := _receive(requests)) is not None:
        signal.alarm(MAX_READ_SECONDS + 30)  # ends the child if the parent is gone
        reply: dict[str, Any]
        try:
            document = read_document(Path(json.loads(header)["path"]), raw)
            sections = [[section.text, section.page] for section in document.sections]
            fields = {"title": document.title, "kind": document.kind, "cut": document.cut}
            reply = {"document": {**fields, "sections": sections}}
        except Unreadable as error:
            reply = {"unreadable": str(error)}
        except MemoryError:
            reply = {"unreadable": MEMORY_NOTE, "stop": True}
        signal.alarm(0)
        _send(replies, reply)
        if reply.get("stop"):
            return


if __name__ == "__main__":
    main()
