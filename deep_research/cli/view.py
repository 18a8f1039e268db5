"""What a person sees while a run works: a live `rich` panel in a terminal, plain lines
otherwise. Both are fed the graph's progress events (see `deep_research.runtime.progress`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from deep_research.cli.plain import plain
from deep_research.cli.wording import plural

ResearcherStatus = Literal["running", "done", "failed"]
TODO_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


@dataclass
class Researcher:
    topic: str
    status: ResearcherStatus = "running"
    searches: int = 0
    detail: str = ""


@dataclass
class Tracker:
    """The run's progress, rebuilt from events; renders itself for `rich`."""

    thread_id: str
    started: float = field(default_factory=time.monotonic)
    phase: str = "starting"
    todos: list[dict[str, str]] = field(default_factory=list)
    researchers: dict[str, Researcher] = field(default_factory=dict)
    searches_used: int = 0
    search_cap: int | None = None
    sources: set[str] = field(default_factory=set)

    def handle(self, event: dict[str, Any]) -> str | None:
        """Apply one event; return a one-line description of it (None: not worth a line)."""
        name = event.get("event")
        who = self.researchers.get(str(event.get("id")))
        if name == "orchestrator_turn":
            self.phase = f"orchestrator turn {event['turn']} of {event['cap']}"
            return self.phase
        if name == "todos":
            self.todos = list(event.get("todos") or [])
            return "plan: " + "; ".join(t["content"] for t in self.todos)
        if name == "plan_review":
            return _review_line(event)
        if name == "research_started":
            self.researchers[str(event["id"])] = Researcher(str(event["topic"]))
            return f"researching: {event['topic']}"
        if name in ("search", "search_refused"):
            self.search_cap = event.get("cap", self.search_cap)
            if name == "search_refused":
                return f"search cap reached ({event['cap']}): {event['query']!r} not run"
            self.searches_used += 1  # each event is one search sent
            if who:
                who.searches += 1
            return f"search {self.searches_used}/{event['cap']}: {event['query']}"
        if name == "search_done":
            self.sources.update(event.get("urls") or [])
            return None
        if name == "search_failed":
            return f"search failed: {event.get('error')}"
        if name in ("research_done", "research_failed") and who:
            who.status = "done" if name == "research_done" else "failed"
            sources = plural(int(event.get("sources", 0)), "source")
            who.detail = sources if who.status == "done" else event["error"]
            return f"research {who.status}: {who.topic} ({who.detail})"
        if name == "memory":
            return memory_notice(event)
        if name == "search_remembered":
            self.sources.update(event.get("urls") or [])
            return f"answered from memory: {event['query']}"
        if name == "report_written":
            self.phase = "report written"
            return f"report written ({plural(event['chars'], 'character')})"
        return None

    def elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60}:{seconds % 60:02d}"

    def __rich__(self) -> RenderableType:
        cap = f"/{self.search_cap}" if self.search_cap is not None else ""
        # Every cell is `Text`: a `str` cell would be parsed as markup by the console.
        header = Text.assemble(
            ("deep-research ", "bold"),
            plain(f"thread {self.thread_id} · {self.phase} · "),
            f"searches {self.searches_used}{cap} · sources {len(self.sources)} · ",
            (self.elapsed(), "cyan"),
        )
        parts: list[RenderableType] = [header]
        if self.todos:
            todos = Table.grid(padding=(0, 1))
            for todo in list(self.todos):
                mark = TODO_MARKS.get(str(todo.get("status", "")), "[ ]")
                todos.add_row(Text(mark), plain(todo.get("content", "")))
            parts.append(todos)
        researchers = list(self.researchers.values())
        if researchers:
            table = Table("researcher", "status", "searches", "", box=None, padding=(0, 1))
            for r in researchers:
                style = {"running": "yellow", "done": "green", "failed": "red"}[r.status]
                table.add_row(
                    plain(r.topic), Text(r.status, style), Text(str(r.searches)), plain(r.detail)
                )
            parts.append(table)
        return Group(*parts)


class ProgressView:
    """Shows a tracker live in a terminal, or as one printed line per event elsewhere."""

    def __init__(self, tracker: Tracker, console: Console) -> None:
        self.tracker = tracker
        self.console = console
        self.live = console.is_terminal
        self._display: Live | None = None

    def start(self) -> None:
        if self.live and self._display is None:
            self._display = Live(self.tracker, console=self.console, refresh_per_second=4)
            self._display.start()

    def stop(self) -> None:
        if self._display is not None:
            self._display.stop()
            self._display = None

    def show(self, event: dict[str, Any]) -> None:
        line = self.tracker.handle(event)
        # What memory says about this run is for the user, live panel or not.
        if line and event.get("event") == "memory":
            self.console.print(plain(line))
        # The review's outcome is a decision the user made: it stays on screen, above the panel.
        elif line and (not self.live or event.get("event") == "plan_review"):
            self.console.print(plain(f"[{self.tracker.elapsed()}] {line}"))


def _review_line(event: dict[str, Any]) -> str:
    """What the user decided about the plan, and whether it will be asked about again."""
    outcome = event.get("outcome")
    if outcome == "approved":
        return "plan approved"
    if outcome == "replaced":
        return "plan replaced by yours"
    if outcome == "unanswered":
        return "no usable plan review: the plan runs as it is"
    if event.get("round") == event.get("max_rounds"):
        return (
            f"plan sent back (last review, {event.get('round')} of {event.get('max_rounds')}): "
            "the revised plan runs without asking again"
        )
    return f"plan sent back for changes (review {event.get('round')} of {event.get('max_rounds')})"


def memory_notice(event: dict[str, Any]) -> str | None:
    """The line that tells the user what memory found, or why there is none."""
    if event.get("status") == "unavailable":
        return f"memory unavailable, researching without it: {event.get('reason')}"
    earlier = [e for e in event.get("earlier") or [] if isinstance(e, dict)]
    if not earlier:
        return None
    first = earlier[0]
    line = (
        f"You researched a similar question on {first.get('date')}: thread {first.get('thread_id')}"
    )
    if len(earlier) > 1:
        others = ", ".join(f"{e.get('date')} (thread {e.get('thread_id')})" for e in earlier[1:])
        line += f"; also on {others}"
    return line
