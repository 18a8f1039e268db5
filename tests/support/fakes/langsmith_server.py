"""A local LangSmith receiver for ``LANGSMITH_ENDPOINT``: records every request verbatim.

``GET /info`` turns off multipart ingestion, so the real ``langsmith`` client sends runs
as JSON to ``POST /runs/batch`` (``{"post": [...], "patch": [...]}``), which ``runs``
merges by run id. Every other request is recorded too, so a test can check that nothing
it was sent (URL, headers, body) carries a secret. ``POST /sessions`` (and ``PATCH``) answers
with a project, so ``aevaluate`` can open its experiment here.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .http_server import BackgroundServer

INFO = {
    "version": "0.0-test",
    "instance_flags": {},
    "batch_ingest_config": {
        "use_multipart_endpoint": False,
        "size_limit": 100,
        "size_limit_bytes": 20_000_000,
        "scale_up_nthreads_limit": 1,
        "scale_up_qsize_trigger": 1000,
        "scale_down_nempty_trigger": 4,
    },
}


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class FakeLangSmithServer(BackgroundServer):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._received: list[Received] = []
        app = web.Application(client_max_size=100 * 1024 * 1024)
        app.router.add_get("/info", self._info)
        app.router.add_post("/sessions", self._session)
        app.router.add_patch("/sessions/{session_id}", self._session)
        app.router.add_route("*", "/{tail:.*}", self._record)
        super().__init__(app)

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return list(self._received)

    def runs(self) -> dict[str, dict[str, Any]]:
        """Every run posted via /runs/batch or /runs, with later patches merged in."""
        merged: dict[str, dict[str, Any]] = {}
        for request in self.received:
            if request.method == "POST" and request.path == "/runs/batch":
                batch = json.loads(request.body)
                for run in [*batch.get("post", []), *batch.get("patch", [])]:
                    merged.setdefault(run["id"], {}).update(run)
            elif request.path.startswith("/runs") and request.body.startswith(b"{"):
                run = json.loads(request.body)
                run_id = run.get("id") or request.path.rsplit("/", 1)[-1]
                merged.setdefault(run_id, {}).update(run)
        return merged

    async def _info(self, request: web.Request) -> web.Response:
        await self._store(request)
        return web.json_response(INFO)

    async def _session(self, request: web.Request) -> web.Response:
        """A created project (an experiment, for `aevaluate`), echoing what was asked for."""
        await self._store(request)
        asked = json.loads(self.received[-1].body or b"{}")
        session = {
            "id": request.match_info.get("session_id") or str(uuid.uuid4()),
            "tenant_id": str(uuid.uuid4()),
            "start_time": asked.get("start_time") or "2026-01-01T00:00:00",
            "name": asked.get("name", "project"),
            "reference_dataset_id": asked.get("reference_dataset_id"),
            "extra": asked.get("extra"),
        }
        return web.json_response(session)

    async def _record(self, request: web.Request) -> web.Response:
        await self._store(request)
        return web.json_response({})

    async def _store(self, request: web.Request) -> None:
        body = await request.read()
        with self._lock:
            self._received.append(
                Received(request.method, request.path_qs, dict(request.headers), body)
            )
