"""`cli.research`: what `ask` hands the session for a new or resumed run, and the summary.

The session itself is replaced by a recorder here (whole runs are in tests/e2e/test_cli*.py).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from deep_research.cli import research, session
from deep_research.cli.args import HOME, ReportTarget, UsageError
from deep_research.cli.session import Outcome
from deep_research.cli.summary import OldThreadError
from deep_research.config.settings import load_context
from deep_research.state import CitationCheck


def check(**counts: int) -> dict[str, Any]:
    """A citation check that kept nothing, with `counts` set."""
    names = [name for name in CitationCheck.__annotations__ if name != "removed_urls"]
    return {**dict.fromkeys(names, 0), "removed_urls": [], **counts}


def page(path: str) -> dict[str, str]:
    return {"url": f"https://example.org/{path}", "title": path, "content": "", "found_by": "t"}


def final(status: str = "complete", **values: Any) -> dict[str, Any]:
    """A finished run's state, as `finalize` leaves it."""
    return {"status": status, "citation_check": check(), "sources": [], **values}


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every `run_research` call's arguments, in a fresh directory; each run 'writes' a log."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO())  # not a terminal
    calls: list[dict[str, Any]] = []

    async def run_research(*args: Any, **kwargs: Any) -> Outcome:
        calls.append({"target": args[1], "context": args[3], **kwargs})
        path = HOME.log_path(kwargs["thread_id"])
        path.parent.mkdir(parents=True, exist_ok=True)
        search = {"t": 1.0, "kind": "progress", "event": "search", "query": "q"}
        path.write_text(f"{json.dumps(search)}\n" * 2)
        values = final(searches_used=2, sources=[page("a"), page("b"), page("a/#x")])
        return Outcome(kwargs["thread_id"], values, 75.0, Path("reports/r.md"))

    monkeypatch.setattr(session, "run_research", run_research)
    return calls


def screen(argv: list[str]) -> str:
    out = io.StringIO()
    assert research.ask(argv, Console(file=out, width=200)) == 0
    return out.getvalue()


def test_a_new_run_without_a_terminal_skips_the_questions(sessions: list[dict[str, Any]]) -> None:
    text = screen(["--set", "review_plan=true", "  why is the sky blue?  "])
    [call] = sessions
    assert call["question"] == "why is the sky blue?" and call["resume"] is False
    assert call["interactive"] is False and len(call["thread_id"]) == 8
    assert call["settings"] == {"review_plan": False, "allow_clarification": False}
    assert not call["context"].allow_clarification and not call["context"].review_plan
    assert "skipping clarifying questions" in text and "skipping the plan review" in text
    assert f"resume with: deep-research --resume {call['thread_id']}" in text
    assert "Report saved: reports/r.md" in text and "wall time     1:15" in text
    assert (
        f"searches      2 of {call['context'].max_searches_per_run} sent\n" in text
        and "pages         2 retrieved" in text
    )


def test_a_resume_takes_the_logged_question_and_settings_under_new_flags(
    sessions: list[dict[str, Any]],
) -> None:
    log = HOME.log_path("abc12345")
    log.parent.mkdir(parents=True)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "why?"}
    start["settings"] = {"max_searches_per_run": 3, "fetch_top_n": 1, "allow_clarification": False}
    log.write_text(json.dumps(start) + "\n")
    screen(["--resume", "abc12345", "--max-searches", "5"])
    [call] = sessions
    assert (call["thread_id"], call["question"], call["resume"]) == ("abc12345", "why?", True)
    assert call["context"].max_searches_per_run == 5 and call["context"].fetch_top_n == 1


def test_a_follow_up_keeps_within_the_threads_cap_and_its_library(
    sessions: list[dict[str, Any]],
) -> None:
    """The lower search cap holds; a library-only thread refuses the web (exit 2) (#39)."""
    log = HOME.log_path("abc12345")
    log.parent.mkdir(parents=True)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "why?"}
    start["settings"] = {"max_searches_per_run": 3, "search_provider": "library"}
    for given in ("50", "2"):  # the recorder writes a log of its own: the thread's again
        log.write_text(json.dumps(start) + "\n")
        screen(["--follow-up", "abc12345", "--max-searches", given, "and noise?"])
    log.write_text(json.dumps(start) + "\n")
    assert [call["context"].max_searches_per_run for call in sessions] == [3, 2]
    assert sessions[0]["context"].search_provider == "library"
    with pytest.raises(UsageError, match="search_provider='tavily' is refused"):
        research.ask(["--follow-up", "abc12345", "--search", "tavily", "and noise?"], Console())
    assert len(sessions) == 2, "nothing ran"


