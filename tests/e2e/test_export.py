"""`deep-research export` as a person meets it: the HTML in Chromium, the PDF through
pdftoppm and pypdf, the Word file through python-docx. The commands are docs/export.md's."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import docx
import pypdf
import pytest

from tests.support.brain import LINK, ResearchBrain
from tests.support.cli import REPO, cli_command
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.readme import block_after, run_with_top_level_await, section
from tests.support.reports import LIBRARY_URL, SAMPLE_URLS, sample_report
from tests.support.viewers import (
    colours,
    counting_server,
    dom_after_load,
    pdf_pages_as_png,
    screenshot,
)

pytestmark = pytest.mark.slow
# No library here: the sample's library link is exported as text (#35), the web ones as links.
WEB_URLS = tuple(url for url in SAMPLE_URLS if url != LIBRARY_URL)
REPORT = "reports/2026-12-01-heat-pumps.md"


def export(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])}
    return subprocess.run(
        cli_command("export", *args),
        cwd=cwd,
        env={**env, "HOME": str(cwd), "PYTHONPATH": str(REPO), "DEEP_RESEARCH_DOTENV": "0"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / REPORT
    path.parent.mkdir()
    path.write_text(sample_report(), encoding="utf-8")
    return path


def test_the_html_in_chromium_has_every_link_ran_nothing_and_loaded_nothing(
    report: Path, tmp_path: Path
) -> None:
    with counting_server() as (base, seen):
        # The report names the counter every way a page could load it.
        report.write_text(
            sample_report()
            + f'\n<img src="{base}/img"> ![x]({base}/md-image) <script src="{base}/js"></script>'
            f'\n<style>@import url("{base}/css")</style> <iframe src="{base}/frame"></iframe>\n'
            '<script>document.title = "script ran"</script>\n',
            encoding="utf-8",
        )
        done = export(tmp_path, REPORT, "--to", "html")
        assert done.returncode == 0, done.stderr
        page = report.with_suffix(".html")
        dom = dom_after_load(page)
        shot = screenshot(page, tmp_path / "shot.png")
        assert seen == []
    hrefs = [h.replace("&amp;", "&") for h in re.findall(r'<a href="([^"]+)"', dom)]
    for url in WEB_URLS:
        assert url in hrefs, url
    assert LIBRARY_URL not in hrefs
    # No run log here: the title is the report's heading, and the script did not change it.
    assert "<title>Heat pumps in Norway</title>" in dom
    assert "<script" not in dom.split("</head>")[1]
    assert colours(shot) > 20, "the screenshot is blank"


def test_the_csp_alone_stops_what_would_slip_through(tmp_path: Path) -> None:
    """The policy is the second wall: a page the parser let a tag into still runs and
    loads nothing. Without the policy the same page does both (so the counter works)."""
    from deep_research.export import render

    page = render(sample_report(), "html").decode()
    with counting_server() as (base, seen):
        slipped = (
            f'<img src="{base}/img"><script>document.title = "ran";'
            f'fetch("{base}/fetch")</script></body>'
        )
        guarded, open_page = tmp_path / "guarded.html", tmp_path / "open.html"
        guarded.write_text(page.replace("</body>", slipped), encoding="utf-8")
        without = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
        open_page.write_text(without.replace("</body>", slipped), encoding="utf-8")
        assert "<title>ran</title>" not in dom_after_load(guarded)
        assert seen == []
        assert "<title>ran</title>" in dom_after_load(open_page)
        assert sorted(seen) == ["/fetch", "/img"]


def test_the_pdf_renders_and_every_citation_is_a_link(report: Path, tmp_path: Path) -> None:
    done = export(tmp_path, REPORT, "--to", "pdf")
    assert done.returncode == 0, done.stderr
    pdf = report.with_suffix(".pdf")
    assert f"Exported: {REPORT.replace('.md', '.pdf')}" in done.stdout
    (tmp_path / "png").mkdir()
    pages = pdf_pages_as_png(pdf, tmp_path / "png")
    assert pages and all(colours(page) > 10 for page in pages)
    reader = pypdf.PdfReader(io.BytesIO(pdf.read_bytes()))
    uris = [
        str(a.get_object()["/A"]["/URI"]) for page in reader.pages for a in page.get("/Annots", [])
    ]
    for url in WEB_URLS:
        assert url in uris, url
    assert LIBRARY_URL not in uris
    assert "retrieved 2026-11-30" in "".join(page.extract_text() for page in reader.pages)


def test_the_word_file_reopens_with_headings_links_and_sources(
    report: Path, tmp_path: Path
) -> None:
    done = export(tmp_path, REPORT, "--to", "docx", "--out", "shared/heat-pumps.docx")
    assert done.returncode == 0, done.stderr
    document = docx.Document(str(tmp_path / "shared" / "heat-pumps.docx"))
    headings = [p.text for p in document.paragraphs if p.style and "Heading" in p.style.name]
    assert headings[0] == "Heat pumps in Norway" and "Sources" in headings
    targets = {r.target_ref for r in document.part.rels.values() if r.reltype.endswith("hyperlink")}
    assert set(WEB_URLS) <= targets and LIBRARY_URL not in targets
    after = [p.text for p in document.paragraphs]
    sources = after[after.index("Sources") + 1 :]
    assert sources[:3] == [
        "Heat pumps in cold climates",
        "Heating in Norwegian homes, 2024 (retrieved 2026-11-30)",
        f"[field-test.pdf, page 3]({LIBRARY_URL})",  # not the library's: shown as written
    ]


async def test_the_python_snippets_in_the_docs_run_as_written_one_after_the_other(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tavily: FakeTavilyServer,
) -> None:
    """From Python's research snippet, then its export snippet, in one session as a reader
    runs them: the export writes the report the run made, in a folder that held nothing."""
    monkeypatch.chdir(tmp_path)
    research = block_after("```python", section("# From Python"))
    names: dict[str, object] = {}
    with ScriptedOpenAIServer(ResearchBrain()) as llm:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        await run_with_top_level_await(research, names)
    capsys.readouterr()
    exec(block_after("<!-- python-export"), names)  # noqa: S102  # the documentation's own code
    assert capsys.readouterr().out.split() == ["heat-pumps.pdf", "heat-pumps.docx"]
    pdf = pypdf.PdfReader(tmp_path / "heat-pumps.pdf")
    cited = set(LINK.findall((tmp_path / "heat-pumps.md").read_text(encoding="utf-8")))
    uris = {str(a.get_object()["/A"]["/URI"]) for p in pdf.pages for a in p.get("/Annots", [])}
    assert cited and cited <= uris and cited <= tavily.returned_urls
    footer = "".join(page.extract_text() for page in pdf.pages)
    assert "thread 1" in footer and "Citation check:" in footer
    assert docx.Document("heat-pumps.docx").paragraphs
