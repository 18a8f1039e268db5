"""What llama-cpp-python's server does with the requests an agent sends: each claim that
docs/servers.md makes about it, shown against the real server (0.3.36, SmolLM2-135M).

Prompts are compared by the `usage.prompt_tokens` the server counts, so what a chat
format does to a message (drops it, escapes it, adds the tools) is measured, not guessed.
The end-of-turn token is banned where a reply must run long, so its length is the
server's limit, not the model's choice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage

from deep_research.config.settings import Context
from deep_research.llm import models, slots
from tests.support.llama_server import GENERATION, MODEL_ALIAS, LlamaServer, llama_server

pytestmark = pytest.mark.slow  # starts real model servers

SMALL_CONTEXT = 512  # a reply the server does not limit fills it in seconds
NEVER_STOP = {"2": -100.0}  # SmolLM2's <|im_end|>: banned, the reply runs to its limit
TOOL = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web for pages about a query.",
        "parameters": {
            "type": "object",
            "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
            "required": ["queries"],
        },
    },
}
QUESTION = [{"role": "user", "content": "What is a heat pump?"}]
MARKUP = 'Compare <b>R&D</b> & "COP" <i>data</i> <br/> <a href="x">x</a>' * 3
PLAIN = "Compare research and development and the coefficient of performance data" * 3


@pytest.fixture(scope="module")
def jinja() -> Iterator[LlamaServer]:
    """The default: the GGUF's own template (SmolLM2's ChatML)."""
    with llama_server(n_ctx=SMALL_CONTEXT) as server:
        yield server


@pytest.fixture(scope="module")
def function_calling() -> Iterator[LlamaServer]:
    with llama_server("chatml-function-calling", n_ctx=SMALL_CONTEXT) as server:
        yield server


def chat(server: LlamaServer, timeout: float = 120.0, **body: Any) -> httpx.Response:
    body = {"model": MODEL_ALIAS, "temperature": 0, **body}
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=timeout)


def usage(server: LlamaServer, **body: Any) -> dict[str, int]:
    reply = chat(server, **{"max_tokens": 1, **body})
    assert reply.status_code == 200, reply.text
    return dict(reply.json()["usage"])


def test_it_reads_max_tokens_and_ignores_max_completion_tokens(jinja: LlamaServer) -> None:
    limited = usage(jinja, messages=QUESTION, max_tokens=8, logit_bias=NEVER_STOP)
    assert limited["completion_tokens"] == 8
    body = {"messages": QUESTION, "max_completion_tokens": 8, "logit_bias": NEVER_STOP}
    reply = chat(jinja, **body)
    assert reply.status_code == 200, reply.text
    [choice], counted = reply.json()["choices"], reply.json()["usage"]
    # The reply ran to the end of the context: the limit was not read.
    assert choice["finish_reason"] == "length"
    assert counted["prompt_tokens"] + counted["completion_tokens"] == SMALL_CONTEXT


def test_it_refuses_an_assistant_message_whose_content_is_null(jinja: LlamaServer) -> None:
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "web_search", "arguments": '{"queries": ["heat pumps"]}'}
    history = [
        *QUESTION,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Heat pumps move heat."},
    ]
    refused = chat(jinja, messages=history, max_tokens=1)
    # HTTP 500 and a dump of seven validation errors, one per message type it tried.
    assert refused.status_code == 500, refused.text
    assert "'content'), 'msg': 'Input should be a valid string'" in refused.text
    history[1] = {**history[1], "content": ""}
    assert chat(jinja, messages=history, max_tokens=1).status_code == 200


def test_its_default_template_drops_the_tools(jinja: LlamaServer) -> None:
    bare = usage(jinja, messages=QUESTION)["prompt_tokens"]
    offered = usage(jinja, messages=QUESTION, tools=[TOOL], tool_choice="auto")
    assert offered["prompt_tokens"] == bare


def test_function_calling_offers_tools_only_when_tool_choice_is_sent(
    function_calling: LlamaServer,
) -> None:
    # The format writes the tools into the system message: a request needs one.
    asked = [{"role": "system", "content": "You research."}, *QUESTION]
    bare = usage(function_calling, messages=asked)["prompt_tokens"]
    assert usage(function_calling, messages=asked, tools=[TOOL])["prompt_tokens"] == bare
    chosen = usage(function_calling, messages=asked, tools=[TOOL], tool_choice="auto")
    assert chosen["prompt_tokens"] > bare + 50, "the tools' schema is in the prompt"


def test_function_calling_html_escapes_the_prompt(
    jinja: LlamaServer, function_calling: LlamaServer
) -> None:
    def prompt(server: LlamaServer, text: str) -> int:
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}]
        return usage(server, messages=messages)["prompt_tokens"]

    # The same ChatML turns in both formats: plain text makes the same prompt...
    assert prompt(function_calling, PLAIN) == prompt(jinja, PLAIN)
    # ...markup a longer one, its <, > and & sent as &lt;, &gt; and &amp;.
    assert prompt(function_calling, MARKUP) > prompt(jinja, MARKUP) + 20


def test_gemma_format_drops_system_messages() -> None:
    with llama_server("gemma", n_ctx=SMALL_CONTEXT) as gemma:
        bare = usage(gemma, messages=QUESTION)["prompt_tokens"]
        system = {"role": "system", "content": "You are a research agent. " * 10}
        assert usage(gemma, messages=[system, *QUESTION])["prompt_tokens"] == bare


def test_it_keeps_generating_after_the_client_gives_up(jinja: LlamaServer) -> None:
    body = {"messages": QUESTION, "max_tokens": 300, "logit_bias": NEVER_STOP}
    with pytest.raises(httpx.TimeoutException):
        chat(jinja, timeout=0.5, **body)
    # One slot: the next request is served once the abandoned one is done, and the
    # server's log holds the abandoned reply's whole generation.
    usage(jinja, messages=QUESTION)
    runs = [int(m[2]) for m in GENERATION.finditer(jinja.log.read_text(errors="replace"))]
    assert 299 in runs, runs


def test_a_prompt_longer_than_the_context_is_refused_as_context_length_exceeded(
    jinja: LlamaServer,
) -> None:
    long = [{"role": "user", "content": "heat pump efficiency " * 400}]
    refused = chat(jinja, messages=long, max_tokens=1)
    # OpenAI's code, which the agent answers by halving the longest contents.
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "context_length_exceeded", refused.text


async def test_it_answers_one_request_at_a_time_and_the_agent_finds_that_out(
    jinja: LlamaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/speed.md: the orchestrator's calls alone, then three researchers' at once, sent
    through the agent's own model calls: the server queued them, and the gate saw it."""
    monkeypatch.setenv("LLM_BASE_URL", jinja.base_url)
    monkeypatch.setenv("LLM_MODEL", MODEL_ALIAS)
    monkeypatch.setenv("LLM_MAX_TOKENS", "256")
    context = Context()

    async def ask(lane: str, question: str) -> None:
        async with slots.in_lane(lane):
            await models.role_model(context, "researcher").ask([HumanMessage(question)])

    await ask(slots.MAIN, "What is a heat pump?")
    await ask(slots.MAIN, "What is a gas boiler?")
    topics = ["heat pump efficiency in winter", "heat pump costs", "heat pump noise"]
    await asyncio.gather(*(ask(f"lane-{i}", f"Explain {t}.") for i, t in enumerate(topics)))
    endpoint = models.role_model(context, "researcher").endpoint
    assert slots.serves_one_at_a_time(endpoint)
