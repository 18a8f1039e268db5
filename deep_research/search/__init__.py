"""Search for the researchers: one door in, `session`.

`session(context, run_key=thread, owner=call id, topic=..., grant=...)` is an async
context manager around one search step; its `answer(queries, max_chars)` runs the queries
in parallel (per-run cache, the step's grant of searches, the fallback chain, MiniLM
relevance, the top pages fetched through the address guard and extracted, those whose
scripts write their text rendered in headless Chromium when RENDER_PAGES is on) and returns an
`Answer`: the text the model reads, every web string inside data fences; the `Source`s
retrieved; a trace of what happened on the way. Each search request and page fetch is a
durable call (runtime/durable.py): answered before a stop, it is not sent again on resume.
The search cap's shares and grants are in `budget`, re-exported here; so is `clean`, which
tells a query worth sending from junk (an empty string, a placeholder, markup).
`enabled_sources` names the sources a researcher may pick for a search (`answer(...,
source=)`), more on a topic the orchestrator marks scholarly (`offers_scholarly`: may it),
`SOURCE_USES` what each is for; `dated_sources` those that can limit a search to a range
of publication years (`answer(..., years=)`).
"""

from deep_research.search.budget import Grant, split
from deep_research.search.cleaning import Cleaned, clean
from deep_research.search.step import (
    SOURCE_USES,
    Answer,
    SearchSession,
    dated_sources,
    enabled_sources,
    offers_scholarly,
    session,
)

__all__ = [
    "SOURCE_USES",
    "Answer",
    "Cleaned",
    "Grant",
    "SearchSession",
    "clean",
    "dated_sources",
    "enabled_sources",
    "offers_scholarly",
    "session",
    "split",
]
