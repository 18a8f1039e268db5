"""Context precedence and validation, the environment and `.env.example`."""

from __future__ import annotations

import pytest

from deep_research.config.names import ConfigError
from deep_research.config.settings import Context, load_context
from tests.support.cli import REPO


def test_defaults_use_the_local_model() -> None:
    context = Context()
    assert context.orchestrator_model == "local:mlx-community/Qwen3-8B-4bit"
    assert context.max_searches_per_run == 25
    assert context.search_provider == "auto"


def test_environment_overrides_default_and_run_context_overrides_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MAX_SEARCHES_PER_RUN", "7")
    monkeypatch.setenv("LLM_MODEL", "my-model")
    monkeypatch.setenv("SEARCH_PROVIDER", "ddgs")
    assert Context().max_searches_per_run == 7
    assert Context().researcher_model == "local:my-model"
    assert Context().search_provider == "ddgs"
    assert Context(max_searches_per_run=3).max_searches_per_run == 3
    assert load_context({"search_provider": "auto"}).search_provider == "auto"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"max_searches_per_run": -1}, "max_searches_per_run=-1: Input should be greater than"),
        ({"search_provider": "bing"}, "search_provider='bing': Input should be 'auto', 'tavily'"),
        ({"relevance_threshold": 2}, "relevance_threshold=2: Input should be less than or equal"),
        ({"orchestrator_model": "acme:big"}, "provider one of local, openai"),
        ({"researcher_model": "no-provider"}, "researcher_model='no-provider' is not a model spec"),
    ],
)
def test_invalid_values_name_field_value_and_what_is_allowed(
    values: dict[str, object], expected: str
) -> None:
    with pytest.raises(ConfigError, match="Invalid configuration") as error:
        Context(**values)
    assert expected in str(error.value)


def test_invalid_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_RESULTS_PER_SEARCH", "many")
    with pytest.raises(ConfigError) as error:
        Context()
    assert "max_results_per_search='many' (from environment variable MAX_RESULTS_PER_SEARCH)" in (
        str(error.value)
    )


@pytest.mark.parametrize("field", ["llm_base_url", "tavily_api_key", "openai_api_key"])
def test_endpoints_and_keys_cannot_be_set_per_run(field: str) -> None:
    with pytest.raises(ConfigError, match=f"unknown setting\\(s\\) {field};") as error:
        Context(**{field: "http://169.254.169.254/"})
    assert "169.254" not in str(error.value), "a rejected value is not echoed"


def test_tavily_requires_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="needs TAVILY_API_KEY"):
        Context(search_provider="tavily")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    assert Context(search_provider="tavily").search_provider == "tavily"


def test_every_field_has_a_description_for_studio() -> None:
    properties = Context.model_json_schema()["properties"]
    assert properties and all(p.get("description") for p in properties.values())


def test_env_example_documents_every_variable_with_a_valid_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from deep_research.config.endpoints import Endpoints

    lines = (REPO / ".env.example").read_text().splitlines()
    settings = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    expected = {name.upper() for name in [*Context.model_fields, *Endpoints.model_fields]}
    assert expected <= set(settings), expected - set(settings)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    assert Context().max_searches_per_run == 25 and Endpoints().llm_timeout == 600


def test_a_follow_up_keeps_the_threads_lower_cap_and_its_library() -> None:
    """Never above the thread's search cap (or the default it had); never off its library."""
    from deep_research.config.settings import follow_up_settings

    thread = {"max_searches_per_run": 3, "search_provider": "library", "fetch_top_n": 1}
    assert follow_up_settings(thread, {"max_searches_per_run": 9, "fetch_top_n": 2}) == {
        "max_searches_per_run": 3,
        "search_provider": "library",
        "fetch_top_n": 2,
    }
    assert follow_up_settings(thread, {"max_searches_per_run": 1})["max_searches_per_run"] == 1
    lifted = follow_up_settings({"max_mcp_calls_per_run": 2}, {"max_mcp_calls_per_run": 50})
    assert lifted["max_mcp_calls_per_run"] == 2, "a follow-up never lifts the MCP-call cap"
    default = Context.model_fields["max_searches_per_run"].default
    lifted = follow_up_settings({}, {"max_searches_per_run": default + 50})
    assert lifted["max_searches_per_run"] == default
    kept = follow_up_settings(thread, {"search_provider": "library"})
    assert kept["search_provider"] == "library"
    with pytest.raises(ConfigError, match="searches only your own library"):
        follow_up_settings(thread, {"search_provider": "ddgs"})
    assert follow_up_settings({"search_provider": "ddgs"}, {"search_provider": "tavily"}) == {
        "search_provider": "tavily"
    }
