"""The library's worker with readers that do not bound themselves (`python -m` this):
what the worker's own time and memory limits must hold. A text file's name says what
its reader does: `stall` never returns, `hog` asks for 10 GB, `crash` dies by a signal;
DOCX tables are read as python-docx lays them out (a cell once per column it spans)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from deep_research.library import readers, worker


def _text(raw: bytes, path: Path) -> readers.Read:
    if "stall" in path.name:
        while True:
            time.sleep(1)
    if "hog" in path.name:
        return [readers.Section(str(bytearray(10_000_000_000)))], ""
    if "crash" in path.name:
        os.kill(os.getpid(), signal.SIGSEGV)
    return [readers.Section(raw.decode())], ""


def _docx_grid(raw: bytes, path: Path) -> readers.Read:
    import io

    import docx

    document = docx.Document(io.BytesIO(raw))
    cells = [cell.text for table in document.tables for row in table.rows for cell in row.cells]
    return [readers.Section(" | ".join(cells))], ""


if __name__ == "__main__":
    readers._READERS.update(text=_text, docx=_docx_grid)
    worker.main()
