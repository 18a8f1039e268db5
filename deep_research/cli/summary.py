"""The closing summary's lines: the counts (`cli/counts.py`), the cost, the citation
check and the report's status, for the summary and `replay`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deep_research.cli.counts import Totals, cited_sources, page_keys
from deep_research.errors import OldDataError
from deep_research.text.wording import plural


def totals_lines(totals: Totals, cap: int | None = None, counted: int | None = None) -> list[str]:
    """The summary's lines of calls, searches, fetches and memory; with the run's search
    `cap`, the searches line says how many of it were sent, and names any the budget in
    state (`counted`) holds beyond them: a search step stopped before it ended, whose
    searches may have gone out."""
    out = []
    for role, usage in sorted(totals.roles.items()):
        errors = f", {usage.errors} failed" if usage.errors else ""
        # "~": some of the count is estimated (no usage came back); the cost line says how many.
        guess = "~" if usage.estimated_in or usage.estimated_out else ""
        tokens_in = guess + plural(usage.tokens_in + usage.estimated_in, "token")
        tokens_out = f"{guess}{usage.tokens_out + usage.estimated_out:,}"
        out.append(
            f"{role:<13} {plural(usage.calls, 'call'):>9}  {tokens_in:>15} in  "
            f"{tokens_out:>7} out{' (estimated)' if guess else ''}{errors}"
        )
    refused = f", {totals.searches_refused} refused at the cap" if totals.searches_refused else ""
    failed = f", {totals.searches_failed} failed" if totals.searches_failed else ""
    of_cap = f" of {cap} sent" if cap is not None else ""
    unsure = (counted or 0) - totals.searches
    stopped = (
        f"; {unsure} more counted against the cap for a search step that was stopped "
        "(they may have been sent)"
        if unsure > 0
        else ""
    )
    reused = (
        f", {totals.reused} reused (answered from this run's earlier results)"
        if totals.reused
        else ""
    )
    line = f"searches      {totals.searches}{of_cap}{reused}{failed}{refused}{stopped}"
    out.append(line)
    out.append(f"fetches       {totals.fetches}")
    if totals.mcp_calls:
        failed = f", {totals.mcp_failed} failed" if totals.mcp_failed else ""
        out.append(f"mcp tools     {plural(totals.mcp_calls, 'call')}{failed}")
    if totals.memory:
        answered = f", {plural(totals.remembered, 'query')} answered from it"
        answered = answered if totals.remembered else ""
        saved = ", report remembered" if totals.memory_saved else ""
        if totals.memory_skipped and not totals.memory_saved:
            saved = f", report not remembered (status {totals.memory_skipped}: not research)"
        out.append(f"memory        {totals.memory}{answered}{saved}")
    if totals.researchers_failed:
        out.append(f"researchers   {totals.researchers_failed} failed (see 'Research gaps')")
    return out + model_trouble_lines(totals)


def model_trouble_lines(totals: Totals) -> list[str]:
    """What the model calls needed beyond asking (retries, cut or mended replies), and what
    the floor did in code where the model did not: no line when nothing happened."""
    out = []
    said = [
        plural(totals.retries, "retry") if totals.retries else "",
        plural(totals.timeouts, "time-out") if totals.timeouts else "",
        plural(totals.cuts, "reply") + " cut at the limit" if totals.cuts else "",
        plural(totals.repairs, "reply") + " mended" if totals.repairs else "",
    ]
    if any(said):
        out.append(f"model calls   {', '.join(part for part in said if part)}")
    if totals.floor:
        acts = ", ".join(f"{act} {count}" for act, count in sorted(totals.floor.items()))
        out.append(f"floor         the floor acted: {acts}")
    return out


def citation_line(values: Mapping[str, Any]) -> str:
    """What citation verification kept and removed (`citation_check` from `finalize`)."""
    check = values["citation_check"]
    fragments = check["fragments_kept"] + check["fragments_built"]
    line = (
        f"citations     {check['links_kept']} kept, {check['fabricated_removed']} removed "
        f"(never retrieved); text fragments {fragments} kept, "
        f"{check['fragments_dropped']} dropped"
    )
    # Images and raw HTML that pointed outside the retrieved sources (rare; shown when > 0).
    unchecked = check["images_removed"] + check["html_removed"]
    return f"{line}; {plural(unchecked, 'image/HTML link')} removed" if unchecked else line


def cost_line(totals: Totals, max_cost_usd: float | None, counted_micros: int = 0) -> str:
    """What the thread cost, per role (searches as `search`), as the panel and `runs` count
    it; with a budget, what the state counts of it as spent (`cost_counted`, a stopped
    call at its reservation included) and what is left."""

    def dollars(amount: float | None) -> str:
        return "unknown" if amount is None else f"${amount:,.4f}"

    per_role = ", ".join(
        f"{role} {dollars(usd)}" for role, usd in sorted(totals.usd_by_role.items())
    )
    line = f"cost          {dollars(totals.usd)}" + (f" ({per_role})" if per_role else "")
    if totals.estimated:
        line += f"; {totals.estimated} calls' tokens estimated"
    if max_cost_usd is not None:
        left = max(0.0, max_cost_usd - counted_micros / 1_000_000)
        line += f"; budget ${max_cost_usd:,.4f} for model calls, ${left:,.4f} left"
    return line


def sources_lines(values: Mapping[str, Any]) -> list[str]:
    """The pages the run retrieved and the sources its report cites (`cli/counts.py`)."""
    cited = cited_sources(values.get("citation_check"))
    listed = "none: no report was checked" if cited is None else f"{cited} cited"
    return [
        f"pages         {len(page_keys(values.get('sources', [])))} retrieved",
        f"sources       {listed} (the report's Sources list)",
    ]


class OldThreadError(OldDataError):
    """A finished thread whose state has no report `status`."""


def report_status(values: Mapping[str, Any], thread_id: str = "") -> str:
    """The finished run's `status` (`finalize` sets it with the report)."""
    if "status" not in values:
        raise OldThreadError(f"thread {thread_id or '?'}", "start its question again")
    return str(values["status"])


# How `runs` names a report status other than "complete" after `done`.
STATUS_WORDS = {"no_sources": "no sources", "unverified": "unverified"}


def done_status(values: Mapping[str, Any], thread_id: str = "") -> str:
    """`done` for a finished report; `done, no sources` (or its other status) for one
    that is not: the list of runs must not show an unsourced report as a plain success."""
    status = report_status(values, thread_id)
    return "done" if status == "complete" else f"done, {STATUS_WORDS.get(status, status)}"
