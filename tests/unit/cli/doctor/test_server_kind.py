"""`cli.doctor.server_kind`: each server told from its own `/v1/models` answer and headers
(the shapes read in each server's source), and nothing guessed from a stranger's."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.cli.doctor import server_kind as sk


def cards(*owners: str | None) -> dict[str, Any]:
    made = [{"id": f"m{n}", "object": "model"} for n, _ in enumerate(owners)]
    for card, owner in zip(made, owners, strict=True):
        if owner is not None:
            card["owned_by"] = owner
    return {"object": "list", "data": made}


@pytest.mark.parametrize(
    ("headers", "listing", "kind"),
    [
        ({"server": "llama.cpp"}, cards("llamacpp"), "llama.cpp"),
        ({}, cards("llamacpp"), "llama.cpp"),  # behind a proxy that drops the header
        ({"server": "llama.cpp"}, None, "llama.cpp"),  # header alone
        ({"server": "uvicorn"}, cards("me"), "llama-cpp-python"),
        ({}, cards("organization_owner", "organization_owner"), "LM Studio"),
        ({"server": "uvicorn"}, cards("vllm"), "vLLM"),
        ({"server": "BaseHTTP/0.6 Python/3.12.1"}, cards(None), "mlx_lm.server"),
        ({"server": "BaseHTTP/0.6 Python/3.12.1"}, cards(), "mlx_lm.server"),
        ({"server": "BaseHTTP/0.6 Python/3.12.1"}, cards("someone"), None),
        ({}, cards("library"), None),  # Ollama's namespace: asked /api/version instead
        ({"server": "uvicorn"}, cards("test"), None),
        ({}, {"data": "not a list"}, None),
        ({}, ["no", "object"], None),
        ({}, cards(*(["x"] * 1000)), None),
    ],
)
def test_a_server_is_named_only_by_its_own_signs(
    headers: dict[str, str], listing: Any, kind: sk.Kind | None
) -> None:
    assert sk.from_listing(headers, listing) == kind


def test_every_server_has_a_name_and_both_hints() -> None:
    for kind in sk.NAMES:
        assert sk.tool_hint(kind) and sk.exchange_hint(kind)
    assert sk.tool_hint(None).startswith("use a model with tool calling")
    assert "no --jinja" in sk.tool_hint("llama-cpp-python")
    assert "--jinja" not in sk.tool_hint("Ollama") and "--jinja" not in sk.tool_hint("vLLM")
