"""DeepResearch Bench export against the scripted model server and the fake Tavily API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.drb import main, strip_fragments, submission_line
from tests.support.citing_brain import CitingBrain
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

QUERIES = [
    {"id": 1, "prompt": "How well do heat pumps work in cold climates?"},
    {"id": "zh-2", "prompt": "  热泵在北欧冬季的表现如何？\n\tCompare costs — ünïcode.  "},
    {"id": 3, "prompt": "What do heat pumps cost to install?"},
]


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(CitingBrain()) as llm, FakeTavilyServer() as tavily:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("LLM_MODEL", "test-model")
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        monkeypatch.setenv("SEARCH_PROVIDER", "tavily")
        yield llm


def write_queries(path: Path, queries: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), "utf-8")
    return path


def exported(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_writes_the_submission_format(
    tmp_path: Path, servers: ScriptedOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = write_queries(tmp_path / "query.jsonl", QUERIES[:2])
    out = tmp_path / "deep_research.jsonl"
    assert main(["--queries", str(queries), "--out", str(out)]) == 0
    lines = exported(out)
    assert [(line["id"], line["prompt"]) for line in lines] == [
        (q["id"], q["prompt"]) for q in QUERIES[:2]
    ]
    assert all(set(line) == {"id", "prompt", "article"} for line in lines)
    for line in lines:
        article = line["article"]
        assert "](https://" in article and ":~:" not in article, article
    # Clarification is off: no request went to the clarifier.
    assert not any("intake step" in str(body["messages"][0]) for body in servers.requests)
    err = capsys.readouterr().err
    assert "0 of 2 already in" in err and "[1/2] 1: researching" in err
    assert '[2/2] "zh-2": researching' in err and "wrote 2 articles" in err


def test_export_resumes_after_the_lines_already_written(
    tmp_path: Path, servers: ScriptedOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = write_queries(tmp_path / "query.jsonl", QUERIES)
    out = tmp_path / "run.jsonl"
    assert main(["--queries", str(queries), "--out", str(out), "--limit", "1"]) == 0
    assert [line["id"] for line in exported(out)] == [1]
    with out.open("a", encoding="utf-8") as file:  # a run killed while writing line 2
        file.write('{"id": "zh-2", "prompt": "  热泵')
    capsys.readouterr()
    servers.reset()
    assert main(["--queries", str(queries), "--out", str(out)]) == 0
    assert [line["id"] for line in exported(out)] == [1, "zh-2", 3]
    err = capsys.readouterr().err
    assert "1 of 3 already in" in err and "[2/3]" in err and "[1/3]" not in err
    first_questions = [str(body["messages"][1:2]) for body in servers.requests]
    assert not any("How well do heat pumps work" in q for q in first_questions)

    servers.reset()
    assert main(["--queries", str(queries), "--out", str(out)]) == 0
    assert servers.requests == [] and len(exported(out)) == 3
    assert "3 of 3 already in" in capsys.readouterr().err


def test_a_plan_review_set_in_the_environment_never_holds_the_export(
    tmp_path: Path, servers: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nobody can answer a plan review in a batch run: REVIEW_PLAN=true (say, in .env for
    # the CLI) must not leave a run paused without a report.
    monkeypatch.setenv("REVIEW_PLAN", "true")
    queries = write_queries(tmp_path / "query.jsonl", QUERIES[:1])
    out = tmp_path / "reviewed.jsonl"
    assert main(["--queries", str(queries), "--out", str(out)]) == 0
    [line] = exported(out)
    assert line["id"] == 1 and "](https://" in line["article"]


def test_strip_fragments_keeps_links_and_other_fragments() -> None:
    article = (
        "A [x](https://e.org/p#:~:text=a%20b,c) and [y](https://e.org/q#sec:~:text=z) "
        "[w](https://en.wikipedia.org/wiki/X_(y)#:~:text=z) <https://e.org/r#top> "
        "(see https://e.org/t#:~:text=q). [z](https://e.org/u?a=1#:~:text=k&text=l)"
    )
    assert strip_fragments(article) == (
        "A [x](https://e.org/p) and [y](https://e.org/q#sec) "
        "[w](https://en.wikipedia.org/wiki/X_(y)) <https://e.org/r#top> "
        "(see https://e.org/t). [z](https://e.org/u?a=1)"
    )


def test_a_lone_surrogate_in_a_prompt_survives_exactly() -> None:
    query = {"id": 7, "prompt": "broken \ud800 half"}
    line = submission_line(query, "Report.")
    assert json.loads(line)["prompt"] == query["prompt"] and line.endswith("\n")
    assert json.loads(submission_line({"id": 8, "prompt": "ü"}, "x"))["prompt"] == "ü"
