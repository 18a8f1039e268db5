"""The auth hook: the bearer token compared whole, in either header shape; none set, any."""

from __future__ import annotations

import pytest
from langgraph_sdk import Auth

from deep_research.config.agent_server import TOKEN_ENV
from deep_research.server.auth import IDENTITY, authenticate, bearer_matches, header

TOKEN = "secret-token-0123456789"


@pytest.mark.parametrize(
    ("authorization", "matches"),
    [
        (f"Bearer {TOKEN}", True),
        (f"bearer {TOKEN}", True),
        (f"  Bearer   {TOKEN}  ", True),
        (TOKEN, False),
        (f"Basic {TOKEN}", False),
        (f"Bearer {TOKEN}x", False),
        (f"Bearer {TOKEN[:-1]}", False),
        ("Bearer ", False),
        ("", False),
        (None, False),
        ("Bearer " + "é" * 30, False),
        ("Bearer " + "x" * 100_000, False),
    ],
)
def test_only_the_whole_token_as_a_bearer_matches(authorization: str | None, matches: bool) -> None:
    assert bearer_matches(authorization, TOKEN) is matches


def test_a_header_is_found_in_str_or_bytes_mappings() -> None:
    assert header({"Authorization": "Bearer x"}, "authorization") == "Bearer x"
    assert header({b"authorization": b"Bearer y"}, "authorization") == "Bearer y"
    assert header({"x-other": "1"}, "authorization") is None


async def test_with_a_token_a_request_without_it_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    for headers in ({}, {"authorization": "Bearer nope-0123456789abc"}):
        with pytest.raises(Auth.exceptions.HTTPException) as raised:
            await authenticate(headers)
        assert raised.value.status_code == 401 and TOKEN not in str(raised.value.detail)
    user = await authenticate({"authorization": f"Bearer {TOKEN}"})
    assert user["identity"] == IDENTITY and user["is_authenticated"] is True


async def test_without_a_token_every_request_is_the_one_local_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    user = await authenticate({})
    assert user["identity"] == IDENTITY and user["is_authenticated"] is False
