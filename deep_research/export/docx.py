"""The report's HTML page as a Word file, by pandoc (the binary `pypandoc-binary` ships).

Pandoc reads the export's own HTML, not the Markdown: the page has already dropped raw
HTML, links of other schemes and images, so Word gets exactly what the HTML export shows.
`--sandbox` lets pandoc read and write nothing but its input and output (no image or
include fetched), and its runtime is bounded in time and heap, so a hostile report costs
at most `PANDOC_SECONDS` and `PANDOC_HEAP`.
"""

from __future__ import annotations

import subprocess

from deep_research.errors import DeepResearchError
from deep_research.export.needs import require

PANDOC_SECONDS = 120  # a 2,000-citation report takes a few seconds (benchmarks/export.py)
PANDOC_HEAP = "1500m"  # Haskell heap cap: pandoc stops with an error past it


class PandocError(DeepResearchError, RuntimeError):
    """Pandoc failed or ran past its time or memory bound; the message says which."""


def docx_bytes(page: str) -> bytes:
    """`page` (the export's HTML) as a .docx document."""
    pypandoc = require("pypandoc", "Word")
    command = [
        pypandoc.get_pandoc_path(),
        *("+RTS", f"-M{PANDOC_HEAP}", "-RTS"),
        "--sandbox",
        *("--from", "html", "--to", "docx", "--output", "-"),
    ]
    try:
        done = subprocess.run(
            command, input=page.encode("utf-8"), capture_output=True, timeout=PANDOC_SECONDS
        )
    except subprocess.TimeoutExpired:
        raise PandocError(f"pandoc took over {PANDOC_SECONDS} s; the report is too large") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()[-400:]
        raise PandocError(f"pandoc could not write the Word file (exit {done.returncode}): {said}")
    return done.stdout
