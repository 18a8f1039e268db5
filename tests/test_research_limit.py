"""How many research calls of one orchestrator reply run: `max_research_calls_per_reply`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage

from tests.conftest import ScriptedSearch
from tests.scripted_model import ScriptedChatModel
from tests.test_graph_unit import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    run,
    script_for,
    tool_results,
)


async def test_a_reply_with_2000_research_calls_runs_six_and_answers_the_rest_with_the_limit(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    topics = [f"topic number {i}" for i in range(2000)]
    model = use_script(script_for(orchestrator_fanning_out(*topics)))
    out = await run(NO_CLARIFY)
    researchers = [m for m, tools in model.calls if "web_search" in tools and not tool_results(m)]
    assert sorted(str(m[1].content) for m in researchers) == sorted(topics[:6])
    assert len(scripted_search.queries) == 6
    answers = tool_results(out["messages"])
    assert Counter(m.tool_call_id for m in answers) == Counter(f"r{i}" for i in range(2000)), (
        "every call gets exactly one answer"
    )
    orchestrator_requests = [m for m, tools in model.calls if "research" in tools]
    seen = tool_results(orchestrator_requests[1])
    refused = [m for m in seen if m.status == "error"]
    assert len(refused) == 1994
    assert all(
        "at most 6 research calls (max_research_calls_per_reply)" in str(m.content)
        and "Call research again in your next reply" in str(m.content)
        for m in refused
    )
    assert {m.tool_call_id for m in seen if m.status != "error"} == {f"r{i}" for i in range(6)}
    assert out["final_report"].startswith("# Report")


async def test_only_runnable_calls_use_the_limit(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        if tool_results(messages):
            return AIMessage("# Report\n\ndone")
        calls = [call("research", {"subject": "no topic"}, "bad")]
        calls += [call("research", {"topic": f"topic {n}"}, n) for n in ("a", "b", "c")]
        return AIMessage("", tool_calls=calls)

    use_script(script_for(orchestrator))
    out = await run({**NO_CLARIFY, "max_research_calls_per_reply": 2})
    answers = {m.tool_call_id: m for m in tool_results(out["messages"])}
    assert "Invalid arguments" in str(answers["bad"].content)
    assert answers["a"].status == answers["b"].status == "success"
    assert answers["c"].status == "error" and "at most 2 research calls" in str(
        answers["c"].content
    )
    assert sorted(scripted_search.queries) == ["topic a q0", "topic b q0"]
