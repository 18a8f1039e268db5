"""`cli.doctor.model_checks`, in process: which models are probed and how a reply is read.

Whole probes against the fake OpenAI, Anthropic and Ollama servers are in
tests/integration/test_doctor*.py; these call the grouping and the classifiers directly.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage

from deep_research.cli.doctor import model_checks as mc
from deep_research.cli.doctor.model_checks import MAX_LISTED, ModelTarget
from deep_research.config.settings import load_context
from tests.support.fakes.http_server import closed_port

LOCAL = ModelTarget("local:m", ("clarifier", "researcher"))
CLOUD = ModelTarget("openai:gpt", ("orchestrator",))


def test_roles_sharing_a_spec_are_one_target_in_role_order() -> None:
    context = load_context({})
    shared = load_context({"orchestrator_model": "local:big"})
    assert [t.roles for t in mc.model_targets(context)] == [mc.ROLES]
    targets = mc.model_targets(shared)
    assert [t.spec for t in targets] == [context.clarifier_model, "local:big"]
    assert targets[1].roles == ("orchestrator",) and len(targets[0].roles) == len(mc.ROLES) - 1
    assert LOCAL.label("tool calls") == "tool calls (clarifier, researcher)"


def test_a_served_name_passes_and_a_missing_one_lists_a_few_served() -> None:
    assert mc._name_check(LOCAL, "m", ["m"]).status == "ok"
    served = [f"model-{n}" for n in range(MAX_LISTED + 2)]
    check = mc._name_check(LOCAL, "m", served)
    assert check.status == "warn" and check.detail.endswith(f"model-{MAX_LISTED - 1}, …")
    assert "LLM_MODEL" in check.fix and "LLM_MODEL" not in mc._name_check(CLOUD, "m", []).fix
    assert mc._name_check(CLOUD, "m", []).detail.endswith("served models: none")


@pytest.mark.parametrize(
    "metadata",
    [{"finish_reason": "length"}, {"stop_reason": "max_tokens"}, {"done_reason": "length"}],
)
def test_a_reply_cut_off_in_any_providers_words_fails(metadata: dict[str, str]) -> None:
    reply = AIMessage("", response_metadata=metadata)
    assert mc.classify(reply, "l", LOCAL).status == "fail"


def test_each_kind_of_reply_is_told_apart() -> None:
    native = AIMessage("", tool_calls=[{"name": "ping", "args": {"word": "x"}, "id": "1"}])
    written = AIMessage('<tool_call>{"name": "ping", "arguments": {"word": "x"}}</tool_call>')
    assert mc.classify(native, "l", LOCAL).detail == "native tool calls"
    assert "written as text" in mc.classify(written, "l", LOCAL).detail
    assert mc.classify(AIMessage("<think>hm</think>"), "l", LOCAL).detail.startswith("empty")
    text = mc.classify(AIMessage("<think>x</think>pong sk-proj-abcdefghijklmnop1234"), "l", LOCAL)
    assert text.status == "warn" and "'pong " in text.detail and "abcdefgh" not in text.detail
    assert "--jinja" in text.fix and "--jinja" not in mc.classify(AIMessage("t"), "l", CLOUD).fix


def test_the_reply_to_a_second_ask_says_so() -> None:
    native = AIMessage("", tool_calls=[{"name": "ping", "args": {"word": "x"}, "id": "1"}])
    assert mc.classify(native, "l", LOCAL, again=True).detail == (
        "native tool calls (when asked again, as a run would)"
    )
    empty = mc.classify(AIMessage(""), "l", LOCAL, again=True)
    assert (empty.status, empty.detail.startswith("empty reply, also after the nudge")) == (
        "warn",
        True,
    )
    assert mc.classify(AIMessage("no"), "l", LOCAL, again=True).detail.endswith("'no', twice")
    assert "twice" not in mc.classify(AIMessage("no"), "l", LOCAL).detail


def status_error(status: int, message: str) -> openai.APIStatusError:
    response = httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    return openai.APIStatusError(message, response=response, body=None)


def test_each_status_error_names_its_fix() -> None:
    assert (
        mc._status_fix(status_error(500, "Jinja templates are off"))
        == "start llama-server with --jinja"
    )
    assert "LLM_API_KEY" in mc._status_fix(status_error(401, "no"))
    assert "LLM_MODEL" in mc._status_fix(status_error(404, "no"))
    assert mc._status_fix(status_error(500, "no")) == "check the server log"


class _Raising:
    def __init__(self, error: Exception | None = None, sleep: float = 0) -> None:
        self.error, self.sleep = error, sleep

    def bind_tools(self, tools: list[Any]) -> _Raising:
        return self

    async def ainvoke(self, messages: list[Any]) -> AIMessage:
        await asyncio.sleep(self.sleep)
        if self.error:
            raise self.error
        return AIMessage("", tool_calls=[{"name": "ping", "args": {"word": "x"}, "id": "1"}])


async def test_a_probe_reads_its_deadline_and_other_clients_errors() -> None:
    late = await mc.probe_tool_call(_Raising(sleep=1), LOCAL, "http://here", 0.05)
    assert late.status == "fail" and "no reply within 0.05 s" in late.detail
    # A key that straddles the cut: redacted first, or half of it would be left behind.
    odd = ValueError("said\n" + "x" * 186 + " sk-proj-abcdefghijklmnop1234")
    other = await mc.probe_tool_call(_Raising(odd), CLOUD, "http://here", 1)
    assert other.detail.startswith("http://here: ValueError: said xxx")
    assert "sk-proj" not in other.detail
    assert (await mc.probe_tool_call(_Raising(), LOCAL, "http://here", 1)).status == "ok"


@pytest.mark.parametrize(
    ("platform", "server", "absent"),
    [("linux", "llama-server", "mlx_lm.server"), ("darwin", "mlx_lm.server", "llama-server")],
)
async def test_a_local_server_that_is_down_says_how_to_start_one_on_its_port(
    platform: str, server: str, absent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    port = closed_port()
    base = f"http://127.0.0.1:{port}/v1"
    check, served = await mc._served_models(LOCAL, base, "", 2.0)
    assert (check.status, served) == ("fail", None)
    assert f"`{server} " in check.fix and f"--port {port}`" in check.fix, check.fix
    assert absent not in check.fix and "8080" not in check.fix
    assert check.detail.startswith("unreachable: http://127.0.0.1:")
    cloud, _ = await mc._served_models(CLOUD, base, "", 2.0)
    assert "OPENAI_BASE_URL" in cloud.fix
