"""The run's counts, one definition each.

Every place that shows a count for one run (the live panel and its researcher rows, the
closing summary, `runs`, `replay`) takes it from here, so they agree:

- searches sent: one `search` progress event each, every session's;
- searches reused: a query answered from this run's earlier results (cached, or joined
  while another researcher's identical search was under way): a `search_done` that no
  `search` of the same researcher and query started;
- cost: the `usd` of every `model_call` and `search_done` event, so each call and each
  search credit billed is counted once, by the one who paid for it;
- tokens: as each `model_reply` reports them, and, for a reply without usage, the estimate
  its `model_call` charged (`estimated`), kept apart so it is shown as one;
- pages: the distinct pages (`text.urls.source_key`) in the state's `sources`, the pages
  the run retrieved that its report may cite;
- sources: the pages the report cites, which its `## Sources` list holds (the citation
  check's `sources_listed`).
- retries: one `model_retry` event each (`timeouts` the time-outs among them); cut replies
  one `reply_cut` each, mended replies one `model_repaired` each; what the floor did, one
  `floor` event each, by what it did (`acted`).

The summary and `replay` count from the traffic log, so a resumed run's totals include
the work done before it stopped.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deep_research.text.urls import source_key

if TYPE_CHECKING:  # the state module imports LangGraph: `--help` must not wait for it
    from deep_research.runtime.progress import ProgressEvent
    from deep_research.state import Source


def page_keys(sources: Iterable[Source]) -> set[str]:
    """The pages among `sources` (state's, or a node's update): one per `source_key`."""
    return {source_key(source) for source in sources}


def cited_sources(check: Mapping[str, Any] | None) -> int | None:
    """How many pages the report's `## Sources` list holds; None before a report is checked."""
    return None if not check else _count(check.get("sources_listed"))


@dataclass
class RoleUsage:
    calls: int = 0
    tokens_in: int = 0  # as the servers reported them (`model_reply`)
    tokens_out: int = 0
    errors: int = 0
    # Estimated where a reply had no usage (`model_call` with `estimated`), which its
    # `model_reply` counts as 0: what the budget was charged for them.
    estimated_in: int = 0
    estimated_out: int = 0


