"""The report as a file in the tool's result: an embedded resource beside the Markdown.

With `format` html, pdf or docx the caller gets the Markdown as text (what a calling model
reads) and the file as an `EmbeddedResource` (what its client saves or shows): HTML as
text, PDF and Word as base64. The file is made by `deep_research.export`, off the event
loop: a PDF of a long report takes seconds of CPU.
"""

from __future__ import annotations

import asyncio
import base64
from datetime import date
from typing import Literal

from mcp.types import BlobResourceContents, EmbeddedResource, TextContent, TextResourceContents

from deep_research.export import MEDIA_TYPES, ReportInfo, library_paths, render
from deep_research.mcp.run import Answer

ReportFormat = Literal["markdown", "html", "pdf", "docx"]


async def with_file(
    answer: Answer, to: ReportFormat, question: str
) -> str | list[TextContent | EmbeddedResource]:
    """The answer's text alone for markdown; else the text and the report as a file."""
    if to == "markdown":
        return answer.text
    values = answer.values
    searches = values.get("searches_used")
    check = values.get("citation_check")
    sources = values.get("sources")
    # Only the library makes `file:` sources: the documents this run read may be linked.
    read = (
        [s.get("url") for s in sources if isinstance(s, dict)] if isinstance(sources, list) else []
    )
    info = ReportInfo(
        question=question,
        date=date.today().isoformat(),
        thread_id=answer.thread_id,
        searches=searches if isinstance(searches, int) else None,
        citation_check=check if isinstance(check, dict) else None,
        library=library_paths(read),
    )
    data = await asyncio.to_thread(render, answer.text, to, info)
    uri = f"deep-research://reports/{answer.thread_id}.{to}"
    resource: TextResourceContents | BlobResourceContents
    if to == "html":
        resource = TextResourceContents(uri=uri, mime_type=MEDIA_TYPES[to], text=data.decode())
    else:
        blob = base64.b64encode(data).decode("ascii")
        resource = BlobResourceContents(uri=uri, mime_type=MEDIA_TYPES[to], blob=blob)
    return [TextContent(type="text", text=answer.text), EmbeddedResource(resource=resource)]