def test_a_resume_writes_where_the_first_session_was_asked_unless_told_otherwise(
    sessions: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    exported: list[list[str]] = []
    monkeypatch.setattr(research, "export_beside", lambda r, f, c: exported.append(f))
    log = HOME.log_path("abc12345")
    log.parent.mkdir(parents=True)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "why?"}
    start |= {"out": "notes/why.md", "export": "html"}
    for flags in ([], ["--out", "elsewhere/", "--export", "docx"]):
        log.write_text(json.dumps(start) + "\n")  # the recorder's run replaces the log
        screen(["--resume", "abc12345", *flags])
    first, second = sessions
    assert (first["target"], first["asked"]) == (
        ReportTarget(Path("notes"), "why.md"),
        {"out": "notes/why.md", "export": "html"},
    )
    assert (second["target"], second["asked"]) == (
        ReportTarget(Path("elsewhere")),
        {"out": "elsewhere/", "export": "docx"},
    )
    assert exported == [["html"], ["docx"]]
    # The remembered file was taken meanwhile: refused, saying where the name came from.
    Path("notes").mkdir()
    Path("notes/why.md").write_text("mine")
    log.write_text(json.dumps(start) + "\n")
    with pytest.raises(UsageError, match="already exists.*the --out this thread was started"):
        research.ask(["--resume", "abc12345"], Console(file=io.StringIO()))


def test_a_thread_that_saved_its_report_does_not_export_again_unless_asked(
    sessions: list[dict[str, Any]],
) -> None:
    log = HOME.log_path("abc12345")
    log.parent.mkdir(parents=True)
    start = {"t": 1.0, "kind": "run", "action": "start", "question": "why?", "export": "html"}
    end = {"t": 2.0, "kind": "run", "action": "end", "status": "done", "report": "r.md"}
    log.write_text(json.dumps(start) + "\n" + json.dumps(end) + "\n")
    screen(["--resume", "abc12345"])
    [call] = sessions
    assert call["asked"] == {"out": None, "export": None} and call["target"] == ReportTarget()


def test_the_summary_counts_from_the_outcome_and_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    HOME.log_path("t1").parent.mkdir(parents=True)
    HOME.log_path("t1").write_text("")
    out = io.StringIO()
    context = load_context({"max_searches_per_run": 9})
    values = final(sources=[page("a"), page("b/"), page("b?utm_source=x")])
    values["citation_check"]["sources_listed"] = 1
    done = Outcome("t1", values, 61.0, Path("reports/r.md"), already_done=True)
    research.print_summary(Console(file=out, width=200), done, context)
    text = out.getvalue()
    assert "Thread t1 was already done; nothing left to run. Its report: reports/r.md" in text
    assert "wall time     1:01 (this session)" in text and "searches      0 of 9 sent\n" in text
    assert "pages         2 retrieved\n" in text, "one page per `page_key`"
    assert "sources       1 cited (the report's Sources list)\n" in text
    assert f"traffic log   {HOME.log_path('t1')}" in text


def test_a_thread_finished_before_status_existed_is_refused_with_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    values = final()
    del values["status"]
    outcome = Outcome("t1", values, 5.0, Path("reports/r.md"), already_done=True)
    with pytest.raises(OldThreadError, match=r"thread t1 was written before deep_research 0\.1\.0"):
        research.print_summary(Console(file=io.StringIO()), outcome, load_context({}))


