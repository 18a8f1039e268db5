"""researcher/sources.py: the search tool's `source` enum and the source a call names; its
optional years, offered only with a dated source, and the range a call gives, checked."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from deep_research.config.settings import load_context
from deep_research.researcher.graph import WebSearch
from deep_research.researcher.sources import chosen_source, chosen_years, search_tool
from deep_research.search.types import Years


def test_the_search_tool_offers_the_enabled_sources_as_an_enum_only_when_there_is_a_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    lone = load_context({"search_provider": "ddgs"})
    assert search_tool(lone, WebSearch, scholarly=True) is WebSearch
    context = load_context({"search_provider": "ddgs", "search_fallback": "arxiv,europepmc"})
    schema = search_tool(context, WebSearch, scholarly=True).model_json_schema()
    assert schema["title"] == "web_search"
    source = schema["properties"]["source"]
    assert source["enum"] == ["ddgs", "arxiv", "europepmc"]
    # `auto` (the default) offers the keyless scholarly sources beside the web.
    auto = search_tool(load_context({}), WebSearch, scholarly=True).model_json_schema()[
        "properties"
    ]
    assert auto["source"]["enum"] == [
        "ddgs",
        "arxiv",
        "europepmc",
        "openalex",
        "wikipedia",
    ]
    assert (
        search_tool(load_context({"scholarly_sources": False}), WebSearch, scholarly=True)
        is WebSearch
    )
    assert source["description"].startswith("ddgs (default): web; arxiv: ")
    assert "medicine" in source["description"]

    def call(args: object) -> Any:
        return {"name": "web_search", "args": args, "id": "c", "type": "tool_call"}

    assert chosen_source(call({"queries": ["q"], "source": "arxiv"}), context, True) == (
        "arxiv",
        "",
    )
    assert chosen_source(call({"queries": ["q"]}), context, True) == (None, "")
    # The default named is the same search as the default left out: one cache key, one
    # count against the cap, and "already searched" for a repeat.
    assert chosen_source(call({"queries": ["q"], "source": "ddgs"}), context, True) == (None, "")
    # The description's words copied as the value: the source it names.
    named = call({"queries": ["q"], "source": "arxiv (default)"})
    assert chosen_source(named, context, True) == ("arxiv", "")
    unknown, note = chosen_source(call({"queries": ["q"], "source": "pubmed"}), context, True)
    assert unknown is None and "not enabled" in note and "ddgs, arxiv, europepmc" in note


def call(args: object) -> Any:
    return {"name": "web_search", "args": args, "id": "c", "type": "tool_call"}


def test_a_topic_not_marked_scholarly_is_offered_the_web_alone_in_the_shortest_tool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`auto`'s scholarly sources only for a topic the orchestrator marked: any other
    topic's tool is the bare one, its schema as long as before there were sources; a call
    naming one anyway is searched at the default, and told so."""
    import json

    from langchain_core.utils.function_calling import convert_to_openai_tool

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    assert search_tool(load_context({}), WebSearch, scholarly=False) is WebSearch  # ddgs
    sent = json.dumps(convert_to_openai_tool(WebSearch))
    assert len(sent) <= 300 and "Search the web" in sent
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    auto = load_context({})
    tavily = convert_to_openai_tool(search_tool(auto, WebSearch, scholarly=False))
    properties = tavily["function"]["parameters"]["properties"]
    assert set(properties) == {"queries", "from_year", "to_year"}, "Tavily's years alone"
    assert len(json.dumps(tavily)) <= 330
    source, note = chosen_source(call({"queries": ["q"], "source": "arxiv"}), auto, False)
    assert source is None and "not enabled" in note
    assert chosen_source(call({"queries": ["q"], "source": "arxiv"}), auto, True) == ("arxiv", "")
    assert chosen_years(call({"from_year": 2019}), auto, False) == (Years(2019, None), "")
    monkeypatch.delenv("TAVILY_API_KEY")  # DuckDuckGo: years only with the papers' sources
    years, note = chosen_years(call({"from_year": 2019}), load_context({}), False)
    assert years is None and "No source of this topic" in note
    assert chosen_years(call({"from_year": 2019}), load_context({}), True) == (
        Years(2019, None),
        "",
    )
    # Sources the user named as fallbacks are the run's own: offered to every topic.
    named = load_context({"search_fallback": "arxiv"})
    assert search_tool(named, WebSearch, scholarly=False) is not WebSearch


