"""`deep-research --export html,pdf "question"` (docs/export.md): a whole run against the
scripted servers, then the files beside its report, their footer from the run."""

from __future__ import annotations

import re
from pathlib import Path

import pypdf
import pytest

from tests.support.brain import ResearchBrain
from tests.support.cli import QUESTION, cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow


def test_a_run_exports_beside_its_report_with_the_run_in_the_footer(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        done = run_cli(tmp_path, cli_env(llm, tavily, tmp_path), "--export", "html,pdf", QUESTION)
    assert done.returncode == 0, done.stderr
    [report] = (tmp_path / "reports").glob("*.md")
    page = report.with_suffix(".html").read_text(encoding="utf-8")
    thread = re.search(r"Thread (\w+)", done.stdout)
    assert thread is not None and f"thread {thread.group(1)}" in page
    assert f"<title>{QUESTION}</title>" in page
    assert "orchestrator local:test-model" in page and "Searches: " in page
    assert "Citation check: " in page
    links = set(re.findall(r"\]\((https?://[^)\s]+)\)", report.read_text(encoding="utf-8")))
    assert links, "the scripted run cites pages"
    reader = pypdf.PdfReader(str(report.with_suffix(".pdf")))
    uris = {str(a.get_object()["/A"]["/URI"]) for p in reader.pages for a in p.get("/Annots", [])}
    assert links <= uris
    assert done.stdout.count("Exported: ") == 2
