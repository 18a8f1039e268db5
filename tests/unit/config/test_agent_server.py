"""The two variables of a distributed server instance: its token and its own address."""

from __future__ import annotations

import pytest

from deep_research.config.agent_server import (
    AGENT_URL_ENV,
    TOKEN_ENV,
    agent_url,
    is_loopback,
    server_token,
    token_problem,
)
from deep_research.text import secrets


def test_a_blank_token_is_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "   ")
    assert server_token() is None
    monkeypatch.setenv(TOKEN_ENV, " abc0123456789xyz ")
    assert server_token() == "abc0123456789xyz"


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        (None, None),
        ("a" * 16, None),
        ("a" * 15, "at least 16 characters"),
        ("é" * 20, "printable ASCII"),
        ("abc 0123456789xyz", "printable ASCII"),
        ("abc\n0123456789xyz", "printable ASCII"),
    ],
)
def test_a_token_that_cannot_guard_a_server_is_named(
    token: str | None, problem: str | None
) -> None:
    found = token_problem(token)
    assert (found is None) if problem is None else (found is not None and problem in found)
    if found is not None and token is not None:
        assert token not in found


def test_the_agent_url_is_unset_for_langgraph_dev(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AGENT_URL_ENV, raising=False)
    assert agent_url() is None
    monkeypatch.setenv(AGENT_URL_ENV, "http://127.0.0.1:2026")
    assert agent_url() == "http://127.0.0.1:2026"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
        ("localhost.evil.example", False),
        ("", False),
    ],
)
def test_only_this_machine_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_token_is_redacted_like_every_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "tok-0123456789abcdef")
    assert "tok-0123456789abcdef" not in secrets.redact("sent tok-0123456789abcdef")
