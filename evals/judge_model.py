"""The judge: a chat model named by `--judge provider:model`, and its replies read as JSON.

The judge is built with the agent's own model construction (`deep_research.llm.models`), from
its own spec, never from the agent's `Context`: grading a run must not depend on the
settings that produced it. Replies go through the same settling as the agent's (a leading
`<think>` block removed, one nudge on an empty reply) and are read leniently: prose or a
code fence around the JSON, a truncated object, single quotes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from deep_research.config.endpoints import read_endpoints
from deep_research.config.names import MODEL_PROVIDERS, ConfigError
from deep_research.config.problems import model_provider_problem
from deep_research.llm import init_chat as provider_models
from deep_research.llm.chat_models import public_url, spec_model
from deep_research.llm.models import EmptyReplyError, RoleModel
from deep_research.llm.toolcalls.parse import loads
from deep_research.llm.toolcalls.reasoning import strip_think

# Judging is grading, not writing: as repeatable as the server allows.
JUDGE_TEMPERATURE = 0.0


class JudgeReplyError(ValueError):
    """The judge's reply held no JSON object; the evaluator scores `None` and says so."""


def check_spec(spec: str) -> str:
    """`spec` if it names a provider and a model, with a clear error otherwise."""
    provider, sep, name = spec.partition(":")
    if not sep or not name.strip() or provider not in MODEL_PROVIDERS:
        raise ConfigError(
            f"--judge {spec!r} is not a model spec: use 'provider:model' with provider one "
            f"of {', '.join(MODEL_PROVIDERS)} (e.g. 'local:qwen3-8b' or 'openai:gpt-4.1-mini')"
        )
    problem = model_provider_problem(provider, read_endpoints())
    if problem:  # the agent's own check: the missing package or credential, in one line
        raise ConfigError(f"--judge {spec!r} needs {problem}")
    return spec


@dataclass(frozen=True)
class Judge:
    """One judge model; `verdict` asks it one question and returns the JSON object it gave."""

    model: RoleModel

    async def verdict(self, system: str, user: str) -> dict[str, Any]:
        try:
            reply = await self.model.ask([SystemMessage(system), HumanMessage(user)])
        except EmptyReplyError:  # only reasoning, cut off, or nothing at all: twice
            raise JudgeReplyError("the judge's reply was empty twice (or only reasoning)") from None
        return read_json(reply.text)


def judge_from_spec(spec: str) -> Judge:
    """The judge as the agent builds a role's model: its provider's endpoint for error
    messages, retries around the call when its client does not retry itself."""
    model = spec_model(check_spec(spec), JUDGE_TEMPERATURE)
    endpoints = read_endpoints()
    endpoint = public_url(provider_models.base_url(model, spec.partition(":")[0]))
    retries = 0 if provider_models.retries_natively(model) else endpoints.llm_max_retries
    return Judge(
        RoleModel(
            model=model,
            endpoint=endpoint,
            role="judge",
            spec=spec,
            deadline=endpoints.call_deadline,
            retries=retries,
        )
    )


def read_json(text: str) -> dict[str, Any]:
    """The first JSON object in a reply: after reasoning, inside prose or a fence, or cut off."""
    body = strip_think(text)
    start = body.find("{")
    if start == -1:
        raise JudgeReplyError(f"no JSON object in the judge's reply: {_preview(body)}")
    value = loads(body[start:])
    # json-repair returns a list when it finds more than one object; the first one counts.
    if isinstance(value, list) and value and isinstance(value[0], dict):
        value = value[0]
    if not isinstance(value, dict):
        raise JudgeReplyError(f"the judge's reply is not a JSON object: {_preview(body)}")
    return value


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:120] + ("…" if len(flat) > 120 else ""))
