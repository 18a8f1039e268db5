"""A local LangSmith receiver for ``LANGSMITH_ENDPOINT``: records every request verbatim.

``GET /info`` turns off multipart ingestion, so the real ``langsmith`` client sends runs
as JSON to ``POST /runs/batch`` (``{"post": [...], "patch": [...]}``), which ``runs``
merges by run id. Every other request is recorded too, so a test can check that nothing
it was sent (URL, headers, body) carries a secret. ``POST /sessions`` (and ``PATCH``)
answers with a project, so ``aevaluate`` can open its experiment here, and datasets and their
examples are kept (``/datasets``, ``/examples/bulk``, ``/examples``) so it can read one.
"""

from __future__ import annotations

import datetime
import json
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
        self._received: list[Received] = []
        self.datasets: dict[str, dict[str, Any]] = {}  # by id
        self.examples: list[dict[str, Any]] = []
        app = web.Application(client_max_size=100 * 1024 * 1024)
        app.router.add_get("/info", self._info)
        app.router.add_post("/sessions", self._session)
        app.router.add_get("/datasets", self._find_datasets)
        app.router.add_get("/datasets/{dataset_id}", self._dataset)
        app.router.add_post("/datasets", self._create_dataset)
        app.router.add_post("/examples/bulk", self._create_examples)
        app.router.add_get("/examples", self._list_examples)
        app.router.add_patch("/sessions/{session_id}", self._session)
        app.router.add_route("*", "/{tail:.*}", self._record)
        super().__init__(app)

    @property
    def received(self) -> list[Received]:
        return self._snapshot(self._received)

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
        asked = json.loads(await self._store(request) or b"{}")
        session = {
            "id": request.match_info.get("session_id") or str(uuid.uuid4()),
            "tenant_id": str(uuid.uuid4()),
            "start_time": asked.get("start_time") or "2026-01-01T00:00:00",
            "name": asked.get("name", "project"),
            "reference_dataset_id": asked.get("reference_dataset_id"),
            "extra": asked.get("extra"),
        }
        return web.json_response(session)

    async def _find_datasets(self, request: web.Request) -> web.Response:
        await self._store(request)
        name = request.query.get("name")
        with self._lock:
            found = [d for d in self.datasets.values() if name in (None, d["name"])]
        return web.json_response(found)

    async def _dataset(self, request: web.Request) -> web.Response:
        await self._store(request)
        with self._lock:
            dataset = self.datasets.get(request.match_info["dataset_id"])
        if dataset is None:
            return web.json_response({"detail": "not found"}, status=404)
        return web.json_response(dataset)

    async def _create_dataset(self, request: web.Request) -> web.Response:
        asked = json.loads(await self._store(request))
        now = datetime.datetime.now(datetime.UTC).isoformat()
        dataset = {**asked, "id": str(uuid.uuid4()), "created_at": now, "modified_at": now}
        with self._lock:
            self.datasets[dataset["id"]] = dataset
        return web.json_response(dataset)

    async def _create_examples(self, request: web.Request) -> web.Response:
        body = await self._store(request)
        now = datetime.datetime.now(datetime.UTC).isoformat()
        created = [
            {**example, "id": example.get("id") or str(uuid.uuid4()), "created_at": now}
            for example in json.loads(body)
        ]
        with self._lock:
            self.examples.extend(created)
        return web.json_response(created)

    async def _list_examples(self, request: web.Request) -> web.Response:
        """One page holds every example; later pages are empty."""
        await self._store(request)
        if int(request.query.get("offset", "0")):
            return web.json_response([])
        dataset = request.query.get("dataset")
        with self._lock:
            found = [e for e in self.examples if dataset in (None, e.get("dataset_id"))]
        return web.json_response(found)

    async def _record(self, request: web.Request) -> web.Response:
        await self._store(request)
        return web.json_response({})

    async def _store(self, request: web.Request) -> bytes:
        body = await request.read()
        with self._lock:
            self._received.append(
                Received(request.method, request.path_qs, dict(request.headers), body)
            )
        return body
