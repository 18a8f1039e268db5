"""`config.endpoints`: the environment-only settings, their call deadline and the read cache."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest
from pydantic import ValidationError

from deep_research.config.endpoints import (
    APP_NAME,
    MAX_API_URL,
    MIN_CALL_DEADLINE,
    PROVIDER_KEYS,
    Endpoints,
    default_memory_dir,
    read_endpoints,
)


def test_read_endpoints_follows_the_environment_and_caches_an_unchanged_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:1/v1")
    first = read_endpoints()
    assert first.llm_base_url == "http://127.0.0.1:1/v1"
    assert read_endpoints() is first, "the same environment is read once"
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:2/v1")
    assert read_endpoints().llm_base_url == "http://127.0.0.1:2/v1", "a change is seen"
    second = read_endpoints()
    monkeypatch.setenv("UNRELATED_VARIABLE", "x")
    assert read_endpoints() is second, "only the endpoints' own variables count"


def test_an_empty_variable_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_TIMEOUT", "")
    assert Endpoints().llm_timeout == Endpoints.model_fields["llm_timeout"].default


def test_the_deadline_covers_every_attempt_and_never_drops_below_the_floor() -> None:
    long = Endpoints(llm_timeout=MIN_CALL_DEADLINE, llm_max_retries=2)
    assert long.call_deadline == MIN_CALL_DEADLINE * 3
    assert Endpoints(llm_timeout=1.0, llm_max_retries=0).call_deadline == MIN_CALL_DEADLINE
    assert Endpoints(llm_timeout=1.0, llm_call_deadline=5.0).call_deadline == 5.0


def test_has_key_asks_only_the_providers_it_holds_a_key_for() -> None:
    assert PROVIDER_KEYS == {"openai": "OPENAI_API_KEY"}
    assert not Endpoints().has_key("openai")
    assert Endpoints(openai_api_key="sk-test").has_key("openai")
    assert Endpoints().has_key("local"), "local needs no key"


@pytest.mark.parametrize(
    ("field", "value"), [("llm_timeout", 0), ("llm_max_tokens", 255), ("chroma_port", 70000)]
)
def test_out_of_range_values_are_refused(field: str, value: int) -> None:
    with pytest.raises(ValidationError, match=field):
        Endpoints(**{field: value})


def test_endpoints_are_frozen_and_keys_never_print() -> None:
    endpoints = Endpoints(tavily_api_key="tvly-SECRET-1234")
    with pytest.raises(ValidationError):
        endpoints.llm_base_url = "http://elsewhere/"  # type: ignore[misc]
    assert "tvly-SECRET" not in repr(endpoints)


def test_the_default_memory_is_the_users_data_directory_whatever_the_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Unset or empty (`MEMORY_DIR=` as `.env.example` has it, which `langgraph dev` puts in
    the environment), MEMORY_DIR is the data directory platformdirs names; a change of the
    data directory's own variables is a new environment, not the cached answer."""
    monkeypatch.delenv("MEMORY_DIR")
    for name in ("one", "two"):
        monkeypatch.setenv("HOME", str(tmp_path / name))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / name / "data"))
        expected = str(platformdirs.user_data_path(APP_NAME) / "memory")
        assert expected.startswith(str(tmp_path / name))
        monkeypatch.chdir(tmp_path)
        assert read_endpoints().memory_dir == expected == default_memory_dir()
        monkeypatch.setenv("MEMORY_DIR", "")
        assert read_endpoints().memory_dir == expected, "empty means unset"
        monkeypatch.delenv("MEMORY_DIR")
    monkeypatch.setenv("MEMORY_DIR", "project/memory")  # asked for: kept as given
    assert read_endpoints().memory_dir == "project/memory"


@pytest.mark.parametrize("bad", ["short", "has a space in it, long enough", "x" * 513, "é" * 20])
def test_a_chroma_token_that_cannot_be_a_header_is_refused_without_showing_it(bad: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Endpoints(chroma_token=bad)
    assert "CHROMA_TOKEN must be" in str(refused.value) and bad not in str(refused.value)


def test_a_chroma_token_is_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHROMA_TOKEN", "0123456789abcdef0123")
    token = read_endpoints().chroma_token
    assert token is not None and token.get_secret_value() == "0123456789abcdef0123"
    assert "0123456789abcdef0123" not in repr(read_endpoints())


@pytest.mark.parametrize(
    "url",
    [
        "ftp://export.arxiv.org/api/query",
        "https:///api/query",
        "https://user:pw@mirror.example/api/query",
        "https://mirror.example/api/query?x=1",
        "https://mirror.example/api/query#x",
        "https://mirror.example/api query",
        "https://mirror.example/\x00",
        "https://mirror.example/" + "a" * 3_000,
    ],
)
def test_a_scholarly_api_url_is_a_plain_web_url(url: str) -> None:
    for field in ("arxiv_api_url", "wikipedia_api_url"):
        with pytest.raises(ValidationError, match="must be an http:// or https:// URL"):
            Endpoints(**{field: url})
    assert Endpoints(arxiv_api_url="http://127.0.0.1:9/api/query").arxiv_api_url.endswith("query")


def test_a_chroma_host_longer_than_any_address_is_refused() -> None:
    # Named in every memory error: 70,000 characters of it would be each one's.
    with pytest.raises(ValidationError, match="chroma_host"):
        Endpoints(chroma_host="h" * (MAX_API_URL + 1))
    assert Endpoints(chroma_host="https://chroma.example.com").chroma_host
