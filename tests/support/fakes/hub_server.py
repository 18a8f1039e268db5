"""A stand-in for the Hugging Face Hub's file endpoint, for `HF_ENDPOINT` (tests only).

It serves a model folder as the hub serves a repository's files to `hf_hub_download`:

- `HEAD|GET /{repo}/resolve/{revision}/{name}`: a small file with its git blob SHA-1 as
  `ETag`; a large (LFS) file as a 302 to `/lfs/{sha256}` with `X-Linked-Etag` (its SHA-256)
  and `X-Linked-Size`; both with `X-Repo-Commit`.
- `GET /lfs/{sha256}` on a second server (the hub's CDN is another origin, and only there
  does the client stop following redirects): the bytes, honouring `Range` (a resume).

What can go wrong, per file name: `short` sends fewer bytes than announced (with a matching
Content-Length: the client's size check sees it), `cut_once` drops the connection half-way
through the first GET (the client resumes with `Range`), `corrupt` sends other bytes of the
same size (only a content check sees it). Every request is logged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from aiohttp import web

from tests.support.fakes.http_server import BackgroundServer

LFS_FROM = 1_000_000  # bytes: larger files are LFS files on the hub


@dataclass
class Faults:
    short: set[str] = field(default_factory=set)
    cut_once: set[str] = field(default_factory=set)
    corrupt: set[str] = field(default_factory=set)


class FakeHub(BackgroundServer):
    """Serves `folder`'s files as `repo_id` at `revision` (any other revision: 404)."""

    def __init__(self, folder: Path, repo_id: str, revision: str, names: list[str]) -> None:
        self.repo_id, self.revision = repo_id, revision
        self.files = {name: (folder / name).read_bytes() for name in names}
        self.faults = Faults()
        self.log: list[tuple[str, str, str]] = []  # method, path, Range
        self.authorization: list[str] = []  # every Authorization header the hub was sent
        self._cut: set[str] = set()
        app = web.Application()
        app.router.add_route("*", "/{repo:.+}/resolve/{revision}/{name}", self._resolve)
        cdn = web.Application()
        cdn.router.add_get("/lfs/{sha}", self._lfs)
        self.cdn = BackgroundServer(cdn)
        super().__init__(app)

    def start(self) -> Self:
        self.cdn.start()
        return super().start()

    def stop(self) -> None:
        super().stop()
        self.cdn.stop()

    def requests(self) -> list[tuple[str, str, str]]:
        return self._snapshot(self.log)

    def _note(self, request: web.Request) -> None:
        with self._lock:
            self.log.append((request.method, request.path, request.headers.get("Range", "")))
            if "Authorization" in request.headers:
                self.authorization.append(request.headers["Authorization"])

    def _body(self, name: str) -> bytes:
        data = self.files[name]
        if name in self.faults.corrupt:
            return bytes([data[0] ^ 0xFF]) + data[1:]
        if name in self.faults.short:
            return data[: len(data) // 2]
        return data

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        self._note(request)
        name = request.match_info["name"]
        repo = request.match_info["repo"]
        if repo != self.repo_id or request.match_info["revision"] != self.revision:
            return web.Response(status=404, headers={"X-Error-Code": "RevisionNotFound"})
        if name not in self.files:
            return web.Response(status=404, headers={"X-Error-Code": "EntryNotFound"})
        data = self.files[name]
        headers = {"X-Repo-Commit": self.revision}
        if len(data) >= LFS_FROM:
            sha = hashlib.sha256(data).hexdigest()
            headers |= {
                "Location": f"{self.cdn.url}/lfs/{sha}?name={name}",
                "X-Linked-Etag": f'"{sha}"',
                "X-Linked-Size": str(len(data)),
                "ETag": f'"{_git_sha1(data)}"',
            }
            return web.Response(status=302, headers=headers)
        headers["ETag"] = f'"{_git_sha1(data)}"'
        body = self._body(name)
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(data))
            return web.Response(status=200, headers=headers)
        return web.Response(status=200, body=body, headers=headers)

    async def _lfs(self, request: web.Request) -> web.StreamResponse:
        self._note(request)
        name = request.query.get("name", "")
        if name not in self.files:
            return web.Response(status=404)
        body = self._body(name)
        start = 0
        if (wanted := request.headers.get("Range", "")).startswith("bytes="):
            start = int(wanted.removeprefix("bytes=").split("-")[0])
        response = web.StreamResponse(status=206 if start else 200)
        response.content_length = len(body) - start
        if start:
            response.headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
        await response.prepare(request)
        if request.method == "HEAD":
            return response
        rest = body[start:]
        if name in self.faults.cut_once and name not in self._cut:
            self._cut.add(name)
            await response.write(rest[: len(rest) // 2])
            assert request.transport is not None
            request.transport.close()  # the connection drops mid-body
            return response
        await response.write(rest)
        await response.write_eof()
        return response


def _git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
