"""The last node: the verified report goes into `final_report` and the last AI message."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from deep_research import progress
from deep_research.citations import check_report
from deep_research.state import ResearchState


def finalize(state: ResearchState) -> dict[str, Any]:
    """Publish the report with verified citations, naming every research topic that failed."""
    last = state["messages"][-1]
    # `RoleModel.ask` already removed the reasoning that opened the reply; removing tags
    # again here would cut a report that writes about `<think>` tags.
    checked = check_report(str(last.content).strip(), state.get("sources", []))
    gaps = ""
    if failures := state.get("failures", []):
        listing = "\n".join(f"- {f['topic']}: {f['error']}" for f in failures)
        gaps = f"## Research gaps\n\nThese topics could not be researched:\n{listing}"
    # The gaps are written by code, after the check: error texts are not citations.
    report = checked.render(appendix=gaps)
    progress.emit("report_written", chars=len(report), failures=len(failures))
    # Same id: the orchestrator's draft is replaced, not shown twice in chat.
    return {
        "final_report": report,
        "citation_check": checked.check,
        "messages": [AIMessage(report, id=last.id)],
    }
