"""The report's HTML page as a PDF, by WeasyPrint: real link annotations, selectable text.

WeasyPrint lays out the same page the HTML export writes (its print style), so the PDF
keeps every link the page keeps, text fragments and `#page=N` included, as URI actions a
PDF reader opens. Its URL fetcher is one that allows no scheme: the page references
nothing, and should a stylesheet or an image name a URL anyway, it is not fetched.
"""

from __future__ import annotations

import logging

from deep_research.export.needs import require

# WeasyPrint warns for each resource it did not load and each CSS rule it ignores; a
# report that tried to load something is already answered by loading nothing.
logging.getLogger("weasyprint").setLevel(logging.ERROR)


def pdf_bytes(page: str) -> bytes:
    """`page` (the export's HTML) laid out as a PDF document."""
    weasyprint = require("weasyprint", "PDF")
    from weasyprint.urls import URLFetcher

    nothing = URLFetcher(allowed_protocols=(), allow_redirects=False, timeout=1)
    document = weasyprint.HTML(string=page, base_url=None, url_fetcher=nothing)
    pdf: bytes = document.write_pdf()
    return pdf
