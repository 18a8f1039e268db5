"""`deep-research doctor`'s model checks: each endpoint answers (and which server it is),
serves the model, and goes through a tool exchange as a run does (`probe`).

Roles that name the same `provider:model` share one server and one model, so it is probed
once and the lines name every role that uses it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import cast

import httpx

from deep_research.cli.doctor import server_kind
from deep_research.cli.doctor.checks import Check
from deep_research.cli.doctor.probe import Probed, probe
from deep_research.cli.doctor.server_kind import Kind
from deep_research.config.names import ConfigError
from deep_research.config.settings import ROLES as context_roles
from deep_research.config.settings import Context
from deep_research.llm import init_chat as provider_models
from deep_research.llm.chat_models import Role, chat_model, public_url
from deep_research.llm.errors import local_server_hint

# The agent's roles (the evals' judge is a `Role` too, but no `Context` field names it).
ROLES = cast(tuple[Role, ...], context_roles)
OPENAI_URL = "https://api.openai.com/v1"
MAX_LISTED = 8  # served model names shown when the configured one is not among them


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


async def check_model(
    context: Context, target: ModelTarget, timeout: float, reply_timeout: float | None = None
) -> list[Check]:
    """Reachable, model served, tool exchange: stops at the first check that fails.
    `timeout` bounds each request, `reply_timeout` (when given) each model reply."""
    # A cloud role without its key never gets here: `Context` refuses it (exit 2).
    provider, _, name = target.spec.partition(":")
    try:
        model = chat_model(context, target.roles[0])
    except ConfigError as error:
        return [Check(target.label("endpoint"), "fail", str(error), "fix the model spec")]
    roles = ", ".join(target.roles)
    if provider not in ("local", "openai"):
        # No common model list across providers: the probe itself says reachable or not.
        where = public_url(provider_models.base_url(model, provider))
        kind: Kind | None = "Ollama" if provider == "ollama" else None
        probed = Probed(roles, where, kind, local=kind is not None)
        return await probe(model, probed, reply_timeout or timeout)
    base = str(getattr(model, "openai_api_base", None) or OPENAI_URL)
    secret = getattr(model, "openai_api_key", None)
    key = secret.get_secret_value() if secret is not None else ""
    reachable, served, kind = await _served_models(target, base, key, timeout)
    checks = [reachable]
    if reachable.status == "fail":
        return checks
    if served is not None:
        checks.append(_name_check(target, name, served))
    probed = Probed(roles, public_url(base), kind, listed=True, local=provider == "local")
    checks += await probe(model, probed, reply_timeout or timeout)
    return checks


async def _served_models(
    target: ModelTarget, base: str, key: str, timeout: float
) -> tuple[Check, list[str] | None, Kind | None]:
    """`GET /models`: whether the server answers, the names it serves when it says, and
    which server it is when its answer tells (a local one only: OpenAI is OpenAI)."""
    where = public_url(base)
    label = target.label("endpoint")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    local = target.spec.startswith("local:")
    kind: Kind | None = None
    try:
        async with asyncio.timeout(timeout), httpx.AsyncClient(timeout=timeout) as client:
            response = await client.get(base.rstrip("/") + "/models", headers=headers)
        if local:
            kind = await _kind(response, base, timeout)
    except TimeoutError:
        fix = "is the server busy or hung? re-run doctor in a minute, or raise --timeout"
        detail = f"{where} did not answer within {timeout:g} s"
        return Check(label, "fail", detail, fix), None, None
    except httpx.HTTPError as error:
        fix = local_server_hint(base) if local else "check the network (and OPENAI_BASE_URL if set)"
        detail = f"unreachable: {where} ({type(error).__name__}: {error})"
        return Check(label, "fail", detail, fix), None, None
    if response.status_code in (401, 403):
        variable = "LLM_API_KEY" if local else "OPENAI_API_KEY"
        detail = f"{where} refused the key (HTTP {response.status_code})"
        return Check(label, "fail", detail, f"check {variable}"), None, kind
    server = f" ({server_kind.NAMES[kind]})" if kind else ""
    try:
        response.raise_for_status()
        names = [str(item["id"]) for item in response.json()["data"]]
    except (httpx.HTTPStatusError, ValueError, KeyError, TypeError):
        # Some servers have no model list but chat fine: the probe decides.
        detail = f"{where}{server} answers, but not with a model list (HTTP {response.status_code})"
        fix = "is LLM_BASE_URL the API root, ending in /v1?"
        return Check(label, "warn", detail, fix), None, kind
    listed = f"{len(names)} model{'s' if len(names) != 1 else ''}"
    return Check(label, "ok", f"{where}{server} answers, serving {listed}"), names, kind


async def _kind(response: httpx.Response, base: str, timeout: float) -> Kind | None:
    """The server that sent this model list, from its own signs, else Ollama if it says so
    (under its own deadline: a server that listed its models is not blamed for this)."""
    try:
        listing = response.json()
    except ValueError:
        listing = None
    kind = server_kind.from_listing(response.headers, listing)
    if kind is not None:
        return kind
    try:
        async with asyncio.timeout(timeout), httpx.AsyncClient(timeout=timeout) as client:
            return "Ollama" if await server_kind.is_ollama(client, base) else None
    except TimeoutError:
        return None


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
