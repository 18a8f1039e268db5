"""What a person sees while a run works: a live `rich` panel in a terminal, plain lines
otherwise. Both are fed the graph's progress events (see `deep_research.runtime.progress`),
worded by `runtime/progress_lines.py`; the tracker keeps the run's counts for the panel,
counted as the summary and `runs` count them (`cli/counts.py`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from deep_research.cli.counts import Totals, cited_sources, page_keys
from deep_research.cli.plain import plain
from deep_research.cli.runs import Home, earlier_thread_hint
from deep_research.runtime.progress_lines import progress_line
from deep_research.text.topics import topic_key
from deep_research.text.wording import plural

if TYPE_CHECKING:  # only the type: `progress.py` imports LangGraph
    from deep_research.runtime.progress import ProgressEvent

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
    # Every session's counts (a resumed run's view goes on from the traffic log's).
    totals: Totals = field(default_factory=Totals)
    search_cap: int | None = None
    pages: set[str] = field(default_factory=set)  # `page_key`s of the state's `sources`
    sources: int | None = None  # the report's Sources list, once the report is checked
    max_cost_usd: float | None = None
    unscored: bool = False  # the relevance model could not score: said once, not per search

    def handle(self, event: dict[str, Any]) -> str | None:
        """Apply one event; return a one-line description of it (None: not worth a line)."""
        name: ProgressEvent | None = event.get("event")
        who = self.researchers.get(str(event.get("id")))
        self.totals.add({**event, "kind": "progress"})
        if name == "todos":
            self.todos = list(event.get("todos") or [])
        elif name == "research_started":
            self.researchers[str(event["id"])] = Researcher(str(event["topic"]))
            self._tick(str(event["topic"]), "in_progress")
        elif name == "search" or name == "search_refused":
            self.search_cap = event.get("cap", self.search_cap)
            if name == "search" and who:
                who.searches += 1
        elif name == "relevance_off":
            if self.unscored:
                return None
            self.unscored = True
        elif name == "research_done" or name == "research_failed":
            if not who:
                return None  # a researcher this view never saw start
            who.status = "done" if name == "research_done" else "failed"
            # Ticked now, as it finishes: the state's list says so only after the whole turn.
            self._tick(who.topic, "completed" if who.status == "done" else "pending")
            # Its own distinct pages: the subgraph's `sources`, merged by `page_key`.
            pages = plural(int(event.get("sources", 0)), "page")
            who.detail = pages if who.status == "done" else event["error"]
        line = progress_line(
            event,
            searches=self.totals.searches,
            topic=who.topic if who else None,
        )
        if name in ("orchestrator_turn", "report_written", "memory_saving") and line:
            self.phase = "report written" if name == "report_written" else line
        elif name == "research_started" or name == "search":
            # A resumed run may go on inside research tasks, with no orchestrator turn yet.
            if self.phase in ("starting", "resuming"):
                self.phase = "researching"
        return line

    def _tick(self, topic: str, status: str) -> None:
        """Mark the todo researched as `topic` (`topic_key`); a completed one stays so."""
        key = topic_key(topic)
        self.todos = [
            {**t, "status": status}
            if t.get("status") != "completed" and topic_key(str(t.get("content", ""))) == key
            else t
            for t in self.todos
        ]

    def settle(self, update: Mapping[str, Any]) -> None:
        """Apply what the graph's state takes from a node of the top graph (or the state
        itself, on resume): the pages researchers retrieved, the report's citation check."""
        self.pages |= page_keys(update.get("sources") or [])
        if (cited := cited_sources(update.get("citation_check"))) is not None:
            self.sources = cited

    def cost_text(self) -> str:
        """`cost $0.0123`, and with a budget what the model calls have left of it."""
        cost, model_cost = self.totals.usd, self.totals.model_usd
        text = "cost unknown" if cost is None else f"cost ${cost:,.4f}"
        if self.max_cost_usd is not None and model_cost is not None:
            text += f" (${max(0.0, self.max_cost_usd - model_cost):,.4f} left)"
        return text

    def counts_text(self) -> str:
        """`searches 3/10 · 1 reused · pages 7 · sources 3 · 2 retries · 1 time-out`, as the
        summary counts them."""
        cap = f"/{self.search_cap}" if self.search_cap is not None else ""
        parts = [f"searches {self.totals.searches}{cap}"]
        parts += [f"{self.totals.reused} reused"] if self.totals.reused else []
        parts.append(f"pages {len(self.pages)}")
        parts += [f"sources {self.sources}"] if self.sources is not None else []
        # Why a run is slow: calls sent again (time-outs among them) say so while it runs.
        parts += [plural(self.totals.retries, "retry")] if self.totals.retries else []
        parts += [plural(self.totals.timeouts, "time-out")] if self.totals.timeouts else []
        return " · ".join(parts)

    def elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60}:{seconds % 60:02d}"

    def __rich__(self) -> RenderableType:
        # Every cell is `Text`: a `str` cell would be parsed as markup by the console.
        header = Text.assemble(
            ("deep-research ", "bold"),
            plain(f"thread {self.thread_id} · {self.phase} · "),
            f"{self.counts_text()} · {self.cost_text()} · ",
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

    def __init__(self, tracker: Tracker, console: Console, home: Home | None = None) -> None:
        self.tracker = tracker
        self.console = console
        self.home = home  # where earlier threads memory names may be resumable
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
        name: ProgressEvent | None = event.get("event")
        # What memory says about this run is for the user, live panel or not.
        if line and name == "memory":
            self.console.print(plain(line))
            earlier = [e for e in event.get("earlier") or [] if isinstance(e, dict)]
            if earlier and self.home:  # two lines at most: the notice, what to do with it
                hint = earlier_thread_hint(self.home, str(earlier[0].get("thread_id", "")))
                self.console.print(plain(hint))
        # The review's outcome is a decision the user made, and results left unscored change
        # what the run reads: each stays on screen, above the panel.
        elif line and (not self.live or name in ("plan_review", "relevance_off")):
            self.console.print(plain(f"[{self.tracker.elapsed()}] {line}"))
