"""One run, one set of numbers: the live panel's last frame, each researcher's row, the
summary, `runs` and the report's `## Sources` list agree on searches sent, searches reused,
cost, pages retrieved and sources cited.

The issue's run showed `sources 9` live, `12` in the summary and 8 in the report: the panel
counted URL spellings from search events, the summary every page retrieved, the report the
pages it cites. Here two researchers retrieve one page under two spellings, ask one query
both (one search sent, one reused), and the report cites fewer pages than were retrieved.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from deep_research.cli.runs_table import show_runs
from tests.support.brain import ResearchBrain, _texts
from tests.support.cli import QUESTION, priced_env, screen_to_exit, start_in_terminal
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall
from tests.support.fakes.tavily_server import FakeTavilyServer, slugify

pytestmark = pytest.mark.slow  # starts subprocesses and servers

TOPICS = ["heat pump efficiency in cold climates", "heat pump installation costs"]
SHARED_QUERY = "heat pump basics"
# One page, two spellings (`page_key` makes them one): each researcher retrieves it.
SPELLINGS = ["https://shared.example/guide", "https://SHARED.example/guide/?utm_source=x"]
PAGES = 1 + 2 * 3  # the shared page, and two of its own for each of the three queries
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
HEADER = re.compile(
    r"searches (\d+)/(\d+)(?: · (\d+) reused)? · pages (\d+) · sources (\d+) · cost \$(\d+\.\d{4})"
)


def corpus(query: str, max_results: int) -> list[dict[str, Any]]:
    shared = SPELLINGS[1] if query == TOPICS[1] else SPELLINGS[0]
    urls = [shared, *(f"https://example.org/{slugify(query)}/{i}" for i in range(2))]
    return [
        {"url": url, "title": f"{query} {i}", "content": f"Facts about {query}.", "score": 0.9}
        for i, url in enumerate(urls)
    ]


class SharingBrain(ResearchBrain):
    """Each researcher asks its topic and the shared query in one call."""

    async def _research(self, body: dict[str, Any]) -> Reply:
        if not _texts(body, "tool"):
            topic = _texts(body, "user")[0]
            return Reply(tool_calls=[ToolCall("web_search", {"queries": [topic, SHARED_QUERY]})])
        return await super()._research(body)


def test_panel_rows_summary_runs_and_report_give_one_set_of_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        ScriptedOpenAIServer(SharingBrain(topics=TOPICS)) as llm,
        FakeTavilyServer(corpus) as tavily,
    ):
        env = {**priced_env(llm, tavily, tmp_path), "RELEVANCE_FILTER": "false"}
        argv = ["--no-clarify", "--max-searches", "10", "--set", "fetch_top_n=0", QUESTION]
        proc, leader = start_in_terminal(tmp_path, env, *argv, columns=200)
        try:
            screen = screen_to_exit(proc, leader)
        finally:
            os.close(leader)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        sent = len(tavily.queries)
    assert proc.returncode == 0, screen
    assert sent == 3, tavily.queries  # each topic, and the shared query once
    # The report's Sources list: the pages it cites, fewer than were retrieved.
    [report] = (tmp_path / "reports").glob("*.md")
    listed = re.findall(r"(?m)^\d+\. \[", report.read_text().split("## Sources")[1])
    assert 0 < len(listed) < PAGES, report.read_text()
    # The panel's last frame.
    *_, last = HEADER.findall(screen)
    assert last[:5] == (str(sent), "10", "1", str(PAGES), str(len(listed))), last
    cost = last[5]
    # Each researcher's row: the searches it sent (together the run's), its pages.
    rows = set(re.findall(r"heat pump [a-z ]+?\s+done\s+(\d)\s+(\d+) pages", screen))
    assert sorted(rows) == [("1", "5"), ("2", "5")], rows
    # The summary.
    lines = {line.split(" ", 1)[0]: line for line in screen.splitlines() if "  " in line}
    assert re.match(rf"searches +{sent} of 10 sent, 1 reused \(", lines["searches"]), lines
    assert re.match(rf"pages +{PAGES} retrieved", lines["pages"]), lines
    assert re.match(rf"sources +{len(listed)} cited", lines["sources"]), lines
    assert re.match(rf"cost +\${cost} ", lines["cost"]), lines
    # `runs`.
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert show_runs([], Console(file=out, width=300)) == 0
    [row] = [line for line in out.getvalue().splitlines() if " done " in line]
    assert re.search(rf"done\s+{sent}\s+{len(listed)}\s+\${cost}\s+How well", row), row
