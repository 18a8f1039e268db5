"""`config.endpoint_keys`: every endpoint setting is paired with its secrets or named keyless.

What envfile does with the pairs is tested in test_envfile_endpoints.py; these keep the table whole,
so a new endpoint setting cannot slip past it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import SecretStr

from deep_research.config import agent_server, endpoint_keys, envfile
from deep_research.config.endpoints import Endpoints
from deep_research.text.secrets import SECRET_ENV

REPO = Path(__file__).resolve().parents[3]
# A variable's name quoted in code ("LLM_BASE_URL") or in docs (`LLM_BASE_URL`).
QUOTED = re.compile(r"[\"'`]([A-Z][A-Z0-9_]*)[\"'`]")
CLASSIFIED = set(endpoint_keys.ENDPOINT_SECRETS) | endpoint_keys.KEYLESS


def named_endpoints() -> set[str]:
    """Every endpoint-shaped variable name the code, the docs or `.env.example` quote."""
    files = [p for p in (REPO / "deep_research").rglob("*.py") if p.name != "endpoint_keys.py"]
    files += [*(REPO / "docs").glob("*.md"), REPO / "README.md", REPO / ".env.example"]
    names = {name for path in files for name in QUOTED.findall(path.read_text())}
    names |= set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]*)=", (REPO / ".env.example").read_text(), re.M))
    return {name for name in names if endpoint_keys.ENDPOINT_SHAPE.search(name)}


def test_every_endpoint_setting_named_anywhere_is_paired_or_keyless() -> None:
    found = named_endpoints()
    assert {"LLM_BASE_URL", "CHROMA_HOST", "SEARXNG_URL"} <= found, "the scan finds them"
    # A project's `.env` may not set the program-naming ones at all (envfile.names_a_program).
    found = {name for name in found if not envfile.names_a_program(name)}
    assert found <= CLASSIFIED, f"add to ENDPOINT_SECRETS or KEYLESS: {found - CLASSIFIED}"


def test_every_endpoint_field_of_endpoints_is_paired_or_keyless() -> None:
    fields = {name.upper() for name in Endpoints.model_fields}
    shaped = {name for name in fields if endpoint_keys.ENDPOINT_SHAPE.search(name)}
    assert shaped and shaped <= CLASSIFIED, shaped - CLASSIFIED


def test_every_key_the_config_holds_has_its_endpoints_in_the_table() -> None:
    keys = {
        name.upper()
        for name, field in Endpoints.model_fields.items()
        if field.annotation == SecretStr | None
    } | {agent_server.TOKEN_ENV}
    paired = {key for keys in endpoint_keys.ENDPOINT_SECRETS.values() for key in keys}
    assert {"LLM_API_KEY", "CHROMA_TOKEN"} <= keys and keys <= paired, keys - paired


def test_the_table_names_secrets_the_redactor_hides_and_is_not_keyless() -> None:
    assert not set(endpoint_keys.ENDPOINT_SECRETS) & endpoint_keys.KEYLESS
    for endpoint, keys in endpoint_keys.ENDPOINT_SECRETS.items():
        assert endpoint_keys.is_endpoint(endpoint)
        if keys != endpoint_keys.EVERY_SECRET:
            assert all(SECRET_ENV.search(key) for key in keys), (endpoint, keys)


@pytest.mark.parametrize(
    ("endpoint", "elsewhere", "sent"),
    [
        ("LLM_BASE_URL", {"LLM_API_KEY", "OPENAI_API_KEY"}, ["LLM_API_KEY"]),
        ("llm_base_url", {"LLM_API_KEY"}, ["LLM_API_KEY"]),
        ("LLM_BASE_URL", {"OPENAI_API_KEY"}, []),
        (
            "HTTPS_PROXY",
            {"TAVILY_API_KEY", "LLM_TIMEOUT", "CHROMA_TOKEN"},
            ["CHROMA_TOKEN", "TAVILY_API_KEY"],
        ),
        ("GROQ_API_BASE", {"GROQ_API_KEY", "LLM_API_KEY"}, ["GROQ_API_KEY"]),
        ("SEARXNG_URL", {"SEARXNG_API_KEY"}, []),
        ("LLM_MODEL", {"LLM_API_KEY"}, []),
    ],
)
def test_secrets_sent(endpoint: str, elsewhere: set[str], sent: list[str]) -> None:
    assert endpoint_keys.secrets_sent(endpoint, elsewhere) == sent
