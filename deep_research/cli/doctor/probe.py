"""`deep-research doctor`'s tool probe: a two-call tool exchange shaped like a run's.

The first call is a run's first: a system message and a question, with a tool offered.
The second is a run's second: the model's tool call sent back with the tool's result, and
the model asked to go on. A server can pass the first and refuse every second (a chat
template that cannot render a tool result, a message shape it rejects), and then no run
gets past its first search, so both are asked before doctor says a run can succeed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

import openai
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from pydantic import BaseModel, ConfigDict, Field

from deep_research.cli.doctor import server_kind
from deep_research.cli.doctor.checks import Check
from deep_research.cli.doctor.server_kind import Kind
from deep_research.llm import toolcalls
from deep_research.llm.errors import UNREACHABLE
from deep_research.runtime import prompts
from deep_research.text import secrets

Turn = Literal["first", "second"]
Cloud = Literal["cloud"]
QUOTED = 60  # characters of a text reply quoted in the warning
# Servers that load a model on its first chat request, not before they answer /models.
LOADS_ON_REQUEST: tuple[Kind | None, ...] = ("mlx_lm.server", "Ollama")
FLOOR = (
    "runs go on with the floor: the plan dispatched in code, one search per topic in code, "
    "the passages read quoted into the report; so research is only as good as the topic "
    "text (no model-chosen queries) and reports are mostly quoted passages"
)


class Ping(BaseModel):
    """Answer the connectivity check."""

    model_config = ConfigDict(title="ping")
    word: str = Field(description="The word to send back")


@dataclass(frozen=True)
class Probed:
    """The model a probe asks: the roles using it, where it is served, which server that
    is (when known), whether that server answered its model list, and whether it is a
    server of the user's own (a cloud provider has no flags to give)."""

    roles: str
    where: str
    kind: Kind | None = None
    listed: bool = False
    local: bool = False

    @property
    def server(self) -> Kind | Cloud | None:
        return self.kind if self.local else "cloud"

    def label(self, what: str) -> str:
        return f"{what} ({self.roles})"


async def probe(model: Any, target: Probed, timeout: float) -> list[Check]:
    """The first call's verdict, then (unless it failed) the second call's."""
    label = target.label("tool calls")
    request: list[BaseMessage] = [
        SystemMessage(prompts.render("doctor_probe_system")),
        HumanMessage(prompts.render("doctor_probe")),
    ]
    reply = await _ask(model, request, label, target, timeout, "first")
    if isinstance(reply, Check):
        return [reply]
    check = classify(reply, label, target.server)
    if check.status == "warn":
        # One text or empty reply to a one-line probe says little: many models that call
        # tools in runs do it. The agent nudges an empty reply once (`llm.models`); a text
        # reply is asked again more firmly. Only a model that misses twice is worth a warning.
        if toolcalls.is_empty(reply):
            again = [*request, HumanMessage(prompts.render("empty_reply"))]
        else:
            again = [*request, reply, HumanMessage(prompts.render("doctor_probe_again"))]
        second = await _ask(model, again, label, target, timeout, "first")
        # A second ask that fails adds nothing to what the first reply showed.
        if not isinstance(second, Check):
            request, reply = again, second
            check = classify(second, label, target.server, again=True)
    if check.status == "fail":
        return [check]
    return [check, await _after_result(model, request, reply, target, timeout)]


async def _after_result(
    model: Any, request: list[BaseMessage], reply: AIMessage, target: Probed, timeout: float
) -> Check:
    """The second call: the model's tool call and its result sent back, as a run does."""
    calls = reply.tool_calls or toolcalls.settle(reply, [Ping]).tool_calls
    # A model that wrote no call still gets this exchange in a run: the floor makes the
    # call in code and sends it back with its result.
    call = calls[0] if calls else ToolCall(name="ping", args={"word": "ready"}, id="call_1")
    call_id = call.get("id") or "call_1"
    exchange = [
        *request,
        AIMessage(content="", tool_calls=[{**call, "id": call_id}]),
        ToolMessage(content="ready", tool_call_id=call_id),
    ]
    label = target.label("tool result")
    answer = await _ask(model, exchange, label, target, timeout, "second")
    if isinstance(answer, Check):
        return answer
    if _cut_off(answer):
        return _did_not_stop(answer, label)
    if toolcalls.is_empty(answer):
        return Check(
            label,
            "warn",
            "empty reply after the tool result (a run's second call): the agent nudges once",
            "check the server log; raise LLM_MAX_TOKENS",
        )
    return Check(label, "ok", "answered after the tool result, as a run's second call must")


