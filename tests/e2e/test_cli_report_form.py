"""The report's language and length commands of docs/configuration.md, run as written: the
real CLI against a scripted model that writes in the language and at the length it is asked."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support.brain import LINK
from tests.support.cli import cli_env, run_cli
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.polyglot_brain import PolyglotBrain
from tests.support.readme import block_after

pytestmark = pytest.mark.slow  # starts a subprocess per command


def words(report: str) -> int:
    """Words of the report's text before its Sources list (in any of its languages)."""
    body = re.split(r"\n## (?:Sources|Quellen|来源)\n", report)[0]
    return len(re.findall(r"\w+", LINK.sub("", body)))


def test_the_documented_language_and_length_commands_do_what_the_page_says(
    tmp_path: Path,
) -> None:
    lines = block_after("<!-- report-commands").strip().splitlines()
    brain = PolyglotBrain()
    reports = []
    with ScriptedOpenAIServer(brain) as llm, FakeTavilyServer() as tavily:
        for number, line in enumerate(lines):
            words_of_line = shlex.split(line)
            env = dict(word.split("=", 1) for word in words_of_line if "=" in word[:20])
            program, *args = [word for word in words_of_line if "=" not in word[:20]]
            assert program == "deep-research"
            folder = tmp_path / str(number)
            folder.mkdir()
            result = run_cli(folder, {**cli_env(llm, tavily, tmp_path), **env}, *args)
            assert result.returncode == 0, (line, result.stdout, result.stderr)
            [report] = (folder / "reports").glob("*.md")
            reports.append(report.read_text(encoding="utf-8"))
    german, chinese, brief, detailed = reports
    assert brain.asked == ["German", "Chinese", "English", "English"]
    assert german.startswith("# Wärmepumpen") and "\n## Quellen\n" in german
    assert chinese.startswith("# 寒冷气候中的热泵") and "\n## 来源\n" in chinese
    assert "\n## Sources\n" in brief and "\n## Sources\n" in detailed
    assert 150 <= words(brief) <= 450 and 1_500 <= words(detailed) <= 3_050
