"""Citation checks inside the graph: per researcher, in finalize, and in the output state."""

from __future__ import annotations

import re
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.state import Source, merge_sources
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

LINK = re.compile(r"\]\((https?://[^)\s]+)\)")
ALPHA, BETA = "topic alpha", "topic beta"
# ScriptedSearch answers query q with https://example.org/<slug of q>/<i>.
BETA_URL = "https://example.org/topic-beta-q0/0"
FABRICATED = "https://invented.example/study"


def call(name: str, args: dict[str, str | list[str]], call_id: str) -> dict[str, object]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def researcher(messages: list[BaseMessage]) -> AIMessage:
    """Searches once; alpha's report also cites a page only beta retrieved."""
    topic = str(messages[1].content)
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if not results:
        return AIMessage("", tool_calls=[call("web_search", {"queries": [f"{topic} q0"]}, "s")])
    # Results come ranked by relevance: pick result 0, whose text the quote below is from.
    own = next(u for u in LINK.findall(str(results[-1].content)) if u.endswith("/0"))
    report = f'Found [a fact]({own} "Finding 0 about {topic} q0").'
    if topic == ALPHA:
        report += f" Also [borrowed]({BETA_URL})."
    return AIMessage(report)


def orchestrator(messages: list[BaseMessage]) -> AIMessage:
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if not results:
        return AIMessage("", tool_calls=[call("research", {"topic": t}, t) for t in (ALPHA, BETA)])
    links = " ".join(f"[c]({u})" for m in results for u in LINK.findall(str(m.content)))
    return AIMessage(f"# Report\n\n## 1. Findings\n\n{links} and [made up]({FABRICATED}).")


def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
    if "web_search" in tools:
        return researcher(messages)
    if "research" in tools:
        return orchestrator(messages)
    system = str(messages[0].content) if isinstance(messages[0], SystemMessage) else ""
    return AIMessage("# Forced\n" if "research phase is over" in system else "Wrap-up.")


async def test_each_researcher_is_checked_against_its_own_sources_and_finalize_against_all(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script)
    graph = builder.compile(checkpointer=InMemorySaver())
    question = {"messages": [{"role": "user", "content": "Heat pumps?"}]}
    out = await graph.ainvoke(
        question, {"configurable": {"thread_id": "c"}}, context={"allow_clarification": False}
    )
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    alpha, beta = results[ALPHA], results[BETA]
    alpha_report = str(alpha.content)
    # Beta retrieved BETA_URL, alpha did not: alpha's citation of it is unlinked.
    assert BETA_URL not in alpha_report and "Also borrowed." in alpha_report
    assert alpha.artifact["citation_check"]["fabricated_removed"] == 1
    assert alpha.artifact["citation_check"]["fragments_built"] == 1
    assert "#:~:text=Finding%200%20about%20topic%20alpha%20q0" in alpha_report
    assert beta.artifact["citation_check"]["fabricated_removed"] == 0

    report = out["final_report"]
    check = out["citation_check"]
    assert FABRICATED not in report and "and made up." in report
    assert check["fabricated_removed"] == 1 and check["removed_urls"] == [FABRICATED]
    assert check["fragments_kept"] == 2 and check["fragments_dropped"] == 0
    assert "## Findings" in report and check["headings_fixed"] == 1
    body, listed = report.split("## Sources\n\n")
    in_order = list(dict.fromkeys(u.split("#")[0] for u in LINK.findall(body)))
    assert in_order and set(in_order) <= {s["url"] for s in out["sources"]}
    assert LINK.findall(listed) == in_order
    assert out["messages"][-1].content == report


def test_a_url_retrieved_twice_keeps_both_snippets() -> None:
    first = Source(url="https://a.org", title="A", content="First snippet.", found_by="x")
    again = Source(url="https://a.org", title="A", content="Second snippet.", found_by="y")
    merged = merge_sources([first], [again, first])
    assert len(merged) == 1
    assert merged[0]["content"] == "First snippet.\n\nSecond snippet."
    assert merged[0]["found_by"] == "x"
