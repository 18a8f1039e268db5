"""Where a researcher's search goes: the tool's optional `source`, an enum of the enabled
sources (`search.enabled_sources`: more on a topic the orchestrator marked scholarly), and
the source a call names, checked; and its optional `from_year`/`to_year`, offered when a
source can limit a search to those publication years (`search.dated_sources`), checked to
be plausible years before any provider sees them."""

from __future__ import annotations

import functools
from datetime import date
from typing import Any, Literal

from langchain_core.messages import ToolCall
from pydantic import BaseModel, Field, create_model
from pydantic.json_schema import SkipJsonSchema

from deep_research import search as search_service
from deep_research.config.settings import Context
from deep_research.search.types import Years

MAX_TOOLS = 16  # tool classes kept, one per set of sources a run offers
FIRST_YEAR = 1900  # the earliest year a search may be limited to
DEFAULT = " (default)"  # after the default source's name in the `source` description
_YEARS_DROPPED = "(The years given are not a usable range, so they were not applied: {why}.)"


def search_tool(context: Context, base: type[BaseModel], scholarly: bool) -> type[BaseModel]:
    """The researcher's tool: with a choice of sources (more on a `scholarly` topic), it
    takes an optional `source`, an enum of them a small model can fill; leaving it out
    searches the run's default. With a source that can limit a search to publication years,
    it takes them too. Without either, it is `base`, as short as it can be."""
    sources = tuple(search_service.enabled_sources(context, scholarly))
    return _tool(base, sources, tuple(search_service.dated_sources(context, scholarly)))


@functools.lru_cache(maxsize=MAX_TOOLS)
def _tool(
    base: type[BaseModel], sources: tuple[str, ...], dated: tuple[str, ...]
) -> type[BaseModel]:
    """The tool for these sources, made once: making its model class each turn took 1-2 ms
    of the event loop's time before the researcher's request could go out. Its schema is
    sent with every researcher call, so each optional field is its type alone (no `null`
    choice, no default: leaving it out is the default), and the years are described only
    when the default source cannot take them (docs/speed.md, the prompt's size)."""
    name = str(base.model_config.get("title") or base.__name__)  # the tool's name
    if dated:
        year: Any = int | SkipJsonSchema[None]  # type: ignore[misc]
        # Asked of a source without years, a search runs without them, a search all the
        # same: said where the default is such a source.
        which = (
            f"Only for source {', '.join(dated)}" if sources and sources[0] not in dated else None
        )
        base = create_model(
            name, __base__=base, from_year=(year, _optional(which)), to_year=(year, _optional())
        )
    if not sources:
        return base
    labels = [sources[0] + DEFAULT, *sources[1:]]
    uses = "; ".join(
        f"{label}: {search_service.SOURCE_USES.get(name, name)}"
        for label, name in zip(labels, sources, strict=True)
    )
    choice: Any = Literal[sources]  # type: ignore[valid-type]
    optional: Any = choice | SkipJsonSchema[None]  # type: ignore[misc]
    described = _optional(uses, enum=list(sources))
    return create_model(name, __base__=base, source=(optional, described))


def _optional(description: str | None = None, enum: list[str] | None = None) -> Any:
    """An optional field (None when left out) whose schema shows no default. An `enum` is
    given in its order: typing caches a union of a Literal by its values' set, so the
    schema of one made earlier with the same sources in another order would show that."""

    def shown(schema: dict[str, Any]) -> None:
        schema.pop("default", None)
        if enum is not None:
            schema["enum"] = enum

    return Field(default=None, description=description, json_schema_extra=shown)


def chosen_years(call: ToolCall, context: Context, scholarly: bool) -> tuple[Years | None, str]:
    """The range of years a call asks for (None: any), and a note when it gave years that
    are not a usable range (dropped, never sent), or that no source of its topic takes
    (`scholarly`: the topic's). Only checked integers are kept."""
    args = call["args"] if isinstance(call["args"], dict) else {}
    given = {key: args.get(key) for key in ("from_year", "to_year")}
    if all(value is None or value == "" for value in given.values()):
        return None, ""
    if not search_service.dated_sources(context, scholarly):
        return None, "(No source of this topic can limit a search to years; searched without them.)"
    first, last = _year(given["from_year"]), _year(given["to_year"])
    if first is False or last is False:
        why = f"each year is a number from {FIRST_YEAR} to {date.today().year + 1}"
        return None, _YEARS_DROPPED.format(why=why)
    if first is not None and last is not None and first > last:
        return None, _YEARS_DROPPED.format(why="from_year is after to_year")
    return Years(first, last), ""


def _year(value: object) -> int | None | Literal[False]:
    """A year within bounds; None for none given; False for anything else."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and len(value) == 4 and value.isascii() and value.isdigit():
        value = int(value)  # a small model may quote it
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return value if FIRST_YEAR <= value <= date.today().year + 1 else False


def chosen_source(call: ToolCall, context: Context, scholarly: bool) -> tuple[str | None, str]:
    """The enabled source a call names (None: the default), and a note when it named one
    that is not enabled for its topic (`scholarly`: the topic's): searched at the default."""
    source = call["args"].get("source") if isinstance(call["args"], dict) else None
    if isinstance(source, str):  # "tavily (default)", as the description words it
        source = source.removesuffix(DEFAULT)
    if source is None or source == "":
        return None, ""
    sources = search_service.enabled_sources(context, scholarly)
    if sources and source == sources[0]:  # the default named: the same search as without it
        return None, ""
    if isinstance(source, str) and source in sources:
        return source, ""
    shown = ", ".join(sources) or "none"
    return None, f"(That source is not enabled; searched the default. Sources: {shown}.)"
