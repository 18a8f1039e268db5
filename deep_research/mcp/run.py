"""One tool call as one run on the Agent Server that serves it, through the SDK's loopback.

The run goes through the server's own queue and checkpointer (so it shows in Studio and
counts against `--n-jobs-per-worker`), not a second copy of the graph in this handler.
`langgraph dev` answers the SDK in process; a distributed server (Aegra, whose launcher
sets `DEEP_RESEARCH_AGENT_URL` to the instance itself) is asked over HTTP, with its token:
httpx's in-process transport would hold the whole event stream until the run ended.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import APIStatusError

from deep_research.config.agent_server import agent_url, server_token
from deep_research.config.names import ConfigError
from deep_research.config.settings import follow_up_settings
from deep_research.errors import DeepResearchError
from deep_research.mcp.progress import SAID_ONCE, progress_message
from deep_research.text import secrets

ASSISTANT = "deep_research"  # the graph id in langgraph.json
ERROR_CHARS = 600  # of a run's error message, in the tool error
# A run's events can be minutes apart (one long model call), so no read deadline; a run
# that stalls is bounded by LLM_CALL_DEADLINE inside the graph.
TIMEOUT = (10.0, None, 30.0, 10.0)  # connect, read, write, pool

SOURCE = "mcp"  # the metadata of the threads this tool creates: the only ones it follows up
KEPT = ("max_searches_per_run", "search_provider")  # a thread's settings its follow-ups keep

ReportProgress = Callable[[float, float | None, str | None], Awaitable[None]]


class RunFailed(DeepResearchError, RuntimeError):
    """The run stopped with an error; the message is redacted, one paragraph."""


@dataclass(frozen=True)
class Answer:
    """What a call returns: the report (or the questions), and the run's thread and final
    values, which an exported file's footer draws on."""

    text: str
    thread_id: str
    values: Mapping[str, Any] = field(default_factory=dict)


async def research(
    question: str,
    context: dict[str, Any],
    *,
    clarify: bool,
    progress: ReportProgress,
    thread: str | None = None,
) -> Answer:
    """Run the graph on `question`; the report, or with `clarify` the questions as text.
    With `thread` (one a call of this tool returned), `question` is a follow-up on it."""
    client = agent_client()
    if thread is None:
        # The caps it was asked with stay the thread's: a follow-up keeps within them.
        kept = {key: context[key] for key in KEPT if key in context}
        created = await client.threads.create(metadata={"source": SOURCE, **kept})
        thread_id = created["thread_id"]
    else:
        thread_id, context = thread, await follow_up_context(client, thread, context)
    # With `clarify`, stop before planning: the questions are the whole answer.
    stop = ["orchestrate"] if clarify else None
    first: dict[str, Any] = {"messages": [{"role": "user", "content": question}]}
    try:
        await _stream(client, thread_id, first, context, stop, progress)
    except APIStatusError as error:
        if error.status_code != 409:  # 409: the server refuses a second run on a busy thread
            raise
        raise RunFailed(
            f"Thread {thread_id!r} is running another question: try again when it finishes."
        ) from None
    state = await client.threads.get_state(thread_id)
    if clarify:
        await client.threads.delete(thread_id)  # nothing to resume: the caller asks again
        return Answer(questions_text(state["interrupts"]), thread_id)
    values = state["values"] if isinstance(state["values"], Mapping) else {}
    report = values.get("final_report")
    if not isinstance(report, str) or not report.strip():
        paused = " (it paused for an answer)" if state["interrupts"] else ""
        raise RunFailed(f"The run ended without a report{paused}; thread {thread_id}.")
    return Answer(report, thread_id, values)


async def _stream(
    client: LangGraphClient,
    thread_id: str,
    first: dict[str, Any],
    context: dict[str, Any],
    stop: list[str] | None,
    progress: ReportProgress,
) -> None:
    """One run of the graph on the thread, its progress reported as it comes."""
    done = 0
    said: set[object] = set()  # the events a run says once (`relevance_off`: a search each)
    async for part in client.runs.stream(
        thread_id,
        ASSISTANT,
        input=first,
        context=context,
        stream_mode="custom",
        stream_subgraphs=True,
        interrupt_before=stop,
        durability="sync",  # a model call's reservation is on disk before the call is sent
        on_disconnect="cancel",  # a cancelled tool call stops its research
    ):
        if part.event == "error":
            raise RunFailed(error_text(part.data))
        if part.event.split("|")[0] == "custom" and isinstance(part.data, Mapping):
            name = part.data.get("event")
            if name in said:
                continue
            if (message := progress_message(part.data)) is not None:
                if name in SAID_ONCE:
                    said.add(name)
                done += 1
                await progress(done, None, message)


async def follow_up_context(
    client: LangGraphClient, thread: str, context: dict[str, Any]
) -> dict[str, Any]:
    """The context of a follow-up on `thread`: the thread's own cap and search provider
    under the ones given now. `RunFailed` unless it is a finished thread of this tool."""
    unknown = f"No research thread {thread!r}: pass the `thread` a deep_research call returned."
    try:
        found = await client.threads.get(thread)
    except APIStatusError as error:
        if 400 <= error.status_code < 500:  # not found, or not a thread id at all
            raise RunFailed(unknown) from None
        raise
    metadata = found.get("metadata") or {}
    if metadata.get("source") != SOURCE:  # another client's thread is not this tool's to read
        raise RunFailed(unknown)
    state = await client.threads.get_state(thread)
    values = state["values"] if isinstance(state["values"], Mapping) else {}
    if state["next"] or state["interrupts"] or not values.get("final_report"):
        raise RunFailed(
            f"Thread {thread!r} has not finished its research (or is still running): a "
            "follow-up asks about a finished one. Wait for it, or leave `thread` unset."
        )
    try:  # never above the thread's search cap, nor off its library-only search
        return follow_up_settings({key: metadata[key] for key in KEPT if key in metadata}, context)
    except ConfigError as refused:
        raise RunFailed(f"Thread {thread!r}: {refused}") from None


def agent_client() -> LangGraphClient:
    """The SDK's client of the server this tool runs in: in process, or at its own URL."""
    url = agent_url()
    if url is None:
        return get_client(timeout=TIMEOUT)  # langgraph dev's in-process loopback
    token = server_token()
    headers = {"Authorization": f"Bearer {token}"} if token else None
    # api_key=None: no LANGSMITH_API_KEY from the environment goes to the server.
    return get_client(url=url, api_key=None, headers=headers, timeout=TIMEOUT)


def error_text(data: Any) -> str:
    """A run's error event as one redacted line: `Type: message`."""
    if isinstance(data, Mapping):
        kind, message = str(data.get("error") or "Error"), str(data.get("message") or "")
    else:
        kind, message = "Error", str(data)
    text = f"{kind}: {message}" if message else kind
    return secrets.redact(text)[:ERROR_CHARS]


def questions_text(interrupts: Any) -> str:
    """The clarifier's questions, numbered, with what to do next; or that none are needed."""
    for item in interrupts or []:
        value = item.get("value") if isinstance(item, Mapping) else None
        questions = value.get("questions") if isinstance(value, Mapping) else None
        if isinstance(questions, list) and questions:
            asked = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))
            return (
                f"Ask the user these questions before researching:\n\n{asked}\n\n"
                "Then call deep_research again with clarify false and the question "
                "rewritten to include their answers."
            )
    return (
        "No clarifying questions are needed: call deep_research again with clarify false "
        "to research the question as it is."
    )
