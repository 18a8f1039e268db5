"""`deep-research doctor`'s search checks on 127.0.0.1: the fake Tavily and SearXNG APIs,
ddgs with no network, and `auto`'s chain of fallbacks."""

from __future__ import annotations

import json

import pytest

from deep_research.cli.args import UsageError
from deep_research.cli.doctor import doctor_parser
from deep_research.cli.doctor.checks import (
    check_search,
    check_searches,
    search_names,
)
from deep_research.config.settings import load_context
from tests.support.fakes.http_server import closed_port
from tests.support.fakes.searxng_server import FakeSearxngServer
from tests.support.fakes.tavily_server import FakeTavilyServer


async def test_tavily_with_a_valid_key_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeTavilyServer(api_keys={"tvly-good-key"}) as tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-good-key")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        check = await check_search("tavily", 5.0)
        assert len(tavily.queries) == 1
        assert check.detail.startswith(f"{tavily.url} answered with 3 results")
    assert check.status == "ok"


async def test_the_probe_asks_the_users_own_query(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeTavilyServer(api_keys={"tvly-good-key"}) as tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-good-key")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        query = doctor_parser().parse_args(["--query", "  Wärmepumpen \n im Winter "]).query
        check = await check_search("tavily", 5.0, query)
        assert tavily.queries == ["Wärmepumpen im Winter"]
    assert check.status == "ok"


@pytest.mark.parametrize("query", ["", "   ", "x" * 401])
def test_an_empty_or_huge_probe_query_is_bad_input(query: str) -> None:
    with pytest.raises(UsageError, match="--query wants 1 to 400 characters"):
        doctor_parser().parse_args(["--query", query])


def test_doctor_help_names_every_search_provider() -> None:
    text = doctor_parser().format_help()
    assert "library" in text and "searxng" in text


async def test_tavily_with_an_invalid_key_fails_without_printing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeTavilyServer(api_keys={"tvly-good-key"}) as tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-WRONG-0123456789")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        check = await check_search("tavily", 5.0)
        assert check.detail == f"{tavily.url} rejected the key"
    assert check.status == "fail"
    assert "TAVILY_API_KEY" in check.fix
    assert "WRONG" not in json.dumps(vars(check))


@pytest.mark.parametrize("json_format", [True, False])
async def test_searxng_answers_only_with_its_json_format_enabled(
    monkeypatch: pytest.MonkeyPatch, json_format: bool
) -> None:
    with FakeSearxngServer(json_format=json_format) as searxng:
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        check = await check_search("searxng", 5.0)
    if json_format:
        assert check.status == "ok", check
    else:
        assert check.status == "fail"
        assert "403" in check.detail and "JSON format is disabled" in check.detail
        assert "settings.yml" in check.fix


async def test_ddgs_without_a_network_is_unreachable_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every ddgs request goes through a proxy nobody listens on: no network, for real.
    monkeypatch.setenv("DDGS_PROXY", f"http://127.0.0.1:{closed_port()}")
    check = await check_search("ddgs", 5.0)
    assert check.status == "fail"
    assert check.detail.startswith("unreachable: ")
    assert "TAVILY_API_KEY" in check.fix


async def test_auto_checks_the_provider_a_run_would_use_then_each_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeSearxngServer(json_format=False) as searxng, FakeTavilyServer() as tavily:
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        context = load_context({"search_fallback": "searxng"})
        assert search_names(context) == ["searxng"], "no Tavily key: auto means searxng"
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-any-key")
        context = load_context({"search_fallback": "searxng"})
        assert search_names(context) == ["tavily", "searxng"]
        checks = await check_searches(context, 5.0)
    assert [(c.name, c.status) for c in checks] == [
        ("search tavily", "ok"),
        ("search searxng", "warn"),
        ("search sources", "ok"),  # what auto offers beside them, named, not probed
    ]
    assert "the run can use another provider" in checks[1].detail
    assert "choose arxiv, europepmc, openalex, wikipedia" in checks[2].detail
    assert "a topic the orchestrator marks scholarly" in checks[2].detail


async def test_every_provider_failing_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeSearxngServer(json_format=False) as searxng:
        monkeypatch.setenv("SEARXNG_URL", searxng.url)
        monkeypatch.setenv("DDGS_PROXY", f"http://127.0.0.1:{closed_port()}")
        context = load_context({"search_provider": "searxng", "search_fallback": "ddgs"})
        checks = await check_searches(context, 5.0)
    assert [c.status for c in checks] == ["fail", "fail"]
