"""A real model in the loop: `deep-research` against llama-cpp-python's server serving
SmolLM2-135M-Instruct (its GGUF's own chat template, which drops the tools), the fake
search API and local pages.

A 135M model cannot call a tool; the agent's floor researches anyway. The run must end
with exit 0, searches sent and pages read, a report whose every link is a page the run
retrieved, and a summary whose counts are the traffic log's and the servers' own. The
same harness and assertions run with a scripted model that researches, too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from deep_research.cli.counts import totals
from deep_research.text.urls import page_key
from tests.support.brain import LINK, ResearchBrain
from tests.support.fakes.openai_server import ScriptedOpenAIServer
from tests.support.llama_server import llama_server
from tests.support.real_run import MAX_SEARCHES, RealRun, run_real

pytestmark = pytest.mark.slow  # builds nothing, but starts a real model and runs it for minutes


class ScriptedStandIn:
    """A scripted model that researches, run through the same harness and assertions: it
    shows they pass for a run that researches, so the real model's failures are its own."""

    def __init__(self, server: ScriptedOpenAIServer) -> None:
        self.server = server
        self.base_url = server.base_url

    def posts(self) -> list[int]:
        return [200] * len(self.server.requests)


@pytest.fixture(scope="module", params=["smollm2", "scripted"])
def real_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealRun]:
    if request.param == "scripted":
        with ScriptedOpenAIServer(ResearchBrain()) as scripted:
            yield run_real(tmp_path_factory.mktemp("scripted"), ScriptedStandIn(scripted))
        return
    with llama_server() as server:
        yield run_real(tmp_path_factory.mktemp("real"), server)


def outcome(run: RealRun) -> str:
    """What a failed assertion shows: the run's output and the log's model calls."""
    calls = [
        (r.get("role"), r.get("tokens_in"), r.get("tokens_out"), r.get("seconds"))
        for r in run.records
        if r["kind"] == "model_reply"
    ]
    result = run.result
    return f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}\n{calls}"


def report_of(run: RealRun) -> str:
    [report] = (run.cwd / "reports").glob("*.md")
    return report.read_text()


def test_the_run_researches_and_ends_with_exit_0(real_run: RealRun) -> None:
    assert real_run.result.returncode == 0, outcome(real_run)
    assert 1 <= len(real_run.queries) <= MAX_SEARCHES, outcome(real_run)
    # No empty or junk query reaches the search API.
    assert all(re.search(r"[a-z]{3}", q, re.IGNORECASE) for q in real_run.queries), real_run.queries
    assert not any("&lt;" in q or "&#" in q for q in real_run.queries), real_run.queries
    read = [r for r in real_run.records if r.get("event") == "fetch" and r.get("chars")]
    assert read and any(p.startswith("/article/") for p in real_run.page_requests), outcome(
        real_run
    )


def test_every_link_in_the_report_is_a_page_the_run_retrieved(real_run: RealRun) -> None:
    report = report_of(real_run)
    links = {page_key(url) for url in LINK.findall(report)}
    assert links, report
    assert links <= {page_key(url) for url in real_run.returned}, report
    read = {page_key(r["url"]) for r in real_run.records if r.get("event") == "fetch"}
    assert links & read, "the report cites at least one page the run read"


def test_the_summary_agrees_with_the_log_and_the_servers(real_run: RealRun) -> None:
    out, counted = real_run.result.stdout, totals(real_run.records)
    sent = len(real_run.queries)
    assert counted.searches == sent
    assert re.search(rf"(?m)^searches +{sent} of {MAX_SEARCHES} sent", out), out
    assert re.search(rf"(?m)^fetches +{counted.fetches}$", out), out
    for role, usage in counted.roles.items():
        calls, tokens_in, tokens_out = usage.calls, usage.tokens_in, usage.tokens_out
        line = rf"(?m)^{role} +{calls} calls? +{tokens_in:,} tokens? in +{tokens_out:,} out"
        assert re.search(line, out), (role, out)
    # Every model call the log keeps is one the server answered, and none it answered is missing.
    replies = [r for r in real_run.records if r["kind"] == "model_reply"]
    assert len(replies) == real_run.model_posts.count(200), real_run.model_posts
    listed = re.findall(r"(?m)^\d+\. \[", report_of(real_run).split("## Sources")[-1])
    assert re.search(rf"(?m)^sources +{len(listed)} cited", out), out
    pages = int(re.findall(r"(?m)^pages +(\d+) retrieved", out)[-1])
    assert 0 < pages <= len({page_key(url) for url in real_run.returned}), out


def test_every_model_call_is_timed_in_the_log(real_run: RealRun) -> None:
    replies = [r for r in real_run.records if r["kind"] == "model_reply"]
    assert replies and all(r["seconds"] > 0 and r["tokens_in"] > 0 for r in replies), replies
