"""What the doctor's tests share: the environment pointed at a scripted model server, and a
model that calls the probe's tool."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.fakes.openai_server import Reply, ToolCall, tools_offered

KEY = "sk-local-SECRET-0123456789abcdef"
PING = ToolCall("ping", {"word": "ready"})


def point_at(monkeypatch: pytest.MonkeyPatch, base_url: str, model: str = "test-model") -> None:
    monkeypatch.setenv("LLM_BASE_URL", base_url)
    monkeypatch.setenv("LLM_MODEL", model)
    monkeypatch.setenv("LLM_API_KEY", KEY)
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")


def native(body: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[PING]) if "ping" in tools_offered(body) else Reply("no tool?")