async def _ask(
    model: Any,
    messages: list[BaseMessage],
    label: str,
    target: Probed,
    timeout: float,
    turn: Turn,
) -> AIMessage | Check:
    """The model's reply to `messages` with the `ping` tool offered, or the failed check."""
    try:
        async with asyncio.timeout(timeout):
            reply = await model.bind_tools([Ping]).ainvoke(messages)
    except TimeoutError:
        return _too_long(label, target, timeout, turn)
    except openai.APIStatusError as error:
        message = error.message.removeprefix(f"Error code: {error.status_code} - ")
        if turn == "second":
            return _refused_exchange(label, target.kind, f"HTTP {error.status_code}: {message}")
        return Check(label, "fail", f"HTTP {error.status_code}: {message}", _status_fix(error))
    except openai.APIError as error:  # connection lost mid-request, bad response
        return Check(label, "fail", f"{type(error).__name__}: {error}", "check the server log")
    except Exception as error:  # other providers' clients raise their own error types
        said = secrets.redact(" ".join(str(error).split()))[:200]
        detail = f"{target.where}: {type(error).__name__}: {said}"
        if turn == "second":
            return _refused_exchange(label, target.kind, detail)
        return Check(label, "fail", detail, _other_fix(error))
    if not isinstance(reply, AIMessage):
        raise TypeError(f"expected an AIMessage from the model, got {type(reply).__name__}")
    return reply


def _refused_exchange(label: str, kind: Kind | None, said: str) -> Check:
    """The second call refused: no run gets past its first tool call on this setup."""
    said = secrets.redact(" ".join(said.split()))
    lowered = said.lower()
    cause = (
        "; it refuses an assistant message whose content is null"
        if "content" in lowered and ("none" in lowered or "null" in lowered)
        else ""
    )
    return Check(
        label,
        "fail",
        f"a run cannot succeed: the server refused the second call of a tool exchange, the "
        f"model's tool call sent back with its result{cause}: {said}",
        server_kind.exchange_hint(kind),
    )


def _too_long(label: str, target: Probed, timeout: float, turn: Turn) -> Check:
    """No reply by the deadline. A server that answered /models at once has its model
    loaded (unless it loads on the first request): a model still writing did not stop."""
    if not target.listed:
        return Check(
            label,
            "fail",
            f"no reply from {target.where} within {timeout:g} s",
            "check the provider's status, or raise --timeout",
        )
    loading = (
        " or is still loading the model (it loads on the first request)"
        if turn == "first" and target.kind in LOADS_ON_REQUEST
        else ""
    )
    return Check(
        label,
        "fail",
        f"no reply within {timeout:g} s, though {target.where} answers /models at once: the "
        f"model did not stop{loading}; a model that does not stop makes every call of a run "
        "run to its completion limit",
        "re-run doctor with a higher --timeout to tell a slow machine from a model that does "
        "not stop; check the server log and the model's chat template (its stop token)",
    )


def classify(
    reply: AIMessage, label: str, kind: Kind | Cloud | None = None, again: bool = False
) -> Check:
    """Native call, call written as text, empty, plain text, or run to the token limit;
    `kind`: the server found (its fix is given), "cloud" for a provider's own API;
    `again`: the reply to the second ask, after a first that called no tool."""
    if _cut_off(reply):
        return _did_not_stop(reply, label)
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
    # Redacted before it is cut: half a key is no longer recognisable as one.
    quoted = secrets.redact(toolcalls.strip_think(text))[:QUOTED]
    return Check(
        label,
        "warn",
        f"answered in text, not with a tool call ({quoted!r}{', twice' if again else ''}): "
        + FLOOR,
        "use a model with tool calling" if kind == "cloud" else server_kind.tool_hint(kind),
    )


def _did_not_stop(reply: AIMessage, label: str) -> Check:
    """A reply that ran to the completion limit. A one-line probe needs a few tokens and
    every role's limit is hundreds at least, so this model did not stop."""
    used = reply.usage_metadata["output_tokens"] if reply.usage_metadata else None
    tokens = f"{used} token{'s' if used != 1 else ''}, " if used else ""
    return Check(
        label,
        "fail",
        f"the model did not stop: its reply to a one-line probe ran to its completion limit "
        f"({tokens}finish_reason=length); a run's calls would too, each as long as the limit "
        "allows",
        "check the model's chat template and stop token on the server (its log shows the "
        "reply), or use another model",
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
