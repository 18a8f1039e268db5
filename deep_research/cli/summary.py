"""Totals over a traffic log (calls, tokens, searches, fetches) and the citation check.

The closing summary and `replay` both count from the log, so they agree, and a resumed
run's totals include the work done before it stopped.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from deep_research.text.wording import plural


@dataclass
class RoleUsage:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    errors: int = 0


@dataclass
class Totals:
    roles: dict[str, RoleUsage] = field(default_factory=lambda: defaultdict(RoleUsage))
    searches: int = 0
    searches_failed: int = 0
    searches_refused: int = 0
    fetches: int = 0
    researchers_failed: int = 0
    memory: str = ""  # where the memory was, or why it could not be used; "": memory off
    remembered: int = 0  # queries answered from memory without a search
    memory_saved: bool = False
    memory_skipped: str = ""  # the status of a report memory left out ("": none was)
    # What the logged model calls and searches cost, every session's (`model_call` and
    # `search_done` events); None once a call's price was unknown.
    usd: float | None = 0.0
    model_usd: float | None = 0.0  # the model calls' part: what `max_cost_usd` holds

    def lines(self, cap: int | None = None, counted: int | None = None) -> list[str]:
        """The summary's lines; with the run's search `cap`, the searches line says how
        many of it were sent, and names any the budget in state (`counted`) holds beyond
        them: a search step stopped before it ended, whose searches may have gone out."""
        out = []
        for role, usage in sorted(self.roles.items()):
            errors = f", {usage.errors} failed" if usage.errors else ""
            out.append(
                f"{role:<13} {plural(usage.calls, 'call'):>9}  "
                f"{plural(usage.tokens_in, 'token'):>15} in  "
                f"{usage.tokens_out:>7,} out{errors}"
            )
        refused = f", {self.searches_refused} refused at the cap" if self.searches_refused else ""
        failed = f", {self.searches_failed} failed" if self.searches_failed else ""
        of_cap = f" of {cap} sent" if cap is not None else ""
        unsure = (counted or 0) - self.searches
        stopped = (
            f"; {unsure} more counted against the cap for a search step that was stopped "
            "(they may have been sent)"
            if unsure > 0
            else ""
        )
        out.append(f"searches      {self.searches}{of_cap}{failed}{refused}{stopped}")
        out.append(f"fetches       {self.fetches}")
        if self.memory:
            answered = f", {plural(self.remembered, 'query')} answered from it"
            answered = answered if self.remembered else ""
            saved = ", report remembered" if self.memory_saved else ""
            if self.memory_skipped and not self.memory_saved:
                saved = f", report not remembered (status {self.memory_skipped}: not research)"
            out.append(f"memory        {self.memory}{answered}{saved}")
        if self.researchers_failed:
            out.append(f"researchers   {self.researchers_failed} failed (see 'Research gaps')")
        return out


def totals(records: list[dict[str, Any]]) -> Totals:
    """Add up a traffic log's records."""
    result = Totals()
    for record in records:
        kind = record.get("kind")
        if kind == "model_reply":
            usage = result.roles[str(record.get("role", "model"))]
            usage.calls += 1
            usage.tokens_in += _count(record.get("tokens_in"))
            usage.tokens_out += _count(record.get("tokens_out"))
        elif kind == "model_error":
            result.roles[str(record.get("role", "model"))].errors += 1
        elif kind == "progress":
            event = record.get("event")
            result.searches += event == "search"
            result.searches_failed += event == "search_failed"
            result.searches_refused += event == "search_refused"
            result.fetches += event == "fetch"
            result.researchers_failed += event == "research_failed"
            result.remembered += event == "search_remembered"
            if event in ("model_call", "search_done"):
                result.usd = add_usd(result.usd, record.get("usd", 0.0))
            if event == "model_call":
                result.model_usd = add_usd(result.model_usd, record.get("usd", 0.0))
            result.memory_saved |= event == "memory_saved"
            if event == "memory_skipped":
                result.memory_skipped = str(record.get("status", ""))
            if event == "memory" and record.get("status") == "unavailable":
                result.memory = f"unavailable: {record.get('reason')}"
            elif event == "memory" and record.get("where"):
                result.memory = f"at {record.get('where')}"
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


def citation_line(values: dict[str, Any]) -> str:
    """What citation verification kept and removed (`citation_check` from `finalize`)."""
    check = values.get("citation_check")
    if not check:
        return "citations     not checked (no citation_check in the final state)"
    fragments = check["fragments_kept"] + check["fragments_built"]
    line = (
        f"citations     {check['links_kept']} kept, {check['fabricated_removed']} removed "
        f"(never retrieved); text fragments {fragments} kept, "
        f"{check['fragments_dropped']} dropped"
    )
    # Images and raw HTML that pointed outside the retrieved sources (rare; shown when > 0).
    unchecked = check.get("images_removed", 0) + check.get("html_removed", 0)
    return f"{line}; {plural(unchecked, 'image/HTML link')} removed" if unchecked else line


def cost_line(values: dict[str, Any], max_cost_usd: float | None) -> str:
    """What the thread's model calls cost, per role, and the budget left (state's `usage`)."""
    usage = values.get("usage") or {}
    roles = usage.get("by_role") or {}

    def dollars(amount: Any) -> str:
        return "unknown" if amount is None else f"${amount:,.4f}"

    per_role = ", ".join(
        f"{role} {dollars(used.get('usd'))}" for role, used in sorted(roles.items())
    )
    line = f"cost          {dollars(usage.get('usd', 0.0))}" + (
        f" ({per_role})" if per_role else ""
    )
    if usage.get("estimated"):
        line += f"; {usage['estimated']} calls' tokens estimated"
    if max_cost_usd is not None:
        left = max(0.0, max_cost_usd - values.get("cost_counted", 0) / 1_000_000)
        line += f"; budget ${max_cost_usd:,.4f} for model calls, ${left:,.4f} left"
    return line


def report_status(values: dict[str, Any]) -> str:
    """The finished run's `status`; a thread finished by an older version has none, and is
    judged by its citation check as `finalize` would have judged it."""
    if status := values.get("status"):
        return str(status)
    check = values.get("citation_check") or {}
    if check.get("sources_listed"):
        return "complete"
    return "unverified" if check.get("fabricated_removed") else "no_sources"


# How `runs` names a report status other than "complete" after `done`.
STATUS_WORDS = {"no_sources": "no sources", "unverified": "unverified"}


def done_status(values: dict[str, Any]) -> str:
    """`done` for a finished report; `done, no sources` (or its other status) for one
    that is not: the list of runs must not show an unsourced report as a plain success."""
    status = report_status(values)
    return "done" if status == "complete" else f"done, {STATUS_WORDS.get(status, status)}"
