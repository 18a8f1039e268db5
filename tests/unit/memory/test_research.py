"""Memory of past research on real Chroma and MiniLM: what is found again, in which order."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from deep_research.memory import (
    PASSAGES_COLLECTION,
    REPORTS_COLLECTION,
    Location,
    Store,
    chunks,
    open_store,
)
from deep_research.memory.earlier import similar_reports
from deep_research.memory.research import (
    CitedPage,
    forget,
    remember,
    remembered_threads,
)

NOW = 1_800_000_000.0
HEAT_PUMPS = "Are heat pumps worth it in Norway?"
PAGE = CitedPage(
    "https://example.org/heat-pumps",
    "Heat pumps in cold climates",
    ["Air-source heat pumps in Norway keep most of their output at minus fifteen degrees."],
)


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await open_store(Location(path=tmp_path / "memory"))


async def test_remembering_again_does_not_duplicate(store: Store) -> None:
    for _ in range(3):
        await remember(
            store, thread_id="t1", question=HEAT_PUMPS, report="# R\n\nText.", cited=[PAGE], now=NOW
        )
    reports = await store.items(REPORTS_COLLECTION)
    passages = await store.items(PASSAGES_COLLECTION)
    assert len({h.id for h in reports}) == len(reports) == 2  # the question and one chunk
    assert len(passages) == 1
    assert await remembered_threads(store) == [("t1", "2027-01-15", HEAT_PUMPS, ())]


@pytest.mark.parametrize(
    "url", [PAGE.url, "https://user:hunter2pass@example.org/p"], ids=["page", "redacted-address"]
)
async def test_a_shorter_rerun_leaves_no_old_chunk(store: Store, url: str) -> None:
    # Also for a page stored under its redacted address (a password in its URL), which
    # the lookup of earlier entries, by the address as cited, does not find.
    long_report = "# R\n\n" + "\n\n".join(f"Paragraph {i} on heat pumps. " * 40 for i in range(8))
    long_page = CitedPage(url, PAGE.title, [f"Page paragraph {i}. " * 60 for i in range(8)])
    await remember(
        store, thread_id="t1", question=HEAT_PUMPS, report=long_report, cited=[long_page]
    )
    many = len(await store.items(REPORTS_COLLECTION)), len(await store.items(PASSAGES_COLLECTION))
    assert min(many) > 2
    short = CitedPage(url, PAGE.title, PAGE.texts)
    await remember(
        store, thread_id="t2", question=HEAT_PUMPS, report="# R\n\nShort.", cited=[short]
    )
    reports = sorted(h.text for h in await store.items(REPORTS_COLLECTION))
    assert len(reports) == 2 and HEAT_PUMPS in reports and "Short." in reports[0] + reports[1]
    assert [h.text for h in await store.items(PASSAGES_COLLECTION)] == PAGE.texts


async def test_five_reruns_of_a_question_keep_one_report_naming_every_thread(store: Store) -> None:
    """Asked again in new threads (and written a little differently), a question keeps one
    report, the newest, and its page one copy: recall shows the newest thread, an id the
    user can resume or replay, and the listing names the runs it replaced."""
    asked = [HEAT_PUMPS, HEAT_PUMPS.lower(), f"  {HEAT_PUMPS[:-1]}  ", HEAT_PUMPS, HEAT_PUMPS]
    for n, question in enumerate(asked, start=1):
        report = f"# Heat pumps in Norway\n\nRun {n}: they pay off within eight years."
        await remember(
            store, thread_id=f"t{n}", question=question, report=report, cited=[PAGE], now=NOW + n
        )
    firsts = await store.items(REPORTS_COLLECTION, where={"chunk": 0})
    assert len(firsts) == 1 and len(await store.items(REPORTS_COLLECTION)) == 2
    assert len(await store.items(PASSAGES_COLLECTION)) == 1
    assert await remembered_threads(store) == [
        ("t5", "2027-01-15", HEAT_PUMPS, ("t4", "t3", "t2", "t1"))
    ]
    (found,) = await similar_reports(store, HEAT_PUMPS, min_similarity=0.5, now=NOW)
    assert found.thread_id == "t5" and "Run 5" in found.excerpt
    # Research from the library alone is another entry: it must not replace the web one.
    await remember(
        store,
        thread_id="lib",
        question=HEAT_PUMPS,
        report="# R",
        cited=[],
        search_provider="library",
    )
    assert {t.thread for t in await remembered_threads(store)} == {"t5", "lib"}


async def test_forget_removes_what_a_thread_stored_a_rerun_of_its_question_included(
    store: Store,
) -> None:
    """One entry per question: forgetting any thread that researched it forgets the entry
    (the rerun was shown the earlier report and may cite its pages), and forgets the pages
    that thread stored; another question's report and pages stay."""
    other = CitedPage("https://example.org/tides", "Tides", ["Spring tides follow the moon."])
    await remember(store, thread_id="keep", question="Why tides?", report="# T", cited=[other])
    for thread in ("first", "rerun"):
        await remember(
            store, thread_id=thread, question=HEAT_PUMPS, report="# R", cited=[PAGE], now=NOW
        )
    assert await forget(store, "first") > 0  # the older run, whose copy the rerun replaced
    assert [t.thread for t in await remembered_threads(store)] == ["keep"]
    assert {h.metadata["url"] for h in await store.items(PASSAGES_COLLECTION)} == {other.url}
    assert await forget(store, "rerun") == 0  # nothing of it is left
    assert await forget(store, "keep") > 0
    assert await store.items(REPORTS_COLLECTION) == []


