"""One tool call as one Agent Server run, with the SDK client replaced in process: what it
asks the server, what it reports as progress, and what it returns or raises."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from deep_research.mcp import run

STARTED = {"event": "research_started", "id": "r", "topic": "heat pumps"}


class Client:
    """The parts of langgraph_sdk's client `research` uses, scripted."""

    def __init__(self, parts: list[tuple[str, Any]], state: dict[str, Any]) -> None:
        self.parts, self.state = parts, state
        self.streamed: dict[str, Any] = {}
        self.deleted: list[str] = []
        self.threads = SimpleNamespace(
            create=self.create, get_state=self.get_state, delete=self.delete
        )
        self.runs = SimpleNamespace(stream=self.stream)

    async def create(self, metadata: dict[str, Any]) -> dict[str, Any]:
        return {"thread_id": "t-1"}

    async def stream(self, thread_id: str, assistant: str, **kwargs: Any) -> AsyncIterator[Any]:
        self.streamed = {"thread_id": thread_id, "assistant": assistant, **kwargs}
        for event, data in self.parts:
            yield SimpleNamespace(event=event, data=data)

    async def get_state(self, thread_id: str) -> dict[str, Any]:
        return self.state

    async def delete(self, thread_id: str) -> None:
        self.deleted.append(thread_id)


def serve(monkeypatch: pytest.MonkeyPatch, parts: list[tuple[str, Any]], **state: Any) -> Client:
    client = Client(parts, {"values": {}, "interrupts": [], **state})
    monkeypatch.setattr(run, "get_client", lambda timeout: client)
    return client


async def research(clarify: bool = False) -> tuple[str, list[tuple[float, str | None]]]:
    seen: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    answer = await run.research(
        "Q?", {"max_searches_per_run": 2}, clarify=clarify, progress=progress
    )
    assert answer.thread_id == "t-1"
    return answer.text, seen


async def test_the_report_comes_back_and_shown_events_count_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parts = [("custom", {"event": "todos", "todos": []}), ("custom|research:1", STARTED)]
    parts.append(("metadata", STARTED))  # not a progress event, whatever it holds
    client = serve(monkeypatch, parts, values={"final_report": "# Report"})
    report, seen = await research()
    assert report == "# Report" and seen == [(1, "Researching: heat pumps")]
    asked = client.streamed
    assert (asked["thread_id"], asked["assistant"], asked["interrupt_before"]) == (
        "t-1",
        run.ASSISTANT,
        None,
    )
    assert asked["context"] == {"max_searches_per_run": 2} and asked["on_disconnect"] == "cancel"
    assert asked["input"]["messages"] == [{"role": "user", "content": "Q?"}]


async def test_with_clarify_the_run_stops_before_planning_and_its_thread_goes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = [{"value": {"questions": ["Which country?"]}}]
    client = serve(monkeypatch, [], interrupts=asked)
    text, _ = await research(clarify=True)
    assert client.streamed["interrupt_before"] == ["orchestrate"] and client.deleted == ["t-1"]
    assert text == run.questions_text(asked)


async def test_an_error_event_is_a_run_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    serve(monkeypatch, [("error", {"error": "ValueError", "message": "bad"})])
    with pytest.raises(run.RunFailed, match="^ValueError: bad$"):
        await research()


@pytest.mark.parametrize(
    ("interrupts", "said"), [([], "without a report; "), ([{"value": 1}], "paused")]
)
async def test_a_run_without_a_report_is_a_failure_naming_its_thread(
    monkeypatch: pytest.MonkeyPatch, interrupts: list[Any], said: str
) -> None:
    serve(monkeypatch, [], values={"final_report": "  "}, interrupts=interrupts)
    with pytest.raises(run.RunFailed, match=f"{said}.*thread t-1"):
        await research()


def test_a_run_error_that_is_not_a_mapping_is_still_one_line() -> None:
    assert run.error_text("plain text") == "Error: plain text"
    assert run.error_text({}) == "Error"


def test_the_client_is_langgraph_devs_loopback_unless_an_agent_url_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(run, "get_client", lambda **kwargs: asked.append(kwargs))
    monkeypatch.delenv("DEEP_RESEARCH_AGENT_URL", raising=False)
    run.agent_client()
    assert asked.pop() == {"timeout": run.TIMEOUT}  # the SDK's in-process loopback
    monkeypatch.setenv("DEEP_RESEARCH_AGENT_URL", "http://127.0.0.1:2026")
    monkeypatch.setenv("DEEP_RESEARCH_SERVER_TOKEN", "secret-token-0123456789")
    run.agent_client()
    assert asked.pop() == {
        "url": "http://127.0.0.1:2026",
        "api_key": None,  # no LANGSMITH_API_KEY from the environment goes to the server
        "headers": {"Authorization": "Bearer secret-token-0123456789"},
        "timeout": run.TIMEOUT,
    }
    monkeypatch.delenv("DEEP_RESEARCH_SERVER_TOKEN")
    run.agent_client()
    assert asked.pop()["headers"] is None


