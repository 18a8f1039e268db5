"""The provider table: langchain's provider names, their extras, and what is missing."""

from __future__ import annotations

import re
import sys
import tomllib
import types

import pytest
from langchain.chat_models import base as registry

from deep_research.config import model_providers as providers
from deep_research.config.names import MODEL_PROVIDERS, ConfigError
from deep_research.config.settings import Context
from deep_research.text.secrets import SECRET_ENV
from tests.support.readme import REPO, section

PYPROJECT = REPO / "pyproject.toml"
EXTRAS = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]


def test_every_provider_init_chat_model_knows_is_in_the_table_with_its_module() -> None:
    known = {name: entry[0] for name, entry in registry._BUILTIN_PROVIDERS.items()}
    assert {name: p.module for name, p in providers.PROVIDERS.items()} == known
    assert MODEL_PROVIDERS[0] == "local" and set(MODEL_PROVIDERS[1:]) == set(known)


def test_each_extra_brings_langchain_and_its_providers_package() -> None:
    for name, entry in providers.PROVIDERS.items():
        if not entry.extra:
            continue
        wanted = {re.split(r"[<>=\[]", req)[0] for req in EXTRAS[entry.extra]}
        assert {"langchain", entry.package} <= wanted, name
    dev = {re.split(r"[<>=\[]", req)[0] for req in EXTRAS["dev"]}
    tested = {"langchain", "langchain-anthropic", "langchain-ollama"}
    assert tested <= dev, "CI installs .[dev] only; the provider tests need these"


def test_ollama_needs_no_key_bedrock_the_aws_chain_most_one_variable() -> None:
    assert providers.credential_text("ollama") == "none"
    assert providers.credential_text("bedrock") == providers.AWS_CHAIN
    assert providers.credential_text("anthropic") == "ANTHROPIC_API_KEY"
    assert providers.missing_credential("ollama", {}) is None
    assert providers.missing_credential("anthropic", {}) == "ANTHROPIC_API_KEY"
    assert providers.missing_credential("anthropic", {"ANTHROPIC_API_KEY": "k" * 20}) is None
    assert providers.missing_credential("google_genai", {"GEMINI_API_KEY": "k" * 20}) is None


def one_line(error: pytest.ExceptionInfo[ConfigError]) -> str:
    [line] = str(error.value).splitlines()
    return line


def test_a_provider_without_its_package_names_the_exact_pip_install() -> None:
    # langchain-groq is in no extra that the tests install.
    with pytest.raises(ConfigError) as error:
        Context(orchestrator_model="groq:llama-3.3-70b-versatile")
    line = one_line(error)
    assert "orchestrator_model='groq:llama-3.3-70b-versatile' needs langchain-groq" in line
    assert 'pip install -e ".[groq]"' in line


def test_a_provider_without_an_extra_names_both_packages() -> None:
    with pytest.raises(ConfigError) as error:
        Context(researcher_model="cohere:command-r")
    assert "pip install langchain langchain-cohere" in one_line(error)


def test_bedrock_without_its_package_names_its_extra() -> None:
    with pytest.raises(ConfigError) as error:
        Context(researcher_model="bedrock:anthropic.claude-3-haiku")
    assert 'pip install -e ".[bedrock]"' in one_line(error)


def test_a_missing_key_is_named_for_every_role_that_needs_it() -> None:
    with pytest.raises(ConfigError) as error:
        Context(
            orchestrator_model="anthropic:claude-sonnet-4-5",
            researcher_model="anthropic:claude-haiku-4-5",
        )
    line = one_line(error)
    assert "orchestrator_model='anthropic:claude-sonnet-4-5', researcher_model=" in line
    assert "need ANTHROPIC_API_KEY: set it in the environment or .env" in line


def test_ollama_and_a_keyed_anthropic_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    context = Context(
        orchestrator_model="anthropic:claude-sonnet-4-5", researcher_model="ollama:qwen3"
    )
    assert context.researcher_model == "ollama:qwen3"
    assert context.clarifier_model.startswith("local:"), "local: stays the default"


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as error:
        Context(researcher_model="nosuch:model")
    line = one_line(error)
    assert "provider one of local, openai, anthropic" in line and "ollama" in line


def test_every_provider_key_variable_is_scrubbed_by_name() -> None:
    names = [key for entry in providers.PROVIDERS.values() for key in entry.keys]
    names += ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]
    assert [name for name in names if not SECRET_ENV.search(name)] == []


def test_the_readme_names_each_extra_and_credential_as_the_table_does() -> None:
    text = section("### Model providers")
    for extra in re.findall(r"\.\[(\w+)\]", text):
        assert extra in EXTRAS and extra != "dev", extra
    for name, entry in providers.PROVIDERS.items():
        if entry.extra:
            assert f"| `{entry.extra}` |" in text, name
            assert all(f"`{key}`" in text for key in entry.keys), name
    assert 'pip install -e ".[anthropic]"' in text


class _Session:
    def __init__(self, credentials: object) -> None:
        self.credentials = credentials

    def get_credentials(self) -> object:
        return self.credentials


@pytest.mark.parametrize("found", [None, object()], ids=["none", "found"])
def test_bedrock_asks_botocores_credential_chain(
    monkeypatch: pytest.MonkeyPatch, found: object
) -> None:
    # botocore comes with langchain-aws, which the tests do not install: a stand-in session.
    session = types.ModuleType("botocore.session")
    session.get_session = lambda: _Session(found)  # type: ignore[attr-defined]
    package = types.ModuleType("botocore")
    package.session = session  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "botocore", package)
    monkeypatch.setitem(sys.modules, "botocore.session", session)
    missing = providers.missing_credential("bedrock_converse", {})
    assert missing == (providers.AWS_HINT if found is None else None)
