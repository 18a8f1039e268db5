"""The scripted world a benchmark run talks to: a model with latency, search, pages.

The model is `tests/support`'s scripted OpenAI-compatible server with a brain that plays a
plausible run (plan, fan out K topics, two search rounds per researcher, cited reports)
and waits as a real server would: `Profile` says how long a reply takes and whether the
server answers requests in parallel or one at a time. Every call is logged with the time
it arrived and the time its reply went out, for the critical-path analysis.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from tests.support.brain import role_of
from tests.support.fakes.openai_server import Reply, ToolCall, message_text
from tests.support.fakes.tavily_server import slugify

LINK = re.compile(r"\]\((https?://[^)\s\"]+)")


@dataclass(frozen=True)
class Profile:
    """How a model server answers: cloud (parallel) or laptop (one request at a time)."""

    name: str
    first_token: float  # seconds before the first token, whatever the prompt
    prompt_rate: float  # prompt tokens per second (0: prompt processing is free)
    output_rate: float  # completion tokens per second
    parallel: bool
    time_scale: float = 1.0  # every wait is multiplied by this (laptop runs compressed)
    # One-slot prompt cache, as mlx_lm.server keeps: the prefix a request shares with the
    # one before is not read again.
    prefix_cache: bool = False

    def seconds(self, prompt: int, completion: int) -> float:
        """Modelled service time of one call, unscaled."""
        reading = prompt / self.prompt_rate if self.prompt_rate else 0.0
        return self.first_token + reading + completion / self.output_rate


PROFILES = {
    "cloud": Profile("cloud", first_token=0.5, prompt_rate=0, output_rate=30, parallel=True),
    # mlx_lm.server on a 16 GB laptop; run 4x faster than life so K=6 takes minutes, not
    # an hour (faster still, a request's own overhead of some 40 ms would stand for far more
    # of the server's time than it is). Its times are reported as measured and as modelled.
    "laptop": Profile(
        "laptop",
        0.0,
        prompt_rate=250,
        output_rate=25,
        parallel=False,
        time_scale=0.25,
        prefix_cache=True,
    ),
}


def tokens(text: str) -> int:
    """The usual estimate: four characters a token."""
    return max(1, len(text) // 4)


@dataclass
class Call:
    role: str
    lane: str  # "main" for clarifier/orchestrator/report writer, the topic for a researcher
    arrived: float  # when the request reached the server (perf_counter)
    started: float  # when the server began on it (later than `arrived` when queued)
    ended: float
    prompt_tokens: int
    processed_tokens: int  # prompt tokens the server read (after its prefix cache)
    completion_tokens: int
    system_chars: int
    prompt_chars: int  # the whole request as `prompt_text` lays it out, the tools' JSON in it
    tool_chars: int  # the tools' JSON alone


def prompt_text(body: dict[str, Any]) -> str:
    """The request as a chat template lays it out: system text, then the tools, then the rest."""
    messages = body.get("messages", [])
    system = [message_text(m) for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    return "\n".join(system) + json.dumps(body.get("tools", [])) + json.dumps(rest)


def _common_prefix(a: str, b: str) -> str:
    return os.path.commonprefix([a, b])


@contextlib.asynccontextmanager
async def _no_lock() -> AsyncIterator[None]:
    yield


def _filler(topic: str, sentences: int) -> str:
    return " ".join(
        f"Finding {i} on {topic}: the sources agree on the trend and disagree on its size."
        for i in range(sentences)
    )


@dataclass
class BenchBrain:
    """Plan with todos, research `topics` in parallel, then write the report."""

    topics: list[str]
    profile: Profile
    calls: list[Call] = field(default_factory=list)
    _serial: asyncio.Lock | None = None
    _last_prompt: str = ""

    async def __call__(self, body: dict[str, Any]) -> Reply:
        arrived = time.perf_counter()
        role = role_of(body)
        reply, lane = self._reply(role, body)
        text = prompt_text(body)
        prompt = tokens(text)
        produced = reply.content + "".join(tc.arguments_text() for tc in reply.tool_calls)
        completion = tokens(produced)
        reply.prompt_tokens, reply.completion_tokens = prompt, completion
        if self._serial is None:
            self._serial = asyncio.Lock()
        async with self._serial if not self.profile.parallel else _no_lock():
            started = time.perf_counter()
            processed = prompt
            if self.profile.prefix_cache:
                processed = max(0, prompt - len(_common_prefix(self._last_prompt, text)) // 4)
                self._last_prompt = text
            wait = self.profile.seconds(processed, completion) * self.profile.time_scale
            await asyncio.sleep(wait)
        system = sum(len(message_text(m)) for m in body["messages"] if m.get("role") == "system")
        self.calls.append(
            Call(
                role,
                lane,
                arrived,
                started,
                time.perf_counter(),
                prompt,
                processed,
                completion,
                system,
                len(text),
                len(json.dumps(body.get("tools", []))),
            )
        )
        return reply

    def _reply(self, role: str, body: dict[str, Any]) -> tuple[Reply, str]:
        messages = body["messages"]
        tool_texts = [message_text(m) for m in messages if m.get("role") == "tool"]
        if role == "researcher":
            topic = next(message_text(m) for m in messages if m.get("role") == "user")
            if len(tool_texts) < 2:
                queries = [f"{topic} {aspect}" for aspect in _aspects(len(tool_texts))]
                return Reply(tool_calls=[ToolCall("web_search", {"queries": queries})]), topic
            links = list(dict.fromkeys(LINK.findall("\n".join(tool_texts))))[:6]
            cited = " ".join(f"[finding {i}]({url})" for i, url in enumerate(links, 1))
            return Reply(content=f"{_filler(topic, 8)}\n\n{cited}"), topic
        if role == "orchestrator":
            if not tool_texts:
                todos = [{"content": t, "status": "pending"} for t in self.topics]
                return Reply(tool_calls=[ToolCall("write_todos", {"todos": todos})]), "main"
            if all(text.startswith("Plan saved") for text in tool_texts):
                calls = [ToolCall("research", {"topic": t}) for t in self.topics]
                return Reply(tool_calls=calls), "main"
        if role in ("report_section", "report_frame"):
            return self._part(role, messages)
        if role == "clarifier":
            decision = {"need_clarification": False, "questions": [], "verification": "ok"}
            return Reply(content=json.dumps(decision)), "main"
        every = "\n".join(message_text(m) for m in messages)
        links = list(dict.fromkeys(LINK.findall(every)))[:12]
        cited = " ".join(f"[source {i}]({url})" for i, url in enumerate(links, 1))
        report = f"# Report\n\n{_filler('the question', 16)}\n\n## Findings\n\n{cited}\n"
        return Reply(content=report), "main"

    def _part(self, role: str, messages: list[dict[str, Any]]) -> tuple[Reply, str]:
        """A section (its share of the report's 12 filler sentences and 12 links, from its
        own findings) or the frame (title, opening, conclusion: 4 sentences)."""
        k = max(1, len(self.topics))
        if role == "report_frame":
            text = f"# Report\n\n{_filler('the question', 2)}\n\n## Conclusion\n\n"
            return Reply(content=text + _filler("the answer", 2)), "report:frame"
        user = "\n".join(message_text(m) for m in messages if m.get("role") == "user")
        topic = next((t for t in self.topics if f"Write the section on: {t}\n" in user), "topic")
        links = list(dict.fromkeys(LINK.findall(user)))[: max(2, 12 // k)]
        cited = " ".join(f"[source {i}]({url})" for i, url in enumerate(links, 1))
        text = f"## {topic}\n\n{_filler(topic, max(2, round(12 / k)))}\n\n{cited}\n"
        return Reply(content=text), f"report:{topic}"


def _aspects(round_: int) -> list[str]:
    return ["overview", "figures"] if round_ == 0 else ["costs", "recent studies"]


def serve(profile_name: str, topics: list[str], conn: Connection) -> None:
    """The whole world, in the process this runs in: sends its URLs on `conn`, serves until
    told to stop, then sends the model's call log and the search and fetch counts.

    The call log's times are `time.perf_counter()`, which on Linux is CLOCK_MONOTONIC, one
    clock for every process, so they line up with the run's own."""
    from tests.support.fakes.openai_server import ScriptedOpenAIServer
    from tests.support.fakes.page_server import PageServer
    from tests.support.fakes.tavily_server import FakeTavilyServer

    profile = PROFILES[profile_name]
    brain = BenchBrain(topics, profile)
    with (
        PageServer(latency=0.05 * profile.time_scale) as pages,
        FakeTavilyServer(lambda q, n: corpus_for(pages.url)(q, n)) as tavily,
        ScriptedOpenAIServer(brain) as llm,
    ):
        _first_requests(pages.url, tavily.url, llm.base_url)
        tavily.reset()  # the warm-up query is not one of the run's searches
        conn.send({"llm": llm.base_url, "tavily": tavily.url, "pages": pages.url})
        conn.recv()
        conn.send(
            {
                "calls": [asdict(call) for call in brain.calls],
                "searches": len(tavily.requests),
                "fetches": len([path for path in pages.requests if path.startswith("/news/")]),
            }
        )


