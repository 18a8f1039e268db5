"""What stopped a report from citing a retrieved page, and what to try: the real cause,
read from the run's state and its traffic log, never a search provider for a model's failure.

Causes, first match wins: the cost budget stopped the research; pages were read but the
report cites none; the search cap allowed no search; memory answered and was not cited;
researchers failed before searching; the model made no research call; the researchers sent
no usable search (or the cap refused them all); every search failed; the library gave
nothing; the searches found nothing worth keeping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from deep_research.cli.counts import page_keys, totals
from deep_research.config.names import LIBRARY_PROVIDER
from deep_research.text.wording import plural

if TYPE_CHECKING:
    from deep_research.config.settings import Context

DOCTOR = "`deep-research doctor` checks whether the model calls tools"


def budget_words(context: Context) -> str:
    """The cost budget that applied, as the user set it."""
    return f"the cost budget (--max-cost {context.max_cost_usd:g}: ${context.max_cost_usd:,.4f})"


def unsourced(
    status: str,
    values: Mapping[str, Any],
    context: Context,
    records: Iterable[Mapping[str, Any]] = (),
) -> str:
    """What a report that is not "complete" lacks, why, and what to try."""
    from deep_research.runtime.progress_lines import UNSOURCED

    lack = UNSOURCED.get(status, f"its status is {status!r}")
    return f": {lack}. {cause(values, context, list(records))}"


def cause(values: Mapping[str, Any], context: Context, records: list[Mapping[str, Any]]) -> str:
    """The real cause of a report without a retrieved source, and what to try."""
    if values.get("budget_note") and context.max_cost_usd is not None:
        # The thread is finished: a resume would run nothing, so the advice is a new run.
        return (
            f"{budget_words(context).capitalize()} stopped the research before it found a page "
            "to cite, not the search. Run the question again with a bigger budget: "
            f'deep-research --max-cost {2 * context.max_cost_usd:g} "QUESTION".'
        )
    pages = len(page_keys(values.get("sources") or []))
    if pages:
        return (
            f"The research read {plural(pages, 'page')}, but the report cites none of them: "
            "the model wrote it without citing what was read. A larger or more capable "
            "model (--set orchestrator_model=...) writes cited reports."
        )
    cap = context.max_searches_per_run
    if cap <= 0:
        return "The search cap allowed no search (--max-searches 0): run it again with some."
    run = totals(records)
    started = any(r.get("event") == "research_started" for r in records)
    if not run.searches and run.remembered:
        return (
            f"Memory answered {plural(run.remembered, 'query')}, and nothing it gave was "
            "cited: run it again without memory (--set use_memory=false) to search the web."
        )
    if not run.searches and run.researchers_failed:
        return (
            f"{plural(run.researchers_failed, 'researcher')} failed before searching: "
            "`deep-research replay THREAD` shows why."
        )
    if not run.searches:
        return _nothing_sent(started, run.searches_refused, cap)
    return _nothing_found(run.searches, run.searches_failed, cap, context.search_provider)


def _nothing_sent(started: bool, refused: int, cap: int) -> str:
    if not started:
        return (
            "The model made no research call: it answered from its own words, without "
            f"searching (a model that cannot call tools does this; {DOCTOR}). Not the search "
            "provider: use a model or server that calls tools."
        )
    if refused:
        return (
            f"The search cap was reached before a search was sent ({refused} refused): run "
            f"it again with more searches (--max-searches {2 * cap})."
        )
    return (
        "The researchers sent no usable search (no search call, or only empty, placeholder "
        f"or markup queries): the model did not research ({DOCTOR}). Not the search "
        "provider: use a model or server that calls tools."
    )


def _nothing_found(sent: int, failed: int, cap: int, provider: str) -> str:
    searches = plural(sent, "search")
    more = f" or more searches (--max-searches {2 * cap})" if sent >= cap else ""
    if failed >= sent:
        return (
            f"Every search failed ({searches}): `deep-research replay THREAD` shows why; "
            "try another search provider (--search)."
        )
    if provider == LIBRARY_PROVIDER:
        return (
            f"Your library gave nothing for {searches}: it may be empty or hold nothing on "
            "this question (deep-research library list; deep-research library add PATH)."
        )
    return (
        f"The {searches} sent found nothing worth keeping: try a wider question, another "
        f"search provider (--search){more}."
    )
