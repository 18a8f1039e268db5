"""A saved report as HTML, PDF or Word, every citation still a working link.

One door: `export(report, "pdf", out=None, info=None) -> Path` writes the file (a report
`Path`, or the Markdown as text with `out`), and `render(markdown, "html") -> bytes` gives
its bytes. `ReportInfo` carries what the run knew (question, thread, models, searches,
the citation check) for the title and the footer, and the library's documents a `file:`
link may open (`library_paths(urls)` reads them from source URLs). Rendering runs in a
child process bounded in time and memory (`ExportLimitError`). PDF needs WeasyPrint and
Word needs pandoc, both in the `export` extra; HTML needs nothing more
([Exports](docs/export.md)).
"""

from deep_research.export.bounded import ExportLimitError
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
from deep_research.export.report import ReportInfo, library_paths

__all__ = [
    "FORMATS",
    "MEDIA_TYPES",
    "ExportError",
    "ExportLimitError",
    "ExportUnavailableError",
    "Format",
    "ReportInfo",
    "check_available",
    "check_format",
    "export",
    "library_paths",
    "read_report",
    "render",
]