def _first_requests(pages: str, tavily: str, llm: str) -> None:
    """One request to each server before the run: a real search API or model server is
    warm when a run begins; these are not, until their handlers first run."""
    import httpx

    with httpx.Client(timeout=30) as client:
        client.get(f"{pages}/article/warm-up")  # /news/ pages are the ones counted
        client.post(
            f"{tavily}/search",
            json={"query": "warm up", "max_results": 1},
            headers={"Authorization": "Bearer tvly-bench"},
        )
        client.get(f"{llm}/models")


def corpus_for(pages_url: str) -> Any:
    """Search results for the fake Tavily API, on local news pages.

    The first result is the query's own; the others belong to the topic (the query's first
    four words), so a researcher's second round finds pages its first round read, as real
    searches do.
    """

    def corpus(query: str, max_results: int) -> list[dict[str, Any]]:
        own, shared = slugify(query), slugify(" ".join(query.split()[:4]))
        return [
            {
                "url": f"{pages_url}/news/{own if i == 0 else shared}-{i}",
                "title": f"{query}: source {i + 1}",
                "content": f"Source {i + 1} on {query}: figures and background.",
                "score": round(0.9 - 0.1 * i, 2),
            }
            for i in range(max_results)
        ]

    return corpus


TOPIC_POOL = [
    "heat pump efficiency in cold climates",
    "heat pump installation costs",
    "heat pump subsidies in Europe",
    "heat pump noise and siting rules",
    "heat pump refrigerants and their climate impact",
    "heat pump performance in old houses",
]
