"""The commands docs/search.md shows for the scholarly sources, run as a user would: the
real CLI in its own process, against fake arXiv, Europe PMC and OpenAlex APIs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.support.brain import ResearchBrain
from tests.support.cli import cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.scholarly_servers import (
    FakeArxivServer,
    FakeJsonApi,
    Paper,
    europepmc_record,
)
from tests.support.fakes.tavily_server import FakeTavilyServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "search.md"
# The scripted researchers search their topic, whatever the question: the fakes' abstracts
# are on that topic, so that they pass the relevance filter.
TOPIC = "heat pump control papers"
# No PDF link: the CLI's own process resolves names for real, and arxiv.org's PDF would be
# fetched (tests/unit/search/test_open_access.py reads one from a local server).
PAPER = Paper(
    "2101.00001v2",
    "Heat pump control",
    "Papers on heat pump control in cold climates.",
    pdf_link="",
)
TRIAL = europepmc_record(
    "Heat pump control and health", "<h4>Results</h4>Heat pump control papers in <i>cold</i> homes."
)


def documented_commands() -> list[list[str]]:
    section = DOC.read_text().split("## Scholarly and encyclopedic sources", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines() if line.strip()]
    doctor = re.findall(r"`(deep-research doctor[^`]*)`", section)
    return [shlex.split(line)[1:] for line in [*lines, *doctor]]


def test_the_commands_docs_search_md_shows_run_and_cite_each_source_s_page(
    tmp_path: Path,
) -> None:
    research, europe, doctor = documented_commands()
    assert research[:2] == ["--search", "arxiv"] and europe[:2] == ["--search", "europepmc"]
    with (
        ScriptedOpenAIServer(ResearchBrain(topics=[TOPIC])) as llm,
        FakeTavilyServer() as tavily,
        FakeArxivServer([PAPER]) as arxiv,
        FakeJsonApi("/rest/search", {"resultList": {"result": [TRIAL]}}) as pmc,
        FakeJsonApi("/works", {"results": []}) as openalex,
    ):
        env = {
            **cli_env(llm, tavily, tmp_path),
            "ARXIV_API_URL": arxiv.api_url,
            "EUROPEPMC_API_URL": pmc.api_url,
            "OPENALEX_API_URL": openalex.api_url,
        }
        runs = [run_cli(tmp_path, env, *args) for args in (research, europe)]
        checked, arxiv_url = run_cli(tmp_path, env, *doctor), arxiv.api_url
        assert len(arxiv.requests) == 2 and len(pmc.requests) == 1  # doctor asked arXiv once
        assert tavily.requests == [] and openalex.requests == []
    for result in runs:
        assert result.returncode == 0, result.stderr
    reports = "\n".join(p.read_text() for p in sorted((tmp_path / "reports").glob("*.md")))
    assert "status        complete" in runs[0].stdout and "complete" in runs[1].stdout
    assert "(https://arxiv.org/abs/2101.00001v2" in reports
    assert "(https://pubmed.ncbi.nlm.nih.gov/33301246/" in reports
    line = next(line for line in checked.stdout.splitlines() if "search arxiv" in line)
    assert f"{arxiv_url} answered with 1 result" in line, checked.stdout