@dataclass
class Totals:
    """A run's counts, added up record by record (the traffic log's, or the live events)."""

    roles: dict[str, RoleUsage] = field(default_factory=lambda: defaultdict(RoleUsage))
    searches: int = 0  # sent: one `search` event each
    reused: int = 0  # answered from this run's earlier results: no search sent for them
    searches_failed: int = 0
    searches_refused: int = 0
    fetches: int = 0
    mcp_calls: int = 0  # calls of MCP servers' tools sent (`mcp_call`), failed ones too
    mcp_failed: int = 0
    researchers_failed: int = 0
    memory: str = ""  # where the memory was, or why it could not be used; "": memory off
    remembered: int = 0  # queries answered from memory without a search
    memory_saved: bool = False
    memory_skipped: str = ""  # the status of a report memory left out ("": none was)
    # What the logged model calls and searches cost, every session's (`model_call` and
    # `search_done` events); None once a call's price was unknown.
    usd: float | None = 0.0
    model_usd: float | None = 0.0  # the model calls' part: what `max_cost_usd` holds
    usd_by_role: dict[str, float | None] = field(default_factory=dict)  # searches: "search"
    estimated: int = 0  # model calls whose tokens were estimated (no `usage` came back)
    sources: int | None = None  # the last saved report's Sources list (its end record's)
    retries: int = 0  # model calls sent again (`model_retry`), every reason
    timeouts: int = 0  # of them, after no answer within LLM_TIMEOUT
    cuts: int = 0  # replies cut at their completion limit
    repairs: int = 0  # replies whose tool calls were mended (read from text, JSON repaired)
    floor: Counter[str] = field(default_factory=Counter)  # what the floor did in code, by act
    # (researcher, query) of searches sent whose results have not come back yet: the
    # `search_done` that answers one was not reused. Per session, as the run's cache is.
    _waiting: Counter[tuple[str, str]] = field(default_factory=Counter, repr=False)

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one record: a traffic log's line, or a live event as `progress` logs it."""
        kind = record.get("kind")
        if kind == "run":  # a new session: a search left waiting by the last one never ends
            self._waiting.clear()
            if isinstance(check := record.get("citation_check"), dict):  # a report was saved
                self.sources = cited_sources(check)
        elif kind == "model_reply":
            usage = self.roles[str(record.get("role", "model"))]
            usage.calls += 1
            usage.tokens_in += _reported(record.get("tokens_in"))
            usage.tokens_out += _reported(record.get("tokens_out"))
        elif kind == "model_error":
            self.roles[str(record.get("role", "model"))].errors += 1
        elif kind == "progress":
            self._progress(record)

    def _progress(self, event: Mapping[str, Any]) -> None:
        name: ProgressEvent | None = event.get("event")
        asked = (str(event.get("id")), str(event.get("query")))
        if name == "search":
            self.searches += 1
            self._waiting[asked] += 1
        elif (name == "search_done" or name == "search_failed") and self._waiting[asked] > 0:
            self._waiting[asked] -= 1  # the end of a search this researcher sent
        elif name == "search_done":
            self.reused += 1  # cached, or joined while another researcher's was sent
        self.searches_failed += name == "search_failed"
        self.searches_refused += name == "search_refused"
        self.fetches += name == "fetch"
        self.mcp_calls += name == "mcp_call"
        self.mcp_failed += name == "mcp_call" and event.get("outcome") != "answered"
        self.researchers_failed += name == "research_failed"
        self.remembered += name == "search_remembered"
        self.retries += name == "model_retry"
        self.timeouts += name == "model_retry" and event.get("reason") == "timeout"
        self.cuts += name == "reply_cut"
        self.repairs += name == "model_repaired"
        if name == "floor":
            self.floor[str(event.get("acted"))] += 1
        if name == "model_call" or name == "search_done":
            role = str(event.get("role", "model")) if name == "model_call" else "search"
            self.usd = add_usd(self.usd, event.get("usd", 0.0))
            self.usd_by_role[role] = add_usd(self.usd_by_role.get(role, 0.0), event.get("usd", 0.0))
        if name == "model_call":
            self.model_usd = add_usd(self.model_usd, event.get("usd", 0.0))
            self.estimated += _count(event.get("estimated"))
            if _count(event.get("estimated")):
                usage = self.roles[str(event.get("role", "model"))]
                usage.estimated_in += _count(event.get("tokens_in"))
                usage.estimated_out += _count(event.get("tokens_out"))
        self.memory_saved |= name == "memory_saved"
        if name == "memory_skipped":
            self.memory_skipped = str(event.get("status", ""))
        if name == "memory" and event.get("status") == "unavailable":
            self.memory = f"unavailable: {event.get('reason')}"
        elif name == "memory" and event.get("where"):
            self.memory = f"at {event.get('where')}"


def totals(records: Iterable[Mapping[str, Any]]) -> Totals:
    """Add up a traffic log's records."""
    result = Totals()
    for record in records:
        result.add(record)
    return result


def add_usd(total: float | None, amount: Any) -> float | None:
    """A running cost: an unknown amount (None) makes it unknown; a bad one counts 0."""
    if total is None or amount is None:
        return None
    number = amount if isinstance(amount, int | float) and not isinstance(amount, bool) else 0
    return round(total + number, 6)


def _count(value: Any) -> int:
    """A token count from the log; anything but a number (a hand-edited or cut log) is 0."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


# As `llm.spending.MAX_REPORTED_TOKENS` (not imported: `--help` must not load LangChain).
MAX_REPORTED_TOKENS = 100_000_000


def _reported(value: Any) -> int:
    """A server's token count as the budget took it: a negative or absurd one is no count
    (the call was estimated, and its `model_call` carries the estimate)."""
    count = _count(value)
    return count if 0 <= count <= MAX_REPORTED_TOKENS else 0
