"""`config.envfile`'s guard on endpoints and keys: a project's `.env` may not send a key set
elsewhere to an endpoint of its own, copy one in, or name a credentials file or a cloud
SDK's endpoint; the user's own `.env` and the environment may.

The fixtures `fresh` and `user_env` are in this folder's conftest.py.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from deep_research.config import endpoint_keys, envfile
from deep_research.config import model_providers as providers
from deep_research.text.secrets import SECRET_ENV

# Each endpoint with one secret sent to it: a proxy or CA bundle is sent every secret.
PAIRS = [
    (endpoint, "LLM_API_KEY" if keys == endpoint_keys.EVERY_SECRET else keys[0])
    for endpoint, keys in endpoint_keys.ENDPOINT_SECRETS.items()
]


@pytest.fixture
def keyless(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`fresh`, with no secret and no endpoint in the environment."""
    for name in list(os.environ):
        if SECRET_ENV.search(name) or endpoint_keys.is_endpoint(name):
            monkeypatch.delenv(name)
    return fresh


def unkeyed_warning(endpoint: str, key: str, project: Path, user_env: Path) -> str:
    return (
        f"ignored {endpoint} in {project}: a project's .env may not send {key}, set "
        f"elsewhere, to an endpoint of its own; set {endpoint} in the environment or in your "
        f"own {user_env}, or {key} in {project} too"
    )


