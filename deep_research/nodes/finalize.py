"""The last node: the verified report goes into `final_report` and the last AI message."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from deep_research import memory
from deep_research.citations import CheckedReport, check_report, quoted_evidence
from deep_research.citations.hygiene import code_span
from deep_research.citations.markdown import close_open_blocks
from deep_research.citations.quoting import passages_in
from deep_research.config.settings import Context, context_of
from deep_research.llm import attempts
from deep_research.nodes import report_form
from deep_research.runtime import progress, tracing
from deep_research.state import NO_USAGE, ResearchState
from deep_research.text import secrets
from deep_research.text.language import heading

CUT_NOTE = (
    "The model's reply was cut at its completion limit (LLM_MAX_TOKENS): "
    "this report may end mid-sentence. Raise the limit, or use a model that writes shorter."
)


def finalize(state: ResearchState, runtime: Runtime[Context] | None = None) -> dict[str, Any]:
    """Publish the report with verified citations, naming every research topic that failed;
    the headings code adds are in the report's language (`report_form.report_language`)."""
    last = state["messages"][-1]
    context = context_of(runtime)
    language = report_form.report_language(state, context)
    # `RoleModel.ask` already removed the reasoning that opened the reply; removing tags
    # again here would cut a report that writes about `<think>` tags. `.text`, not
    # `.content`: models on the Responses API answer in content blocks.
    # A reply cut inside a code block is closed: the notes and Sources list added after it
    # stay headings and text.
    draft = close_open_blocks(last.text.strip())
    # Embedded for `remember` on a thread of its own while it is checked, with the question
    # it stores first: the published report has the same pieces (a report written in
    # sections has them already).
    memory.prepare_part(draft, context, question=state.get("question", ""))
    checked = _with_evidence(state, draft, language)
    gaps = ""
    if failures := state.get("failures", []):
        # Errors are redacted where they are born; again here, for failures stored before.
        listing = "\n".join(
            f"- {code_span(f['topic'])}: {code_span(secrets.redact(f['error']))}" for f in failures
        )
        gaps = f"## {heading('gaps', language)}\n\nThese topics could not be researched:\n"
        gaps += listing
    # The gaps are added after the check, so nothing in them may link: topics (model text)
    # and errors (which name URLs: "Cannot reach the model server at http://...") are code
    # spans, where no renderer links anything.
    # Why the report was written early (the cost budget), after the check: no links in it.
    if note := state.get("budget_note"):
        gaps = f"## {heading('budget', language)}\n\n{note}" + (f"\n\n{gaps}" if gaps else "")
    if isinstance(last, AIMessage) and attempts.is_cut(last):  # said where it is read
        cut = f"## {heading('cut', language)}\n\n{CUT_NOTE}"
        gaps = f"{cut}\n\n{gaps}" if gaps else cut
    today = datetime.now(UTC).date().isoformat()
    report = checked.render(appendix=gaps, today=today, language=language)
    progress.emit(
        "report_written", chars=len(report), failures=len(failures), status=checked.status
    )
    # LangSmith's run list shows a trace's root metadata: what the thread's run cost.
    usage = state.get("usage") or NO_USAGE
    tracing.note_on_root_run({"usage": usage, "usd": usage["usd"]})
    # Same id: the orchestrator's draft is replaced, not shown twice in chat.
    return {
        "final_report": report,
        "citation_check": checked.check,
        "status": checked.status,
        "messages": [AIMessage(report, id=last.id)],
    }


def _with_evidence(state: ResearchState, report: str, language: str) -> CheckedReport:
    """The report, checked; when it cites nothing the run read, the floor adds the passages
    read that bear most on the question, quoted and linked, under their own heading."""
    sources = state.get("sources", [])
    checked = check_report(report, sources)
    if checked.cited or not sources:
        return checked
    title = heading("evidence", language)
    evidence = quoted_evidence(state.get("question", ""), sources, heading=title)
    if not evidence:
        return checked
    quoted = passages_in(evidence)
    progress.emit("floor", id="", acted="quoted", detail=f"{quoted} passages")
    return check_report(f"{report}\n\n{evidence}", sources)