def following(client: Client, metadata: dict[str, Any] | None) -> None:
    """`client` knows one thread, "t-0", created with `metadata` (None: no thread at all)."""
    from langgraph_sdk.errors import NotFoundError

    async def get(thread_id: str) -> dict[str, Any]:
        if metadata is None or thread_id != "t-0":
            import httpx

            response = httpx.Response(404, request=httpx.Request("GET", "http://x/threads"))
            raise NotFoundError("no thread", response=response, body=None)
        return {"thread_id": "t-0", "metadata": metadata}

    client.threads.get = get


async def test_a_follow_up_runs_on_its_thread_with_the_threads_own_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caps of the call that made the thread stay its follow-ups' unless given (#39)."""
    client = serve(monkeypatch, [], values={"final_report": "# R"}, next=[])
    following(client, {"source": "mcp", "max_searches_per_run": 3, "search_provider": "ddgs"})

    async def progress(done: float, total: float | None, message: str | None) -> None: ...

    given = {"allow_clarification": False, "search_provider": "tavily"}
    answer = await run.research("Q2?", given, clarify=False, progress=progress, thread="t-0")
    assert answer.thread_id == "t-0" and client.streamed["thread_id"] == "t-0"
    assert client.streamed["context"] == {
        "max_searches_per_run": 3,
        "search_provider": "tavily",
        "allow_clarification": False,
    }


@pytest.mark.parametrize(
    ("given", "cap"), [({"max_searches_per_run": 50}, 3), ({"max_searches_per_run": 2}, 2), ({}, 3)]
)
async def test_a_follow_up_never_lifts_the_threads_search_cap(
    monkeypatch: pytest.MonkeyPatch, given: dict[str, Any], cap: int
) -> None:
    client = serve(monkeypatch, [], values={"final_report": "# R"}, next=[])
    following(client, {"source": "mcp", "max_searches_per_run": 3})

    async def progress(done: float, total: float | None, message: str | None) -> None: ...

    await run.research("Q2?", given, clarify=False, progress=progress, thread="t-0")
    assert client.streamed["context"]["max_searches_per_run"] == cap


async def test_a_follow_up_on_a_library_only_thread_refuses_another_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = serve(monkeypatch, [], values={"final_report": "# R"}, next=[])
    following(client, {"source": "mcp", "search_provider": "library"})

    async def progress(done: float, total: float | None, message: str | None) -> None: ...

    with pytest.raises(run.RunFailed, match="searches only your own library"):
        given = {"search_provider": "ddgs"}
        await run.research("Q2?", given, clarify=False, progress=progress, thread="t-0")
    assert client.streamed == {}, "nothing ran"
    await run.research("Q2?", {}, clarify=False, progress=progress, thread="t-0")
    assert client.streamed["context"]["search_provider"] == "library"


@pytest.mark.parametrize(
    ("metadata", "state", "says"),
    [
        (None, {"values": {"final_report": "# R"}}, "No research thread 't-0'"),
        ({"source": "studio"}, {"values": {"final_report": "# R"}}, "No research thread"),
        ({"source": "mcp"}, {"values": {}}, "has not finished"),
        ({"source": "mcp"}, {"values": {"final_report": "# R"}, "next": ["x"]}, "not finished"),
    ],
)
async def test_a_follow_up_needs_a_finished_thread_of_this_tool(
    monkeypatch: pytest.MonkeyPatch, metadata: dict[str, Any] | None, state: Any, says: str
) -> None:
    client = serve(monkeypatch, [], **{"next": [], **state})
    following(client, metadata)

    async def progress(done: float, total: float | None, message: str | None) -> None: ...

    with pytest.raises(run.RunFailed, match=says):
        await run.research("Q2?", {}, clarify=False, progress=progress, thread="t-0")
    assert client.streamed == {}, "nothing ran"


@pytest.mark.parametrize("status", [409, 500])
async def test_a_follow_up_on_a_busy_thread_is_told_to_try_again(
    monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    """The server refuses a second run on a thread that is running one (HTTP 409): the
    caller is told so, not handed the SDK's raw error; other errors stay as they are."""
    import httpx
    from langgraph_sdk.errors import APIStatusError

    client = serve(monkeypatch, [], values={"final_report": "# R"}, next=[])
    following(client, {"source": "mcp"})

    async def busy(thread_id: str, assistant: str, **kwargs: Any) -> AsyncIterator[Any]:
        response = httpx.Response(status, request=httpx.Request("POST", "http://x/runs/stream"))
        raise APIStatusError("refused", response=response, body=None)
        yield  # an async generator, as the SDK's stream is

    client.runs.stream = busy

    async def progress(done: float, total: float | None, message: str | None) -> None: ...

    expected = run.RunFailed if status == 409 else APIStatusError
    with pytest.raises(expected) as raised:
        await run.research("Q2?", {}, clarify=False, progress=progress, thread="t-0")
    if status == 409:
        assert str(raised.value) == (
            "Thread 't-0' is running another question: try again when it finishes."
        )
