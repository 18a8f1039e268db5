"""Citations checked in code: one door in, `check_report`.

`check_report(report, sources) -> CheckedReport`: the report's Markdown and the `Source`s
retrieved in the run go in; out come the report with every link to a page never retrieved
removed (its words kept), every text fragment not found on its page dropped, quotes in
link titles built into fragments, unchecked images and raw HTML removed, hygiene fixed
and one `## Sources` list appended, plus a `CitationCheck` summary of what changed. It
never raises. The registry, fragment and URL helpers are exported for tests and evals.
`quoted_evidence(focus, sources)` is the floor's: the passages read that bear most on a
focus, quoted and linked, for a report or findings that cite nothing read.
"""

from deep_research.citations.check import check_report
from deep_research.citations.fragments import RetrievedText, TextDirective, fragment_of
from deep_research.citations.quoting import quoted_evidence
from deep_research.citations.registry import RegisteredSource, SourceRegistry
from deep_research.citations.verify import CheckedReport

__all__ = [
    "CheckedReport",
    "RegisteredSource",
    "RetrievedText",
    "SourceRegistry",
    "TextDirective",
    "check_report",
    "fragment_of",
    "quoted_evidence",
]
