"""Evaluators, the live link check (against 127.0.0.1) and the offline runner."""

from __future__ import annotations

import datetime
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from langsmith.evaluation.evaluator import DynamicRunEvaluator
from langsmith.schemas import Example, Run

from evals import evaluators as ev
from evals.live_links import live_links
from evals.run import SAMPLES, load_questions, main
from tests.support.citing_brain import CitingBrain
from tests.support.fakes.http_server import BackgroundServer, closed_port
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.fakes.tavily_server import FakeTavilyServer

PAGE = "https://example.org/page"
SOURCES = [
    {"url": PAGE, "title": "Page", "content": "Heat pumps work in the cold.", "found_by": "t"}
]


def outputs(report: str) -> dict[str, Any]:
    return {"final_report": report, "sources": SOURCES}


def test_stray_tildes_ignore_urls_code_and_escapes() -> None:
    clean = outputs(f"About \\~5 [x]({PAGE}#:~:text=Heat) `~`\n\n~~~\n~ in a fence\n~~~\n")
    assert ev.stray_tilde_count(clean)["score"] == 1.0
    dirty = ev.stray_tilde_count(outputs("About ~5 and ~6."))
    assert dirty["score"] == 0.0 and dirty["comment"] == "2 stray tildes"


def test_numbered_headings() -> None:
    assert ev.numbered_headings(outputs("## 2024 in review\n\n## Costs\n"))["score"] == 1.0
    found = ev.numbered_headings(outputs("## 1. Costs\n\n### 1.2) Detail\n"))
    assert found["score"] == 0.0 and found["comment"] == "1. Costs; 1.2) Detail"


def test_link_format_counts_only_plain_inline_links() -> None:
    report = (
        f'[a]({PAGE}) [b]({PAGE} "t") <{PAGE}> {PAGE} [c][r] []({PAGE}) [top](#x)\n\n[r]: {PAGE}'
    )
    score = ev.link_format(outputs(report))
    assert score["comment"] == "1 of 6 links in [text](url) form"
    assert ev.link_format(outputs("No links."))["score"] is None


def test_citations_resolve_after_normalisation() -> None:
    report = (
        f"[a]({PAGE}/?utm_source=x) [b](https://invented.example) [c](HTTPS://EXAMPLE.org/page)"
    )
    score = ev.citations_resolve(outputs(report))
    assert score["score"] == pytest.approx(2 / 3)


def test_fragments_found_checks_each_fragment_against_its_own_source() -> None:
    report = (
        f"[a]({PAGE}#:~:text=heat%20pumps%20work) [b]({PAGE}#:~:text=never%20said) "
        "[c](https://invented.example#:~:text=Heat) [d]("
        + PAGE
        + "#:~:text=a,b,c,d) [e]("
        + PAGE
        + ")"
    )
    score = ev.fragments_found(outputs(report))
    assert score["comment"] == "1 of 4 fragments found in the retrieved text"


def test_evaluators_reject_outputs_without_a_report() -> None:
    with pytest.raises(ValueError, match="final_report"):
        ev.link_format({"sources": []})


def test_evaluators_plug_into_langsmith_evaluate() -> None:
    now = datetime.datetime.now(datetime.UTC)
    run = Run(
        id=uuid.uuid4(),
        name="deep_research",
        start_time=now,
        run_type="chain",
        inputs={"question": "q"},
        outputs=outputs(f"[a]({PAGE})"),
        trace_id=uuid.uuid4(),
    )
    example = Example(
        id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs={"question": "q"}, created_at=now
    )
    results = [DynamicRunEvaluator(e).evaluate_run(run, example) for e in ev.OFFLINE_EVALUATORS]
    assert {r.key: r.score for r in results} == {
        "stray_tildes": 1.0,
        "numbered_headings": 1.0,
        "link_format": 1.0,
        "citations_resolve": 1.0,
        "fragments_found": None,
    }


async def test_live_link_check_reports_each_broken_page() -> None:
    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="fine")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/ok")

    app = web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_get("/moved", moved)
    with BackgroundServer(app) as server:
        url = server.url
        dead = f"http://127.0.0.1:{closed_port()}/x"
        report = f"[a]({url}/ok#:~:text=fine) [b]({url}/moved) [c]({url}/missing) [d]({dead})"
        score = await live_links(outputs(report))
    assert score["score"] == 0.5
    assert f"{url}/missing (HTTP 404)" in score["comment"]
    assert f"{dead} (ConnectError" in score["comment"]


def test_offline_runner_scores_the_saved_samples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--offline", "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    by_file = {Path(f).name: {s["key"]: s["score"] for s in v} for f, v in scores.items()}
    assert set(by_file["heat_pumps_checked.json"].values()) == {1.0}
    draft = by_file["heat_pumps_draft.json"]
    assert draft["stray_tildes"] == 0.0 and draft["numbered_headings"] == 0.0
    assert draft["citations_resolve"] == 0.75 and draft["fragments_found"] == 0.0
    assert len(list(SAMPLES.glob("*.json"))) == len(by_file)


def test_offline_runner_explains_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.json").write_text('{"sources": []}')
    assert main(["--offline", str(tmp_path)]) == 2
    assert "bad.json: needs a 'final_report' string" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--offline", "--live-links"])


def test_dataset_is_valid_jsonl() -> None:
    questions = load_questions()
    assert len(questions) >= 5 and len({q["id"] for q in questions}) == len(questions)


def test_generate_then_evaluate_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAIServer(CitingBrain()) as llm, FakeTavilyServer() as tavily:
        monkeypatch.setenv("LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        monkeypatch.setenv("LLM_MODEL", "test-model")
        monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
        monkeypatch.setenv("TAVILY_API_BASE_URL", tavily.url)
        assert main(["--generate", str(tmp_path), "--limit", "1"]) == 0
    saved = json.loads((tmp_path / "heat-pumps-nordic.json").read_text())
    assert saved["citation_check"]["fabricated_removed"] == 1
    capsys.readouterr()
    assert main(["--offline", "--json", str(tmp_path)]) == 0
    [scores] = json.loads(capsys.readouterr().out).values()
    assert {s["key"]: s["score"] for s in scores}["citations_resolve"] == 1.0


def test_generate_refuses_bad_settings_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--generate", str(tmp_path), "--set", "no_such_setting=1"]) == 2
    assert "error: --set:" in capsys.readouterr().err
    assert main(["--generate", str(tmp_path), "--set", "researcher_model"]) == 2
    assert "use KEY=VALUE" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
