"""The last node: the report goes into `final_report` and the last AI message."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage

from deep_research import progress
from deep_research.state import ResearchState

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def finalize(state: ResearchState) -> dict[str, Any]:
    """Publish the report, naming every research topic that failed."""
    last = state["messages"][-1]
    report = _THINK.sub("", str(last.content)).strip()
    failures = state.get("failures", [])
    if failures:
        gaps = "\n".join(f"- {f['topic']}: {f['error']}" for f in failures)
        report += f"\n\n## Research gaps\n\nThese topics could not be researched:\n{gaps}\n"
    progress.emit("report_written", chars=len(report), failures=len(failures))
    # Same id: the orchestrator's draft is replaced, not shown twice in chat.
    return {"final_report": report, "messages": [AIMessage(report, id=last.id)]}
