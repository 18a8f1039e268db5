"""The scripted model server wearing another server's face: its `/v1/models` answer and
headers as llama.cpp, llama-cpp-python, LM Studio, vLLM, mlx_lm.server or Ollama send them
(each shape read in that server's source; see `deep_research/cli/doctor/server_kind.py`)."""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web

from .openai_server import Brain, ScriptedOpenAIServer

Face = Literal["llama.cpp", "llama-cpp-python", "LM Studio", "vLLM", "mlx_lm.server", "Ollama"]

# (the `server` header, the model card's fields besides `id`)
FACES: dict[Face, tuple[str | None, dict[str, Any]]] = {
    "llama.cpp": ("llama.cpp", {"object": "model", "owned_by": "llamacpp", "meta": {}}),
    "llama-cpp-python": ("uvicorn", {"object": "model", "owned_by": "me", "permissions": []}),
    "LM Studio": (None, {"object": "model", "owned_by": "organization_owner"}),
    "vLLM": ("uvicorn", {"object": "model", "owned_by": "vllm", "root": "test-model"}),
    "mlx_lm.server": ("BaseHTTP/0.6 Python/3.12.1", {"object": "model", "created": 0}),
    "Ollama": (None, {"object": "model", "created": 0, "owned_by": "library"}),
}


class FacedServer(ScriptedOpenAIServer):
    """`ScriptedOpenAIServer` answering its model list as `face` does."""

    def __init__(self, brain: Brain, face: Face) -> None:
        self.face = face
        super().__init__(brain)
        if face == "Ollama":
            self._app.router.add_get("/api/version", self._version)

    async def _models(self, request: web.Request) -> web.Response:
        server, card = FACES[self.face]
        headers = {"Server": server} if server else {}
        body = {"object": "list", "data": [{"id": "test-model", **card}]}
        return web.json_response(body, headers=headers)

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": "0.12.3"})
