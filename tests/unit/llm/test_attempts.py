"""Which failures are retried and in what words; what a reply says about itself."""

from __future__ import annotations

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage

from deep_research.llm import attempts

REQUEST = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def status(code: int, body: object) -> openai.APIStatusError:
    response = httpx.Response(code, request=REQUEST)
    return openai.APIStatusError(f"Error code: {code} - {body}", response=response, body=body)


def timeout_from(cause: Exception) -> openai.APITimeoutError:
    try:
        try:
            raise cause
        except Exception as error:
            raise openai.APITimeoutError(request=REQUEST) from error
    except openai.APITimeoutError as wrapped:
        return wrapped


def test_a_read_time_out_is_a_time_out_and_a_connect_time_out_is_not() -> None:
    assert attempts.timed_out(timeout_from(httpx.ReadTimeout("slow")))
    assert not attempts.timed_out(timeout_from(httpx.ConnectTimeout("nobody")))
    assert attempts.retry_reason(timeout_from(httpx.ReadTimeout("slow"))) == "timeout"


@pytest.mark.parametrize(("code", "reason"), [(500, "server_error"), (429, "server_error")])
def test_a_busy_or_failing_server_is_retried(code: int, reason: str) -> None:
    assert attempts.retry_reason(status(code, {"message": "x"})) == reason


def test_a_refused_request_is_not_retried() -> None:
    assert attempts.retry_reason(status(400, {"message": "bad"})) is None
    assert attempts.retry_reason(ValueError("a bug")) is None


def test_a_long_server_message_is_one_line_of_its_own_words() -> None:
    said = "line one\n" + "x" * 2000
    line = attempts.error_line(status(500, {"message": said}))
    assert line.startswith("HTTP 500: line one x") and "\n" not in line
    assert len(line) <= attempts.ERROR_CHARS + 20 and "Error code" not in line


async def test_retried_tells_each_new_attempt_and_gives_up_after_its_retries() -> None:
    seen: list[tuple[int, str]] = []
    tries = 0

    async def send() -> str:
        nonlocal tries
        tries += 1
        raise status(502, {"message": "bad gateway"})

    with pytest.raises(openai.APIStatusError):
        await attempts.retried(send, 1, lambda n, reason, _: seen.append((n, reason)))
    assert tries == 2 and seen == [(2, "server_error")]


def test_a_reply_cut_at_its_limit_is_seen() -> None:
    assert attempts.is_cut(AIMessage("x", response_metadata={"finish_reason": "length"}))
    assert not attempts.is_cut(AIMessage("x", response_metadata={"finish_reason": "stop"}))
    assert not attempts.is_cut(AIMessage("x"))


def test_a_repair_is_named_only_when_settle_mended_something() -> None:
    call = {"name": "web_search", "args": {"queries": ["q"]}, "id": "c1"}
    text = AIMessage('web_search({"queries": ["q"]})')
    assert "read from the reply's text" in (
        attempts.repairs(text, AIMessage("", tool_calls=[call])) or ""
    )
    native = AIMessage("", tool_calls=[call])
    assert attempts.repairs(native, native) is None


@pytest.mark.parametrize(
    "body",
    [
        {"detail": [{"loc": 5, "msg": "x" * 10_000}]},
        {"detail": [{}]},
        {"detail": "not a list"},
        ["a", "list"],
        None,
        "plain text",
    ],
)
def test_any_error_body_a_server_sends_is_one_bounded_line(body: object) -> None:
    line = attempts.error_line(status(500, body))
    assert line.startswith("HTTP 500: ") and "\n" not in line
    assert len(line) <= attempts.ERROR_CHARS + 20
