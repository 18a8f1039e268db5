"""The library on a real Chroma store with real MiniLM: add, re-add, change, remove, search."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_chroma import Chroma

from deep_research.library import FileOutcome, add_paths, entries, remove_path
from deep_research.memory import LIBRARY_COLLECTION, Location, Piece, Store, open_store
from deep_research.search.library import LibraryProvider
from tests.support.documents import write_docx, write_pdf

SOLAR = "Solar panels in Germany produced 60 terawatt hours of electricity in 2023."
WIND = "Wind turbines in Denmark supply more than half of the electricity there."
HEAT = "Heat pumps keep working at minus twenty degrees, with a lower efficiency."


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await open_store(Location(path=tmp_path / "memory"))


def mixed_folder(root: Path) -> Path:
    docs = root / "docs"
    (docs / "sub").mkdir(parents=True)
    write_pdf(docs / "energy.pdf", [SOLAR, WIND])
    (docs / "heat.md").write_text(f"# Heat pumps\n\n{HEAT}\n")
    (docs / "sub" / "grid.html").write_text(
        "<html><body><article><p>Norway's grid relies on hydropower for about ninety "
        "percent of its demand, which keeps its prices low.</p></article></body></html>"
    )
    write_docx(docs / "sub" / "plan.docx", ["District heating reaches most homes in Denmark."])
    (docs / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    return docs


async def add(store: Store, *paths: Path) -> dict[str, FileOutcome]:
    seen: list[FileOutcome] = []
    report = await add_paths(store, list(paths), seen.append)
    assert seen == report.outcomes  # progress reported every file, as it went
    return {outcome.path.name: outcome for outcome in report.outcomes}


async def everything(store: Store) -> dict[str, tuple[str, str]]:
    """Each stored chunk id -> (path, text)."""
    return {hit.id: (hit.key, hit.text) for hit in await store.items(LIBRARY_COLLECTION)}


@pytest.mark.slow
async def test_a_mixed_folder_is_indexed_once_with_pdf_pages(store: Store, tmp_path: Path) -> None:
    docs = mixed_folder(tmp_path)
    first = await add(store, docs)
    assert {name: o.status for name, o in first.items()} == {
        "energy.pdf": "added",
        "heat.md": "added",
        "grid.html": "added",
        "plan.docx": "added",
        "photo.jpg": "unsupported",
    }
    assert first["energy.pdf"].chunks == 2
    stored = await everything(store)

    again = await add(store, docs, docs / "heat.md")  # a file named twice is one file
    assert {o.status for name, o in again.items() if name != "photo.jpg"} == {"unchanged"}
    assert await everything(store) == stored  # no duplicates, nothing rewritten

    listed = {Path(e.path).name: e for e in await entries(store)}
    assert set(listed) == {"energy.pdf", "heat.md", "grid.html", "plan.docx"}
    assert listed["energy.pdf"].pages == 2 and listed["energy.pdf"].kind == "pdf"

    # Found by meaning, at the right page, with the URL that opens it there.
    results = await LibraryProvider(store).search("wind power share in Denmark", 3)
    pdf = (docs / "energy.pdf").resolve().as_uri()
    assert results[0].url == f"{pdf}#page=2" and results[0].title == "energy.pdf, page 2"
    assert WIND in results[0].content


async def test_a_changed_file_is_indexed_again_and_a_removed_one_is_gone(
    store: Store, tmp_path: Path
) -> None:
    docs = mixed_folder(tmp_path)
    await add(store, docs)
    heat = docs / "heat.md"
    heat.write_text("# Heat pumps\n\nGround-source heat pumps need a borehole in the garden.\n")
    changed = await add(store, docs)
    assert changed["heat.md"].status == "updated"
    assert changed["energy.pdf"].status == "unchanged"
    texts = [text for key, text in (await everything(store)).values() if key == str(heat)]
    assert len(texts) == 1 and "borehole" in texts[0] and "minus twenty" not in texts[0]

    assert await remove_path(store, docs / "sub") == [
        str((docs / "sub" / "grid.html").resolve()),
        str((docs / "sub" / "plan.docx").resolve()),
    ]
    assert await remove_path(store, heat) == [str(heat.resolve())]
    assert await remove_path(store, heat) == []
    left = {Path(key).name for key, _ in (await everything(store)).values()}
    assert left == {"energy.pdf"}
    results = await LibraryProvider(store).search("heat pumps in the cold", 5)
    assert all("energy.pdf" in result.url for result in results)


async def test_a_library_chunk_without_an_absolute_path_is_left_out_of_the_search(
    store: Store,
) -> None:
    """A shared server's other clients may write any key: one that names no absolute file
    has no `file:` URL, and must not end every search that meets it."""
    for key in ("relative/notes.md", "", "/home/me/heat.md"):
        await store.put(LIBRARY_COLLECTION, key, [Piece(HEAT, {"title": "heat.md"})])
    results = await LibraryProvider(store).search("heat pumps at minus twenty", 5)
    assert [r.url for r in results] == ["file:///home/me/heat.md"]


async def test_listing_and_removing_never_load_the_documents_text(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`library list` and `library remove` need paths and metadata: asking Chroma for every
    chunk's text as well would hold the whole library in memory at once."""
    await add(store, mixed_folder(tmp_path))
    asked: list[object] = []
    real_get = Chroma.get

    def get(self: Chroma, *args: object, **kwargs: object) -> dict[str, object]:
        asked.append(kwargs.get("include"))
        return real_get(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Chroma, "get", get)
    listed = await entries(store)
    assert len(listed) == 4 and all(entry.chunks >= 1 for entry in listed)
    assert await remove_path(store, tmp_path / "docs")
    assert await entries(store) == []
    assert asked and all(include is not None and "documents" not in include for include in asked)
