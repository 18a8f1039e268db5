"""A run whose research found nothing usable: the report is published, marked by `status`."""

from __future__ import annotations

import pytest

from tests.support.brain import (
    COULD_NOT_FIND,
    INVENTED,
    ResearchBrain,
    UnsourcedBrain,
    no_results,
)
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import research_run, serve


@pytest.mark.parametrize(
    ("cites", "status"), [("nothing", "no_sources"), ("invented", "unverified")]
)
async def test_a_report_without_a_retrieved_source_is_marked_in_the_output_state(
    monkeypatch: pytest.MonkeyPatch, cites: str, status: str
) -> None:
    with FakeTavilyServer(corpus=no_results) as tavily:
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        with serve(UnsourcedBrain(cites=cites), monkeypatch):
            out = await research_run({"search_provider": "tavily"})
    assert tavily.queries, "the researchers searched"
    assert out["status"] == status
    assert out["citation_check"]["sources_listed"] == 0
    assert INVENTED not in out["final_report"]
    if cites == "nothing":
        assert out["final_report"].strip() == COULD_NOT_FIND


async def test_a_report_citing_what_was_retrieved_is_complete(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    with serve(ResearchBrain(), monkeypatch):
        out = await research_run({"search_provider": "tavily"})
    assert out["status"] == "complete" and out["citation_check"]["sources_listed"] > 0
