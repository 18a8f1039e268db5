"""What reading documents in the library's child process costs next to reading them in
process: 100 Markdown notes, 20 ten-page PDFs and 20 Word files, read once each way (the
child already started), and the child's start-up with its first file.

Run from the repository root: `python -m benchmarks.library_reading`.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from deep_research.library.readers import read_document
from deep_research.library.worker import Reader
from tests.support.documents import write_docx, write_pdf


def files(folder: Path) -> list[tuple[Path, bytes]]:
    made = []
    for i in range(100):
        note = folder / f"note{i}.md"
        note.write_text(f"# Note {i}\n\n" + "Heat pumps work in the cold. " * 200)
        made.append(note)
    for i in range(20):
        made.append(write_pdf(folder / f"p{i}.pdf", [f"Page {j} on tides." for j in range(10)]))
        made.append(write_docx(folder / f"w{i}.docx", ["A paragraph."] * 20))
    return [(path, path.read_bytes()) for path in made]


async def in_child(batch: list[tuple[Path, bytes]]) -> tuple[float, float]:
    start = time.perf_counter()
    async with Reader() as reader:
        await reader.read(*batch[0])
        started = time.perf_counter()
        for path, raw in batch:
            await reader.read(path, raw)
        return started - start, time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        batch = files(Path(folder))
        start = time.perf_counter()
        for path, raw in batch:
            read_document(path, raw)
        alone = time.perf_counter() - start
        start_up, child = asyncio.run(in_child(batch))
    extra = (child - alone) / len(batch) * 1000
    print(f"{len(batch)} files: in process {alone:.2f} s, in the child {child:.2f} s")
    print(f"{extra:+.1f} ms a file; the child's start and first file {start_up:.2f} s")


if __name__ == "__main__":
    main()
