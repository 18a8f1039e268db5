"""`deep-research doctor`'s model checks: each endpoint answers, serves the model, calls a tool.

Roles that name the same `provider:model` share one server and one model, so it is probed
once and the lines name every role that uses it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

import httpx
import openai
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from deep_research.cli.doctor.checks import Check
from deep_research.config.endpoints import read_endpoints
from deep_research.config.names import ConfigError
from deep_research.config.settings import ROLES as context_roles
from deep_research.config.settings import Context
from deep_research.llm import init_chat as provider_models
from deep_research.llm import toolcalls
from deep_research.llm.chat_models import Role, chat_model, public_url
from deep_research.llm.errors import UNREACHABLE, local_server_hint
from deep_research.runtime import prompts
from deep_research.text import secrets

# The agent's roles (the evals' judge is a `Role` too, but no `Context` field names it).
ROLES = cast(tuple[Role, ...], context_roles)
OPENAI_URL = "https://api.openai.com/v1"
MAX_LISTED = 8  # served model names shown when the configured one is not among them


class Ping(BaseModel):
    """Answer the connectivity check."""

    model_config = ConfigDict(title="ping")
    word: str = Field(description="The word to send back")


@dataclass(frozen=True)
class ModelTarget:
    """One `provider:model` and every role configured to use it."""

    spec: str
    roles: tuple[Role, ...]

    def label(self, what: str) -> str:
        return f"{what} ({', '.join(self.roles)})"


def model_targets(context: Context) -> list[ModelTarget]:
    """The run's models, one per distinct spec, in role order."""
    roles: dict[str, list[Role]] = {}
    for role in ROLES:
        roles.setdefault(getattr(context, f"{role}_model"), []).append(role)
    return [ModelTarget(spec, tuple(names)) for spec, names in roles.items()]


async def check_model(context: Context, target: ModelTarget, timeout: float) -> list[Check]:
    """Reachable, model served, tool-call probe: stops at the first check that fails."""
    # A cloud role without its key never gets here: `Context` refuses it (exit 2).
    provider, _, name = target.spec.partition(":")
    try:
        model = chat_model(context, target.roles[0])
    except ConfigError as error:
        return [Check(target.label("endpoint"), "fail", str(error), "fix the model spec")]
    if provider not in ("local", "openai"):
        # No common model list across providers: the probe itself says reachable or not.
        where = public_url(provider_models.base_url(model, provider))
        return [await probe_tool_call(model, target, where, timeout)]
    base = str(getattr(model, "openai_api_base", None) or OPENAI_URL)
    secret = getattr(model, "openai_api_key", None)
    key = secret.get_secret_value() if secret is not None else ""
    reachable, served = await _served_models(target, base, key, timeout)
    checks = [reachable]
    if reachable.status == "fail":
        return checks
    if served is not None:
        checks.append(_name_check(target, name, served))
    checks.append(await probe_tool_call(model, target, public_url(base), timeout))
    return checks


async def _served_models(
    target: ModelTarget, base: str, key: str, timeout: float
) -> tuple[Check, list[str] | None]:
    """`GET /models`: whether the server answers, and the names it serves when it says."""
    where = public_url(base)
    label = target.label("endpoint")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    local = target.spec.startswith("local:")
    try:
        async with asyncio.timeout(timeout), httpx.AsyncClient(timeout=timeout) as client:
            response = await client.get(base.rstrip("/") + "/models", headers=headers)
    except TimeoutError:
        fix = "is the server busy or hung? re-run doctor in a minute, or raise --timeout"
        return Check(label, "fail", f"{where} did not answer within {timeout:g} s", fix), None
    except httpx.HTTPError as error:
        fix = local_server_hint(base) if local else "check the network (and OPENAI_BASE_URL if set)"
        detail = f"unreachable: {where} ({type(error).__name__}: {error})"
        return Check(label, "fail", detail, fix), None
    if response.status_code in (401, 403):
        variable = "LLM_API_KEY" if local else "OPENAI_API_KEY"
        detail = f"{where} refused the key (HTTP {response.status_code})"
        return Check(label, "fail", detail, f"check {variable}"), None
    try:
        response.raise_for_status()
        names = [str(item["id"]) for item in response.json()["data"]]
    except (httpx.HTTPStatusError, ValueError, KeyError, TypeError):
        # Some servers have no model list but chat fine: the probe decides.
        detail = f"{where} answers, but not with a model list (HTTP {response.status_code})"
        fix = "is LLM_BASE_URL the API root, ending in /v1?"
        return Check(label, "warn", detail, fix), None
    listed = f"{len(names)} model{'s' if len(names) != 1 else ''}"
    return Check(label, "ok", f"{where} answers, serving {listed}"), names


def _name_check(target: ModelTarget, name: str, served: list[str]) -> Check:
    label = target.label("model name")
    if name in served:
        return Check(label, "ok", f"{name} is served")
    shown = ", ".join(served[:MAX_LISTED]) + (", …" if len(served) > MAX_LISTED else "")
    # A warning: llama.cpp and LM Studio answer with whatever is loaded; the probe decides.
    return Check(
        label,
        "warn",
        f"{name} is not among the served models: {shown or 'none'}",
        "set LLM_MODEL (or --model local:NAME) to a served name"
        if target.spec.startswith("local:")
        else "check the model name",
    )


