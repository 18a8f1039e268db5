"""What a researcher reads after a search: web text fenced as data, within a character budget.

Web text (titles, snippets, page text) may try to instruct the model. It is fenced by
delimiters carrying a random nonce chosen per tool call (`text/fences.py`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from deep_research.search.query import Finding, QueryOutcome
from deep_research.text.extract import clip
from deep_research.text.fences import defuse, fence

MIN_EXCERPT = 300  # a page excerpt shorter than this is not worth its header
ENTRY_OVERHEAD = 160  # characters of headers (and the query's delimiters) around each entry
# A provider error worth showing fits in a line; longer text is the provider's page body.
MAX_NOTE_CHARS = 300


def _outside(text: str) -> str:
    return clip(defuse(" ".join(text.split())), MAX_NOTE_CHARS)


def web_link(title: str, url: str) -> str:
    """A Markdown link to a page found on the web, for inside a fence: brackets in the title
    would end the label early."""
    label = defuse(title).replace("[", "(").replace("]", ")")
    return f"[{label}]({defuse(url)})"


def page_allowance(
    outcomes: Sequence[QueryOutcome],
    max_page_chars: int,
    max_chars: int,
    shown_before: Collection[str] = (),
    listed_before: Collection[str] = (),
) -> int:
    """Characters each page excerpt may use so the whole message stays within `max_chars`."""
    pages: set[str] = set()
    listed = set(listed_before)
    fixed = 0
    for outcome in outcomes:
        fixed += len(outcome.query) + sum(len(note) for note in outcome.notes) + 120
        for finding in outcome.findings:
            url = finding.result.url
            text = bool(finding.page and finding.page.text)
            if url in shown_before or url in pages or (url in listed and not text):
                continue  # one line for all of them (see `_render_query`)
            listed.add(url)
            if text:
                pages.add(url)
                fixed += len(finding.result.title) + len(url) + ENTRY_OVERHEAD
            else:
                fixed += len(finding.result.title) + len(url)
                fixed += len(finding.result.content) + ENTRY_OVERHEAD
    if not pages:
        return max_page_chars
    return max(MIN_EXCERPT, min(max_page_chars, (max_chars - fixed) // len(pages)))


def results_message(
    outcomes: Sequence[QueryOutcome],
    *,
    nonce: str,
    max_page_chars: int,
    max_chars: int,
    shown_before: Collection[str] = (),
    listed_before: Collection[str] = (),
) -> str:
    """The tool message for one web_search call, at most `max_chars` characters long.

    A page whose text an earlier message gave this researcher (`shown_before`), or an
    earlier query of this message, is counted, not sent again: the model still has its text
    and link, and a small server reads them only once. So is a result listed before
    (`listed_before`: a snippet) that brings no page text now.
    """
    allowance = page_allowance(outcomes, max_page_chars, max_chars, shown_before, listed_before)
    shown: set[str] = set(shown_before)
    listed: set[str] = set(listed_before)
    sections = [_render_query(outcome, nonce, allowance, shown, listed) for outcome in outcomes]
    text = "\n\n".join(sections) or "No searches were run."
    if len(text) > max_chars:  # a last guard: snippets alone can exceed the budget
        text = clip(text, max_chars - 60) + "\n(Results cut to fit this turn's budget.)"
    return text


def _render_query(
    outcome: QueryOutcome, nonce: str, allowance: int, shown: set[str], listed: set[str]
) -> str:
    # Notes and errors can quote a search provider's own error text: outside the fences,
    # so defused and kept short.
    lines = [f'## "{defuse(outcome.query)}"', *(_outside(note) for note in outcome.notes)]
    if outcome.error:
        lines.append(_outside(outcome.error))
    elif not outcome.findings:
        lines.append("No relevant results." if outcome.dropped else "No results.")
    repeated = 0
    entries = []
    for number, finding in enumerate(outcome.findings, 1):
        url = finding.result.url
        text = bool(finding.page and finding.page.text and not finding.page.skipped)
        if url in shown or (url in listed and not text):
            # Its page text (or snippet) and link are in this researcher's history already,
            # which the model keeps: sending them again costs a small server a second reading.
            repeated += 1
            continue
        listed.add(url)
        entries.append(_render_finding(number, finding, allowance, shown))
    if entries:  # one fence for all of the query's results: per result, it cost a snippet's length
        lines.append(fence("\n\n".join(entries), nonce))
    if repeated:
        lines.append(f"({repeated} more results, shown above.)")
    if outcome.dropped:
        lines.append(f"({outcome.dropped} results below the relevance threshold were dropped.)")
    return "\n".join(lines)


def _render_finding(number: int, finding: Finding, allowance: int, shown: set[str]) -> str:
    """One result inside its query's fence: our label, then the web text."""
    result, page = finding.result, finding.page
    link = web_link(result.title, result.url)
    header = f"Result {number}"
    snippet = f"{link}\n{result.content}"
    if page is None:
        where = (
            "passage from your documents"
            if result.url.startswith("file:")
            else "abstract"
            if result.full_text_url  # its page shows the whole article
            else "abstract, the text of its page"
            if result.complete
            else "search snippet"
        )
        return f"{header}, {where}:\n{snippet}"
    if page.skipped:
        # Skip reasons are built from fixed words and sanitised names (fetch.skip_reason).
        return f"{header}, page not read ({page.skipped}); search snippet instead:\n{snippet}"
    shown.add(result.url)
    note = f" ({page.note})" if page.note else ""
    return f"{header}, page text{note}:\n{link}\n{clip(page.text, allowance)}"
