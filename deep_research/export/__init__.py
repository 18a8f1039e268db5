"""A saved report as HTML, PDF or Word, every citation still a working link.

One door: `export(report, "pdf", out=None, info=None) -> Path` writes the file (a report
`Path`, or the Markdown as text with `out`), and `render(markdown, "html") -> bytes` gives
its bytes. `ReportInfo` carries what the run knew (question, thread, models, searches,
the citation check) for the title and the footer. PDF needs WeasyPrint and Word needs
pandoc, both in the `export` extra; HTML needs nothing more ([Exports](docs/export.md)).
"""

from deep_research.export.formats import (
    FORMATS,
    MEDIA_TYPES,
    ExportError,
    Format,
    check_available,
    check_format,
    export,
    read_report,
    render,
)
from deep_research.export.needs import ExportUnavailableError
from deep_research.export.report import ReportInfo

__all__ = [
    "FORMATS",
    "MEDIA_TYPES",
    "ExportError",
    "ExportUnavailableError",
    "Format",
    "ReportInfo",
    "check_available",
    "check_format",
    "export",
    "read_report",
    "render",
]