def test_years_are_offered_only_when_a_source_of_the_run_can_limit_a_search_to_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    web_only = {"scholarly_sources": False}
    for undated in ({"search_provider": "ddgs"}, {"search_fallback": "wikipedia", **web_only}):
        schema = search_tool(load_context(undated), WebSearch, scholarly=True).model_json_schema()
        assert "from_year" not in schema["properties"] and "to_year" not in schema["properties"]
    # One dated source: the years without a choice of source.
    lone = search_tool(load_context({"search_provider": "arxiv"}), WebSearch, scholarly=True)
    properties = lone.model_json_schema()["properties"]
    assert "source" not in properties
    for year in ("from_year", "to_year"):  # its type alone: no null, default or description
        assert set(properties[year]) == {"type", "title"} and properties[year]["type"] == "integer"
    mixed = load_context({"search_fallback": "wikipedia,openalex,europepmc", **web_only})
    properties = search_tool(mixed, WebSearch, scholarly=True).model_json_schema()["properties"]
    # The default (wikipedia) takes no years: said, since a search asked with years there
    # runs without them, a search all the same.
    assert "source" in properties
    assert properties["from_year"]["description"] == "Only for source openalex, europepmc"
    assert (
        search_tool(load_context({"search_provider": "library"}), WebSearch, scholarly=True)
        is WebSearch
    )


def test_the_tool_is_made_once_for_each_set_of_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    auto = load_context({})
    made = search_tool(auto, WebSearch, scholarly=True)
    assert search_tool(load_context({"max_searches_per_run": 3}), WebSearch, scholarly=True) is made
    other = search_tool(load_context({"search_fallback": "wikipedia"}), WebSearch, scholarly=True)
    assert (
        other is not made
        and "wikipedia" in other.model_json_schema()["properties"]["source"]["description"]
    )


def test_a_call_s_years_are_kept_only_as_checked_integers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    context = load_context({"search_fallback": "arxiv"})
    assert chosen_years(call({"queries": ["q"]}), context, True) == (None, "")
    assert chosen_years(call({"from_year": None, "to_year": ""}), context, True) == (None, "")
    assert chosen_years(call({"from_year": 2019, "to_year": 2023}), context, True) == (
        Years(2019, 2023),
        "",
    )
    assert chosen_years(call({"from_year": "2020"}), context, True) == (Years(2020, None), "")
    assert chosen_years(call({"to_year": 1995}), context, True) == (Years(None, 1995), "")
    next_year = date.today().year + 1
    assert chosen_years(call({"to_year": next_year}), context, True) == (Years(None, next_year), "")
    hostile: list[object] = [
        "2019) OR all:x",
        "２０１９",
        2019.5,
        True,
        1899,
        next_year + 1,
        -2019,
        10**100,
        "x" * 100_000,
        [2019],
        {"$gt": 0},
    ]
    for value in hostile:
        years, note = chosen_years(call({"from_year": value, "to_year": 2023}), context, True)
        assert years is None and note.startswith("(The years given are not a usable range"), value
        assert str(value)[:20] not in note  # fixed words: nothing the model sent
    years, note = chosen_years(call({"from_year": 2023, "to_year": 2019}), context, True)
    assert years is None and "from_year is after to_year" in note
    assert chosen_years(call("not a dict"), context, True) == (None, "")
    undated = load_context({"search_provider": "ddgs"})
    years, note = chosen_years(call({"from_year": 2019}), undated, True)
    assert years is None and "No source of this topic can limit a search to years" in note


def test_the_schema_sent_with_every_researcher_call_stays_small(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each researcher call carries the tool's schema: with Tavily and the default sources
    it was 894 characters (each optional field a `null` choice, a default and the list of
    sources that take years), 295 before there was a choice of sources. Measured as
    `bind_tools` sends it, one tool (docs/speed.md counts the tools' JSON list: two more);
    the years are described only where the default takes none."""
    import json

    from langchain_core.utils.function_calling import convert_to_openai_tool

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    tool = search_tool(load_context({}), WebSearch, scholarly=True)
    sent = convert_to_openai_tool(tool)
    properties = sent["function"]["parameters"]["properties"]
    assert properties["source"]["enum"] == ["tavily", "arxiv", "europepmc", "openalex", "wikipedia"]
    assert sent["function"]["parameters"]["required"] == ["queries"]
    assert len(json.dumps(sent)) <= 600
    assert set(properties["from_year"]) == {"type"}, "Tavily, the default, takes years"
    # Left out or sent as null (as some models do), the same call.
    assert tool.model_validate({"queries": ["q"], "source": None, "from_year": None}).source is None


def test_the_sources_are_offered_in_the_run_s_order_whatever_was_made_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """typing caches a union of a Literal by its values' set: the same sources in another
    order, made first, must not give their order to this run's schema."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")

    def offered(settings: dict[str, Any]) -> list[str]:
        tool = convert_to_openai_tool(
            search_tool(load_context(settings), WebSearch, scholarly=True)
        )
        return list(tool["function"]["parameters"]["properties"]["source"]["enum"])

    reordered = offered({"search_fallback": "wikipedia,openalex,europepmc"})
    assert reordered == ["tavily", "wikipedia", "openalex", "europepmc", "arxiv"]
    assert offered({}) == ["tavily", "arxiv", "europepmc", "openalex", "wikipedia"]