async def test_remembering_splits_text_off_the_event_loop(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Splitting counts tokens with MiniLM's tokenizer (and loads it the first time): on
    the loop it would stall every other run a server is serving."""
    loop_thread = threading.get_ident()
    threads: list[int] = []
    real_split = chunks.split

    def split(text: str) -> list[str]:
        threads.append(threading.get_ident())
        return real_split(text)

    monkeypatch.setattr(chunks, "split", split)
    # Nothing kept from other tests' splits (`kept_split` cuts with the splitter itself).
    monkeypatch.setattr(chunks, "kept_split", lambda text, last=False: split(text))
    await remember(store, thread_id="t", question=HEAT_PUMPS, report="# R\n\nText.", cited=[PAGE])
    assert len(threads) == 2 and loop_thread not in threads


async def test_a_report_is_stored_as_read_without_link_targets_or_its_sources(store: Store) -> None:
    fragment = "#:~:text=keep%20most%20of%20their%20output"
    report = (
        "# Heat pumps in Norway\n\nAir-source heat pumps [keep most of their output]"
        f"(https://example.org/heat-pumps{fragment}) at minus fifteen degrees.\n\n"
        "## Sources\n\n1. [Heat pumps in cold climates](https://example.org/heat-pumps)\n"
    )
    await remember(store, thread_id="t1", question=HEAT_PUMPS, report=report, cited=[PAGE])
    chunks_stored = [
        h.text for h in await store.items(REPORTS_COLLECTION) if h.metadata["chunk"] != 0
    ]
    assert chunks_stored == [
        "Heat pumps in Norway\n\nAir-source heat pumps keep most of their output at minus"
        " fifteen degrees."
    ]
    found = await similar_reports(store, "output of heat pumps in deep frost", min_similarity=0.3)
    assert [r.thread_id for r in found] == ["t1"] and "## Sources" in found[0].excerpt


async def test_a_failed_write_is_raised_once_the_other_write_has_ended(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report and its pages are written at once: when one fails, `remember` raises only
    after the other is done, so no write is under way once its failure is said."""
    from deep_research.memory import MemoryUnavailable

    real_put = Store._put
    ended: list[str] = []
    pages_going = threading.Event()

    def put(self: Store, collection: str, items: list[tuple[str, list[object]]]) -> list[int]:
        if collection == REPORTS_COLLECTION:
            pages_going.wait(5)
            raise ValueError("a write refused")  # `Store._run` makes it MemoryUnavailable
        pages_going.set()
        written = real_put(self, collection, items)  # type: ignore[arg-type]
        ended.append(collection)
        return written

    monkeypatch.setattr(Store, "_put", put)
    with pytest.raises(MemoryUnavailable):
        await remember(
            store, thread_id="t", question=HEAT_PUMPS, report="# R\n\nText.", cited=[PAGE]
        )
    assert ended == [PASSAGES_COLLECTION]
