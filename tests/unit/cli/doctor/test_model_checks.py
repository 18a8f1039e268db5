"""`cli.doctor.model_checks`, in process: which models are probed, the served-name check,
and a server that is down.

Whole probes against the fake OpenAI, Anthropic and Ollama servers are in
tests/integration/test_doctor*.py; the probe's reading of replies in test_probe.py.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from aiohttp import web

from deep_research.cli.doctor import model_checks as mc
from deep_research.cli.doctor.model_checks import MAX_LISTED, ModelTarget
from deep_research.config.settings import load_context
from tests.support.fakes.http_server import BackgroundServer, closed_port

LOCAL = ModelTarget("local:m", ("clarifier", "researcher"))
CLOUD = ModelTarget("openai:gpt", ("orchestrator",))


def test_roles_sharing_a_spec_are_one_target_in_role_order() -> None:
    context = load_context({})
    shared = load_context({"orchestrator_model": "local:big"})
    assert [t.roles for t in mc.model_targets(context)] == [mc.ROLES]
    targets = mc.model_targets(shared)
    assert [t.spec for t in targets] == [context.clarifier_model, "local:big"]
    assert targets[1].roles == ("orchestrator",) and len(targets[0].roles) == len(mc.ROLES) - 1
    assert LOCAL.label("tool calls") == "tool calls (clarifier, researcher)"


def test_a_served_name_passes_and_a_missing_one_lists_a_few_served() -> None:
    assert mc._name_check(LOCAL, "m", ["m"]).status == "ok"
    served = [f"model-{n}" for n in range(MAX_LISTED + 2)]
    check = mc._name_check(LOCAL, "m", served)
    assert check.status == "warn" and check.detail.endswith(f"model-{MAX_LISTED - 1}, …")
    assert "LLM_MODEL" in check.fix and "LLM_MODEL" not in mc._name_check(CLOUD, "m", []).fix
    assert mc._name_check(CLOUD, "m", []).detail.endswith("served models: none")


@pytest.mark.parametrize(
    ("platform", "server", "absent"),
    [("linux", "llama-server", "mlx_lm.server"), ("darwin", "mlx_lm.server", "llama-server")],
)
async def test_a_local_server_that_is_down_says_how_to_start_one_on_its_port(
    platform: str, server: str, absent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    port = closed_port()
    base = f"http://127.0.0.1:{port}/v1"
    check, served, kind = await mc._served_models(LOCAL, base, "", 2.0)
    assert (check.status, served, kind) == ("fail", None, None)
    assert f"`{server} " in check.fix and f"--port {port}`" in check.fix, check.fix
    assert absent not in check.fix and "8080" not in check.fix
    assert check.detail.startswith("unreachable: http://127.0.0.1:")
    cloud, _, _ = await mc._served_models(CLOUD, base, "", 2.0)
    assert "OPENAI_BASE_URL" in cloud.fix


def listing_server(version: Any) -> BackgroundServer:
    """A server whose model list has no sign of its own (Ollama's `owned_by` is a namespace)
    and whose `/api/version` is `version`: a handler, or None for no such route."""

    async def models(request: web.Request) -> web.Response:
        card = {"id": "m", "object": "model", "owned_by": "library"}
        return web.json_response({"object": "list", "data": [card]})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    if version is not None:
        app.router.add_get("/api/version", version)
    return BackgroundServer(app)


async def test_ollama_is_told_by_its_version_call_and_a_hung_one_blames_nobody() -> None:
    async def ollama(request: web.Request) -> web.Response:
        return web.json_response({"version": "0.12.3"})

    async def hangs(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.json_response({"version": "late"})

    async def stranger(request: web.Request) -> web.Response:
        return web.json_response({"version": 3})

    for version, kind in [(ollama, "Ollama"), (hangs, None), (stranger, None), (None, None)]:
        with listing_server(version) as server:
            check, served, found = await mc._served_models(LOCAL, server.url + "/v1", "", 0.5)
        assert (check.status, served, found) == ("ok", ["m"], kind), version
        assert check.detail.endswith(" answers, serving 1 model")
        assert ("(Ollama)" in check.detail) == (kind == "Ollama")