@pytest.mark.parametrize(("endpoint", "key"), PAIRS)
def test_a_projects_endpoint_is_ignored_when_its_key_is_the_environments(
    endpoint: str,
    key: str,
    keyless: Path,
    user_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A cloned repository's `.env` cannot send the user's key to a server of its choice."""
    monkeypatch.setenv(key, "sk-users-own-key-0123456789")
    (keyless / ".env").write_text(f"{endpoint}=http://127.0.0.1:9/evil-value\nDR_TEST_A=1\n")
    with caplog.at_level(logging.WARNING):
        assert envfile.load_once() == [keyless / ".env"]
    assert endpoint not in os.environ and os.environ["DR_TEST_A"] == "1"
    assert envfile.unkeyed() == [(endpoint, [key])], "for doctor"
    [record] = caplog.records
    assert record.getMessage() == unkeyed_warning(endpoint, key, keyless / ".env", user_env)
    assert "evil-value" not in caplog.text and "users-own-key" not in caplog.text


@pytest.mark.parametrize(("endpoint", "key"), PAIRS)
def test_a_projects_endpoint_is_ignored_when_its_key_is_the_users_env(
    endpoint: str, key: str, keyless: Path, user_env: Path
) -> None:
    """The user's `.env` is read after the project's: its key still counts as elsewhere."""
    user_env.write_text(f"{key}=sk-users-own-key-0123456789\n")
    (keyless / ".env").write_text(f"{endpoint}=http://127.0.0.1:9/v1\n")
    assert envfile.load_once() == [keyless / ".env", user_env]
    assert endpoint not in os.environ and os.environ[key] == "sk-users-own-key-0123456789"
    assert envfile.unkeyed() == [(endpoint, [key])]


@pytest.mark.parametrize(("endpoint", "key"), PAIRS)
def test_a_projects_endpoint_is_used_with_the_projects_own_key(
    endpoint: str, key: str, keyless: Path, user_env: Path
) -> None:
    user_env.write_text("DR_TEST_A=user\n")
    (keyless / ".env").write_text(f"{endpoint}=http://127.0.0.1:9/v1\n{key}=project-key-01\n")
    assert envfile.load_once() == [keyless / ".env", user_env]
    assert os.environ[endpoint] == "http://127.0.0.1:9/v1" and os.environ[key] == "project-key-01"
    assert envfile.unkeyed() == []


@pytest.mark.parametrize(("endpoint", "key"), PAIRS)
def test_a_projects_endpoint_is_used_when_no_key_is_set_anywhere(
    endpoint: str, key: str, keyless: Path, user_env: Path
) -> None:
    user_env.write_text(f"{key}=\n")  # empty: unset
    (keyless / ".env").write_text(f"{endpoint}=http://127.0.0.1:9/v1\n")
    envfile.load_once()
    assert os.environ[endpoint] == "http://127.0.0.1:9/v1" and envfile.unkeyed() == []


@pytest.mark.parametrize(("endpoint", "key"), PAIRS)
def test_the_users_own_env_may_set_an_endpoint_for_the_environments_key(
    endpoint: str, key: str, keyless: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """And it is used even when a project's `.env` set the same endpoint, ignored."""
    monkeypatch.setenv(key, "sk-users-own-key-0123456789")
    user_env.write_text(f"{endpoint}=http://user.test/v1\n")
    (keyless / ".env").write_text(f"{endpoint}=http://127.0.0.1:9/v1\n")
    envfile.load_once()
    assert os.environ[endpoint] == "http://user.test/v1"


def test_a_key_the_environment_wins_over_is_not_the_projects_own(
    keyless: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's `.env` sets the key too, but the environment's is the one sent."""
    monkeypatch.setenv("LLM_API_KEY", "sk-users-own-key-0123456789")
    (keyless / ".env").write_text("LLM_API_KEY=project-key\nllm_base_url=http://evil.test\n")
    envfile.load_once()
    assert "llm_base_url" not in os.environ, "pydantic-settings reads any case"
    assert envfile.unkeyed() == [("llm_base_url", ["LLM_API_KEY"])]


@pytest.mark.parametrize(
    "key", sorted({key for p in providers.PROVIDERS.values() for key in p.keys})
)
def test_a_providers_own_endpoint_not_in_the_table_is_paired_by_its_first_word(
    key: str, keyless: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An integration's base URL variable (GROQ_API_BASE) follows its key (GROQ_API_KEY)."""
    endpoint = key.split("_")[0] + "_SOME_BASE_URL"
    monkeypatch.setenv(key, "sk-users-own-key-0123456789")
    (keyless / ".env").write_text(f"{endpoint}=http://evil.test\n")
    envfile.load_once()
    assert endpoint not in os.environ and envfile.unkeyed() == [(endpoint, [key])]


@pytest.mark.parametrize("name", sorted(endpoint_keys.KEYLESS))
def test_a_projects_keyless_endpoint_is_used_beside_any_key(
    name: str, keyless: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_API_KEY", "sk-users-own-key-0123456789")
    (keyless / ".env").write_text(f"{name}=http://127.0.0.1:9/v1\n")
    envfile.load_once()
    assert os.environ[name] == "http://127.0.0.1:9/v1" and envfile.unkeyed() == []


@pytest.mark.parametrize(
    "value",
    ["http://127.0.0.1:9/${LLM_API_KEY}", "${llm_api_key:-none}", "a${LLM_API_KEY}b"],
)
def test_a_projects_value_may_not_copy_in_a_key_set_elsewhere(
    value: str,
    keyless: Path,
    user_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`SEARXNG_URL=http://evil/${LLM_API_KEY}` would send the key in a keyless URL."""
    monkeypatch.setenv("LLM_API_KEY", "sk-users-own-key-0123456789")
    (keyless / ".env").write_text(f"SEARXNG_URL={value}\nDR_TEST_A=${{HOME}}\n")
    with caplog.at_level(logging.WARNING):
        envfile.load_once()
    assert "SEARXNG_URL" not in os.environ and os.environ["DR_TEST_A"] == os.environ["HOME"]
    assert envfile.unkeyed() == [("SEARXNG_URL", ["LLM_API_KEY"])]
    [record] = caplog.records
    assert record.getMessage() == (
        f"ignored SEARXNG_URL in {keyless / '.env'}: a project's .env may not copy "
        "LLM_API_KEY, set elsewhere, into its own settings; set SEARXNG_URL in the "
        f"environment or in your own {user_env}"
    )
    assert "users-own-key" not in caplog.text


def test_a_projects_value_may_copy_in_its_own_key(keyless: Path, user_env: Path) -> None:
    (keyless / ".env").write_text("MY_API_KEY=own-0123456789\nSEARXNG_URL=http://h/${MY_API_KEY}\n")
    envfile.load_once()
    assert os.environ["SEARXNG_URL"] == "http://h/own-0123456789" and envfile.unkeyed() == []


@pytest.mark.parametrize(
    "reference", ["DEEP_RESEARCH_CHECKPOINTS", "DATABASE_URL", "HTTPS_PROXY", "Database_Url"]
)
def test_a_projects_value_may_not_copy_in_any_variable_set_elsewhere(
    reference: str, keyless: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database URL or a proxy's holds a password its name does not announce."""
    monkeypatch.setenv(reference.upper(), "postgresql://u:hunter2@db/x")
    (keyless / ".env").write_text(f"SEARXNG_URL=https://evil.example/${{{reference}}}\n")
    envfile.load_once()
    assert "SEARXNG_URL" not in os.environ
    assert envfile.unkeyed() == [("SEARXNG_URL", [reference.upper()])]


def test_a_projects_name_in_another_case_is_the_environments_setting(
    fresh: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Llm_Api_Key` in a project's file must not count as its own key beside the user's
    LLM_API_KEY (the settings read names in any case), nor override the environment's."""
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    monkeypatch.setenv("MAX_COST_USD", "1")
    user_env.write_text("LLM_API_KEY=sk-user-0123456789\n")
    (fresh / ".env").write_text(
        "LLM_BASE_URL=https://evil.example/v1\nLlm_Api_Key=x\nmax_cost_usd=500\n"
    )
    envfile.load_once()
    # The project's server gets the project's key, and the user's key stays out: it would
    # otherwise be read beside `Llm_Api_Key` as the same setting, the later one winning.
    assert os.environ["Llm_Api_Key"] == "x" and "LLM_API_KEY" not in os.environ
    assert "sk-user" not in str(dict(os.environ))
    assert "max_cost_usd" not in os.environ and os.environ["MAX_COST_USD"] == "1"


@pytest.mark.parametrize(
    "name",
    [
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        "SSLKEYLOGFILE",
    ],
)
def test_a_projects_env_may_not_name_a_credentials_file_or_a_cloud_sdks_endpoint(
    name: str, fresh: Path, user_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(name, raising=False)
    (fresh / ".env").write_text(f"{name}=./x\n")
    envfile.load_once()
    assert name not in os.environ and envfile.refused() == [name]
