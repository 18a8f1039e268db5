"""Each role's completion limit fits its job: what a budget counts a call at, and sends."""

from __future__ import annotations

import pytest

from deep_research.config.settings import Context
from deep_research.llm.models import role_model

GPT_41 = {f"{role}_model": "openai:gpt-4.1" for role in ("clarifier", "orchestrator", "researcher")}
# genai-prices' table lists Claude Sonnet 4.5; langchain-anthropic asks it for 64,000 tokens.
SONNET = {"researcher_model": "anthropic:claude-sonnet-4-5"}


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.delenv("LLM_MAX_TOKENS", raising=False)


def limits(context: Context) -> dict[str, int | None]:
    roles = ("clarifier", "researcher", "orchestrator")
    return {role: role_model(context, role).max_tokens for role in roles}


def test_a_priced_role_is_counted_at_its_job_and_the_orchestrator_at_the_report() -> None:
    # The orchestrator's reply without tool calls is the final report: it keeps it all.
    assert limits(Context(**GPT_41)) == {
        "clarifier": 1024,
        "researcher": 4096,
        "orchestrator": 8192,
    }


def test_a_lower_llm_max_tokens_wins_over_every_role(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_MAX_TOKENS", "2000")
    assert limits(Context(**GPT_41)) == {
        "clarifier": 1024,
        "researcher": 2000,
        "orchestrator": 2000,
    }
    monkeypatch.setenv("LLM_MAX_TOKENS", "16000")  # higher: the report may be longer, no more
    assert limits(Context(**GPT_41)) == {
        "clarifier": 1024,
        "researcher": 4096,
        "orchestrator": 16000,
    }


def test_a_client_limit_above_the_role_is_cut_to_it() -> None:
    model = role_model(Context(**SONNET), "researcher")
    assert model.max_tokens == 4096, "not the 64,000 langchain-anthropic asks for by default"


def test_a_local_model_is_sized_for_its_role_so_no_reply_fills_an_8k_context() -> None:
    # Room for a thinking model's `<think>` before the clarifier's JSON; never the whole
    # context (a runaway tool argument ran 7,049 tokens on an 8k server).
    assert limits(Context()) == {"clarifier": 2048, "researcher": 4096, "orchestrator": 4096}


def test_a_lower_llm_max_tokens_wins_for_a_local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_MAX_TOKENS", "1000")
    assert limits(Context()) == {"clarifier": 1000, "researcher": 1000, "orchestrator": 1000}


def test_the_report_length_sizes_the_report_call_and_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Local models are sent it always, priced ones under a budget; never above
    LLM_MAX_TOKENS. Planning calls are never sized below the role's usual limit (a
    thinking model's plan is not cut at `brief`'s 2,048); `standard` keeps it for all."""
    for length in ("brief", "detailed"):  # planning: as `standard`
        assert limits(Context(report_length=length)) == limits(Context())
        assert limits(Context(report_length=length, **GPT_41)) == limits(Context(**GPT_41))
    # A local `detailed` report stays within the role's 4,096 (LLM_MAX_TOKENS' default is
    # the whole 8k context); a priced one may use LLM_MAX_TOKENS.
    for length, local, priced in (("brief", 2048, 2048), ("detailed", 4096, 8192)):
        writer = role_model(Context(report_length=length), "orchestrator", report=True)
        assert writer.max_tokens == local
        assert getattr(writer.model, "max_tokens", None) == local  # ChatOpenAI's name for it
        priced_writer = role_model(Context(report_length=length, **GPT_41), "orchestrator", True)
        assert priced_writer.max_tokens == priced
    monkeypatch.setenv("LLM_MAX_TOKENS", "6000")  # set: a local detailed report may fill it
    assert role_model(Context(report_length="detailed"), "orchestrator", True).max_tokens == 6000
    assert role_model(Context(report_length="brief"), "orchestrator", True).max_tokens == 2048
    assert role_model(Context(report_length="brief"), "orchestrator").max_tokens == 4096
    # A planning reply without tool calls is the report too: `detailed` raises its limit.
    assert role_model(Context(report_length="detailed"), "orchestrator").max_tokens == 6000
