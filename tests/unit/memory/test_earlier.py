"""Earlier reports found again on real Chroma and MiniLM: which, and in which order."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.memory import Location, Store, open_store
from deep_research.memory.earlier import recency_boost, similar_reports
from deep_research.memory.research import DAY, remember

NOW = 1_800_000_000.0
HEAT_PUMPS = "Are heat pumps worth it in Norway?"


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await open_store(Location(path=tmp_path / "memory"))


def test_the_recency_boost_halves_in_a_day_and_never_passes_one() -> None:
    assert recency_boost(0) == 1.0
    assert recency_boost(DAY) == 0.5
    assert recency_boost(-5 * DAY) == 1.0  # a clock set back: today's, not more
    assert recency_boost(9 * DAY) == pytest.approx(0.1)


async def test_recency_orders_similar_reports_and_the_threshold_decides(store: Store) -> None:
    report = "# Heat pumps in Norway\n\nThey pay off within eight years in most of Norway."
    await remember(
        store, thread_id="old", question=HEAT_PUMPS, report=report, cited=[], now=NOW - 20 * DAY
    )
    await remember(
        store,
        thread_id="new",
        question=HEAT_PUMPS + " (2026)",
        report=report,
        cited=[],
        now=NOW - DAY,
    )
    await remember(
        store,
        thread_id="off",
        question="Best sourdough hydration?",
        report="# Bread\n\nSeventy percent.",
        cited=[],
        now=NOW,
    )
    found = await similar_reports(
        store, "Do heat pumps pay off in Norway?", min_similarity=0.5, now=NOW
    )
    # The older report is at least as similar (same question), the newer one comes first.
    assert [r.thread_id for r in found] == ["new", "old"]
    assert found[1].similarity >= 0.5 and found[0].date == "2027-01-14"
    assert found[0].score > found[1].score
    assert "eight years" in found[0].excerpt
    # Raw similarity qualifies: a threshold above both leaves nothing, whatever the boost.
    highest = max(r.similarity for r in found)
    assert (
        await similar_reports(
            store, "Do heat pumps pay off in Norway?", min_similarity=highest + 0.01, now=NOW
        )
        == []
    )
