"""Where a researcher's search goes: the tool's optional `source`, an enum of the enabled
sources (`search.enabled_sources`), and the source a call names, checked."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import ToolCall
from pydantic import BaseModel, Field, create_model

from deep_research import search as search_service
from deep_research.config.settings import Context


def search_tool(context: Context, base: type[BaseModel]) -> type[BaseModel]:
    """The researcher's tool: with a choice of sources, it takes an optional `source`, an
    enum of them a small model can fill; leaving it out searches the run's default."""
    sources = search_service.enabled_sources(context)
    if not sources:
        return base
    uses = "; ".join(f"{name}: {search_service.SOURCE_USES.get(name, name)}" for name in sources)
    choice: Any = Literal[tuple(sources)]  # type: ignore[valid-type]
    described = Field(default=None, description=f"Where to search (default {sources[0]}). {uses}")
    name = str(base.model_config.get("title") or base.__name__)  # the tool's name
    return create_model(name, __base__=base, source=(choice | None, described))


def chosen_source(call: ToolCall, context: Context) -> tuple[str | None, str]:
    """The enabled source a call names (None: the default), and a note when it named
    one that is not enabled (searched at the default instead)."""
    source = call["args"].get("source") if isinstance(call["args"], dict) else None
    if source is None or source == "":
        return None, ""
    sources = search_service.enabled_sources(context)
    if sources and source == sources[0]:  # the default named: the same search as without it
        return None, ""
    if isinstance(source, str) and source in sources:
        return source, ""
    shown = ", ".join(sources) or "none"
    return None, f"(That source is not enabled; searched the default. Sources: {shown}.)"
