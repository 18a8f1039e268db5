"""Which OpenAI-compatible server answers `LLM_BASE_URL`, told from what it says, and the fix
hints that fit that server (a flag one server has is no help on another).

Each sign is the server's own, read in its source:
- llama.cpp's llama-server: `owned_by: "llamacpp"` in `/v1/models` and a `Server: llama.cpp`
  header (tools/server/server-context.cpp, server-http.cpp);
- llama-cpp-python (`python -m llama_cpp.server`): `owned_by: "me"` (llama_cpp/server/app.py);
- LM Studio: `owned_by: "organization_owner"`;
- vLLM: `owned_by: "vllm"` (its OpenAI protocol's model card);
- mlx_lm.server: model cards with no `owned_by` at all, from Python's `http.server`
  (`Server: BaseHTTP/…`);
- Ollama: its `owned_by` is the model's namespace (`library`, anyone's), so it is asked
  `GET /api/version` instead, which only Ollama answers with `{"version": …}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import httpx

Kind = Literal["llama.cpp", "llama-cpp-python", "Ollama", "LM Studio", "mlx_lm.server", "vLLM"]

OWNERS: dict[str, Kind] = {
    "llamacpp": "llama.cpp",
    "me": "llama-cpp-python",
    "organization_owner": "LM Studio",
    "vllm": "vLLM",
}
NAMES: dict[Kind, str] = {
    "llama.cpp": "llama.cpp's llama-server",
    "llama-cpp-python": "llama-cpp-python's server",
    "Ollama": "Ollama",
    "LM Studio": "LM Studio",
    "mlx_lm.server": "mlx_lm.server",
    "vLLM": "vLLM",
}
# What to change when the model answers the tool probe in text, per server.
TOOL_HINTS: dict[Kind | None, str] = {
    "llama.cpp": "start llama-server with --jinja (older builds need it) and a model whose "
    "chat template handles tools, or give one with --chat-template-file",
    # llama_chat_format.chatml_function_calling: no `tool_choice` in the request, no tools.
    "llama-cpp-python": "llama-cpp-python's server has no --jinja, and its --chat_format "
    "chatml-function-calling offers tools only to a request that sends tool_choice: serve a "
    "model whose GGUF chat template handles tools, or use llama.cpp's llama-server --jinja",
    "Ollama": "use a model Ollama lists with the tools capability (`ollama show MODEL`), "
    "e.g. qwen3",
    "LM Studio": "load a model LM Studio marks as tool-capable (Tool Use), e.g. Qwen3",
    "mlx_lm.server": "use a model whose chat template handles tools, e.g. "
    "mlx-community/Qwen3-8B-4bit",
    "vLLM": "start vLLM with --enable-auto-tool-choice and the model's --tool-call-parser "
    "(e.g. hermes for Qwen)",
    None: "use a model with tool calling (e.g. Qwen3) on a server that offers it the tools "
    "(llama.cpp: --jinja)",
}
# What to change when the server refuses the second call of a tool exchange, per server.
EXCHANGE_HINTS: dict[Kind | None, str] = {
    "llama-cpp-python": "llama-cpp-python refuses some tool exchanges (an assistant message "
    "whose content is null; HTTP 500 from its function-calling format): try the model's own "
    "GGUF chat template (no --chat_format), or llama.cpp's llama-server",
    "llama.cpp": "check llama-server's log; a chat template that cannot render a tool "
    "result fails every run's second call (--chat-template-file with one that can)",
    None: "check the server log: a run's second call sends the model's tool call and its "
    "result back, and this server refuses that",
}


def from_listing(headers: Mapping[str, str], listing: Any) -> Kind | None:
    """The server that sent this `/v1/models` answer, when its own signs say so."""
    server = str(headers.get("server", "")).lower()
    data = listing.get("data") if isinstance(listing, dict) else None
    cards = [card for card in data if isinstance(card, dict)] if isinstance(data, list) else []
    owners = {card.get("owned_by") for card in cards}
    if server.startswith("llama.cpp"):
        return "llama.cpp"
    for owner, kind in OWNERS.items():
        if owner in owners:
            return kind
    if server.startswith("basehttp/") and all("owned_by" not in card for card in cards):
        return "mlx_lm.server"
    return None


async def is_ollama(client: httpx.AsyncClient, base: str) -> bool:
    """Whether the server at `base` (an `/v1` API root) answers Ollama's own version call."""
    root = base.rstrip("/").removesuffix("/v1")
    try:
        response = await client.get(root + "/api/version")
        said = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return False
    return isinstance(said, dict) and isinstance(said.get("version"), str)


def tool_hint(kind: Kind | None) -> str:
    return TOOL_HINTS[kind]


def exchange_hint(kind: Kind | None) -> str:
    return EXCHANGE_HINTS.get(kind, EXCHANGE_HINTS[None])