def test_export_writes_after_the_run_and_a_bad_format_stops_before(
    sessions: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    exported: list[tuple[Path, list[str]]] = []
    monkeypatch.setattr(research, "export_beside", lambda r, f, c: exported.append((r, f)))
    screen(["--no-clarify", "--export", "html,docx", "why?"])
    assert exported == [(Path("reports/r.md"), ["html", "docx"])]
    with pytest.raises(UsageError, match="unknown export format 'rtf'"):
        research.ask(["--export", "rtf", "why?"], Console(file=io.StringIO()))
    assert len(sessions) == 1  # the second never started


@pytest.mark.parametrize(
    ("values", "status", "says"),
    [
        (final("no_sources"), "no_sources", "it cites no source"),
        (final("unverified"), "unverified", "every citation in it was removed"),
    ],
)
def test_a_report_without_a_retrieved_source_is_saved_but_not_a_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, values: dict[str, Any], status: str, says: str
) -> None:
    monkeypatch.chdir(tmp_path)
    HOME.log_path("t1").parent.mkdir(parents=True)
    # The researchers searched and found nothing worth keeping: the search is the cause.
    searched = [
        {"t": 1.0, "kind": "progress", "event": "research_started", "id": "r", "topic": "t"},
        {"t": 1.0, "kind": "progress", "event": "search", "id": "r", "query": "q", "cap": 25},
        {"t": 1.0, "kind": "progress", "event": "search_done", "id": "r", "query": "q", "urls": []},
    ]
    HOME.log_path("t1").write_text("".join(json.dumps(r) + "\n" for r in searched))
    out = io.StringIO()
    outcome = Outcome("t1", values, 5.0, Path("reports/r.md"))
    code = research.print_summary(Console(file=out, width=300), outcome, load_context({}))
    text = out.getvalue()
    assert code == research.UNSOURCED_EXIT == 3
    assert "Report saved: reports/r.md" in text and f"status        {status}" in text
    assert f"Not a finished report: {says}" in text
    assert "The 1 search sent found nothing worth keeping" in text
    assert "another search provider (--search)" in text, "nothing else stopped the research"


def test_a_run_whose_model_never_researched_is_told_so_not_to_change_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    HOME.log_path("t1").parent.mkdir(parents=True)
    call = {"t": 1.0, "kind": "progress", "event": "model_call", "role": "orchestrator", "usd": 0.0}
    HOME.log_path("t1").write_text(json.dumps(call) + "\n")
    out = io.StringIO()
    outcome = Outcome("t1", final("no_sources"), 5.0, Path("reports/r.md"))
    research.print_summary(Console(file=out, width=400), outcome, load_context({}))
    text = out.getvalue()
    assert "Not a finished report: it cites no source. The model made no research call" in text
    assert "--search" not in text and "deep-research doctor" in text


def test_a_report_the_cost_budget_left_unsourced_blames_the_budget_not_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    HOME.log_path("t1").parent.mkdir(parents=True)
    HOME.log_path("t1").write_text("")
    out = io.StringIO()
    values = final("no_sources", budget_note="The run stopped at its cost budget: spent.")
    outcome = Outcome("t1", values, 5.0, Path("reports/r.md"))
    context = load_context({"max_cost_usd": 0.05})
    code = research.print_summary(Console(file=out, width=400), outcome, context)
    text = out.getvalue()
    assert code == research.UNSOURCED_EXIT
    assert (
        "Not a finished report: it cites no source. The cost budget (--max-cost 0.05: "
        "$0.0500) stopped the research before it found a page to cite, not the search. "
        'Run the question again with a bigger budget: deep-research --max-cost 0.1 "QUESTION".'
    ) in text, text
    assert "--search" not in text and "--max-searches" not in text
    assert "budget        reached: the cost budget (--max-cost 0.05: $0.0500) stopped" in text


def test_a_report_citing_a_retrieved_page_is_a_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    HOME.log_path("t1").parent.mkdir(parents=True)
    HOME.log_path("t1").write_text("")
    out = io.StringIO()
    outcome = Outcome("t1", final(), 5.0, Path("reports/r.md"))
    assert research.print_summary(Console(file=out, width=300), outcome, load_context({})) == 0
    assert "Not a finished report" not in out.getvalue()
    assert "status        complete" in out.getvalue()


def test_searches_counted_beyond_those_sent_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    HOME.log_path("t1").parent.mkdir(parents=True)
    search = {"t": 1.0, "kind": "progress", "event": "search", "query": "q"}
    HOME.log_path("t1").write_text(f"{json.dumps(search)}\n" * 10)
    out = io.StringIO()
    values = final(searches_used=12)
    outcome = Outcome("t1", values, 5.0, Path("reports/r.md"))
    research.print_summary(Console(file=out, width=300), outcome, load_context({}))
    assert (
        "searches      10 of 25 sent; 2 more counted against the cap for a search step "
        "that was stopped (they may have been sent)"
    ) in out.getvalue()
    assert "search budget" not in out.getvalue(), "one count of searches, not two"
