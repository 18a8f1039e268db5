"""`--out` and `--export` across `--resume` (docs/cli.md): a resumed run writes where its
first session was asked to, an explicit flag wins, and a finished thread exports (or says
why not) instead of doing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.brain import ResearchBrain
from tests.support.cli import QUESTION, cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

pytestmark = pytest.mark.slow  # starts a subprocess or a server process


def stop_before_saving(cwd: Path) -> str:
    """As if the run stopped between the graph's end and the files: no report, no export,
    no end record. Returns the thread id."""
    for written in (cwd / "notes").glob("*"):
        written.unlink()
    [log] = (cwd / ".deep_research" / "runs").glob("*.jsonl")
    kept = [line for line in log.read_text().splitlines() if '"action": "end"' not in line]
    log.write_text("\n".join(kept) + "\n")
    return log.stem


def test_a_resumed_run_writes_where_and_as_what_the_first_session_was_asked(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        first = run_cli(tmp_path, env, "--out", "notes/pumps.md", "--export", "html", QUESTION)
        assert first.returncode == 0, first.stderr
        thread = stop_before_saving(tmp_path)
        resumed = run_cli(tmp_path, env, "--resume", thread)
        assert resumed.returncode == 0, resumed.stderr
        written = sorted(p.name for p in (tmp_path / "notes").glob("*"))
        # Again, with a flag given this time: it wins over the remembered one.
        stop_before_saving(tmp_path)
        told = run_cli(tmp_path, env, "--resume", thread, "--out", "other/")
        assert told.returncode == 0, told.stderr
    assert "Report saved: notes/pumps.md" in resumed.stdout
    assert "Exported: notes/pumps.html" in resumed.stdout
    assert written == ["pumps.html", "pumps.md"]
    assert not (tmp_path / "reports").exists()
    [report] = (tmp_path / "other").glob("*.md")
    assert f"Report saved: other/{report.name}" in told.stdout
    assert (tmp_path / "other" / report.with_suffix(".html").name).is_file(), "still html"
    assert not list((tmp_path / "notes").glob("*"))


def test_export_on_a_finished_thread_exports_its_saved_report_or_says_why_not(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer(ResearchBrain()) as llm, FakeTavilyServer() as tavily:
        env = cli_env(llm, tavily, tmp_path)
        assert run_cli(tmp_path, env, "--out", "notes/pumps.md", QUESTION).returncode == 0
        [log] = (tmp_path / ".deep_research" / "runs").glob("*.jsonl")
        calls = len(llm.requests)
        exported = run_cli(tmp_path, env, "--resume", log.stem, "--export", "html")
        copied = run_cli(tmp_path, env, "--resume", log.stem, "--out", "copy.md")
        (tmp_path / "notes" / "pumps.md").unlink()
        (tmp_path / "copy.md").unlink()
        gone = run_cli(tmp_path, env, "--resume", log.stem, "--export", "html")
        assert len(llm.requests) == calls, "nothing ran again"
    assert exported.returncode == 0, exported.stderr
    assert "was already done; nothing left to run. Its report: notes/pumps.md" in exported.stdout
    assert "Exported: notes/pumps.html" in exported.stdout
    assert (tmp_path / "notes" / "pumps.html").is_file()
    # An explicit --out on a finished thread writes its report there too.
    assert copied.returncode == 0, copied.stderr
    assert "Its report: copy.md" in copied.stdout
    assert gone.returncode == 1
    assert "Export skipped: the report copy.md is no longer there." in gone.stdout