async def probe_tool_call(model: Any, target: ModelTarget, where: str, timeout: float) -> Check:
    """A chat request offering one trivial tool, classified by how the model answers; asked
    once more, as a run would go on, when it answers in text or not at all."""
    label = target.label("tool calls")
    request: list[BaseMessage] = [HumanMessage(prompts.render("doctor_probe"))]
    first = await _ask(model, request, label, where, timeout)
    if isinstance(first, Check):
        return first
    check = classify(first, label, target)
    if check.status != "warn":
        return check
    # One text or empty reply to a one-line probe says little: many models that call tools
    # in runs do it. The agent nudges an empty reply once (`llm.models`); a text reply is
    # asked again more firmly. Only a model that misses twice is worth a warning.
    if toolcalls.is_empty(first):
        again = [*request, HumanMessage(prompts.render("empty_reply"))]
    else:
        again = [*request, first, HumanMessage(prompts.render("doctor_probe_again"))]
    second = await _ask(model, again, label, where, timeout)
    # A second ask that fails adds nothing to what the first reply showed.
    return check if isinstance(second, Check) else classify(second, label, target, again=True)


async def _ask(
    model: Any, messages: list[BaseMessage], label: str, where: str, timeout: float
) -> AIMessage | Check:
    """The model's reply to `messages` with the `ping` tool offered, or the failed check."""
    try:
        async with asyncio.timeout(timeout):
            reply = await model.bind_tools([Ping]).ainvoke(messages)
    except TimeoutError:
        return Check(
            label,
            "fail",
            f"no reply within {timeout:g} s, though {where} answers /models: the server may "
            "still be loading the weights (mlx_lm.server loads them on the first request)",
            "re-run `deep-research doctor` in a minute (or raise --timeout)",
        )
    except openai.APIStatusError as error:
        message = error.message.removeprefix(f"Error code: {error.status_code} - ")
        return Check(label, "fail", f"HTTP {error.status_code}: {message}", _status_fix(error))
    except openai.APIError as error:  # connection lost mid-request, bad response
        return Check(label, "fail", f"{type(error).__name__}: {error}", "check the server log")
    except Exception as error:  # other providers' clients raise their own error types
        said = secrets.redact(" ".join(str(error).split()))[:200]
        return Check(label, "fail", f"{where}: {type(error).__name__}: {said}", _other_fix(error))
    if not isinstance(reply, AIMessage):
        raise TypeError(f"expected an AIMessage from the model, got {type(reply).__name__}")
    return reply


def classify(reply: AIMessage, label: str, target: ModelTarget, again: bool = False) -> Check:
    """Native call, call written as text, empty, plain text, or cut off by the token limit;
    `again`: the reply to the second ask, after a first that called no tool."""
    if _cut_off(reply):
        limit = read_endpoints().llm_max_tokens
        return Check(
            label,
            "fail",
            "the reply was cut off at the completion limit (finish_reason=length): a tool call "
            "cut off this way is lost",
            f"raise the server's completion limit: LLM_MAX_TOKENS (now {limit}) and the "
            "server's own cap (llama.cpp: -n)",
        )
    when = " (when asked again, as a run would)" if again else ""
    if reply.tool_calls or reply.invalid_tool_calls:
        return Check(label, "ok", f"native tool calls{when}")
    if toolcalls.settle(reply, [Ping]).tool_calls:
        return Check(label, "ok", f"tool calls written as text (the agent salvages these){when}")
    if toolcalls.is_empty(reply):
        return Check(
            label,
            "warn",
            f"empty reply{', also after the nudge a run sends' if again else ''}: servers send "
            "one when they drop a tool call they could not parse (the agent nudges once, then "
            "gives up)",
            "check the server log (mlx_lm: 'Failed to parse tool call'); raise LLM_MAX_TOKENS",
        )
    text = reply.content if isinstance(reply.content, str) else str(reply.content)
    return Check(
        label,
        "warn",
        # Redacted before it is cut: half a key is no longer recognisable as one.
        f"answered in text without calling the tool: "
        f"{secrets.redact(toolcalls.strip_think(text))[:80]!r}{', twice' if again else ''}",
        "use a model with tool calling (e.g. Qwen3); llama.cpp needs --jinja"
        if target.spec.startswith("local:")
        else "use a model with tool calling",
    )


def _cut_off(reply: AIMessage) -> bool:
    """Whether the reply stopped at the completion limit, in any provider's words."""
    said = reply.response_metadata
    return (
        said.get("finish_reason") == "length"  # OpenAI-compatible
        or said.get("stop_reason") == "max_tokens"  # Anthropic
        or said.get("done_reason") == "length"  # Ollama
    )


def _other_fix(error: Exception) -> str:
    status = getattr(error, "status_code", None)
    if status in (401, 403):
        return "check the provider's key (see docs/configuration.md: model providers)"
    if status == 404:
        return "check the model name"
    if isinstance(error, UNREACHABLE):
        return "is the server running? check its base URL (e.g. OLLAMA_HOST, ANTHROPIC_BASE_URL)"
    return "check the provider's status and the model name"


def _status_fix(error: openai.APIStatusError) -> str:
    if "jinja" in error.message.lower():
        return "start llama-server with --jinja"
    if error.status_code in (401, 403):
        return "check LLM_API_KEY / OPENAI_API_KEY"
    if error.status_code == 404:
        return "the server does not know this model: set LLM_MODEL to a served name"
    return "check the server log"
