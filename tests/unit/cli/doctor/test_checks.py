"""`cli.doctor.checks`, in process: a check's text, the probe thread, how failures read.

The probes against fake Tavily/SearXNG servers and the command as a whole are in
tests/integration/test_doctor_search.py and test_doctor_command.py; these call the small
parts directly.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from deep_research.cli.doctor import checks
from deep_research.cli.doctor.checks import DETAIL_CHARS, Check
from deep_research.config.settings import load_context
from deep_research.search.types import SearchError


def test_a_check_is_one_printable_line_without_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-SECRET-0123456789")
    check = Check("x", "fail", "said\n\x1b[31mtvly-SECRET-0123456789\x07 " + "y" * 400, "a\tb")
    assert "\n" not in check.detail and "\x1b" not in check.detail and "SECRET" not in check.detail
    assert len(check.detail) == DETAIL_CHARS and check.detail.endswith("…")
    assert check.fix == "a b"


async def test_off_loop_returns_raises_and_can_be_abandoned() -> None:
    assert await checks.off_loop(lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        await checks.off_loop(lambda: 1 // 0)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await checks.off_loop(lambda: time.sleep(1))
    assert time.monotonic() - started < 0.5, "the deadline does not wait for the thread"


def test_the_search_chain_is_the_resolved_provider_then_new_fallbacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:1")
    context = load_context({"search_provider": "auto", "search_fallback": "ddgs,searxng,ddgs"})
    assert checks.search_names(context) == ["searxng", "ddgs"]


@pytest.mark.parametrize(
    ("statuses", "after"), [("ok fail", "ok warn"), ("fail fail", "fail fail")]
)
async def test_one_working_provider_turns_the_others_failures_into_warnings(
    statuses: str, after: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = dict(zip(["ddgs", "searxng"], statuses.split(), strict=True))

    async def check_search(name: str, timeout: float, query: str) -> Check:
        return Check(f"search {name}", answers[name], "said", "fix")  # type: ignore[arg-type]

    monkeypatch.setattr(checks, "check_search", check_search)
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:1")
    context = load_context({"search_provider": "ddgs", "search_fallback": "searxng"})
    result = await checks.check_searches(context, 1.0)
    assert [c.status for c in result] == after.split()
    if after == "ok warn":
        assert result[1].detail == "said (the run can use another provider)"


def failure(name: str, error: SearchError, cause: BaseException | None = None) -> Check:
    error.__cause__ = cause
    return checks._search_failure(f"search {name}", name, "http://where", error)


def test_each_search_failure_names_its_cause_and_its_fix() -> None:
    request = httpx.Request("GET", "http://where/search")
    forbidden = httpx.HTTPStatusError("403", request=request, response=httpx.Response(403))
    limited = failure("tavily", SearchError("slow down", rate_limited=True))
    assert (limited.status, limited.fix) == ("warn", "wait, or add a fallback")
    assert "JSON format is disabled" in failure("searxng", SearchError("x"), forbidden).detail
    down = failure("searxng", SearchError("x"), httpx.ConnectError("refused"))
    assert (
        down.status == "fail" and down.detail == "unreachable: http://where (ConnectError: refused)"
    )
    other = failure("tavily", SearchError("odd answer"), forbidden)
    assert other.detail == "http://where: odd answer", "403 means JSON is off only for searxng"


async def test_each_enabled_scholarly_source_is_probed_at_its_own_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.fakes.http_server import closed_port
    from tests.support.fakes.scholarly_servers import FakeArxivServer, Paper

    paper = Paper("2101.00001v1", "Heat pumps", "Heat pump efficiency in cold climates.")
    with FakeArxivServer([paper]) as arxiv:
        monkeypatch.setenv("ARXIV_API_URL", arxiv.api_url)
        monkeypatch.setenv("WIKIPEDIA_API_URL", f"http://127.0.0.1:{closed_port()}/w/api.php")
        context = load_context({"search_provider": "arxiv", "search_fallback": "wikipedia"})
        assert checks.search_names(context) == ["arxiv", "wikipedia"]
        found, down = await checks.check_searches(context, 5.0)
        assert len(arxiv.requests) == 1
        assert found.detail.startswith(f"{arxiv.api_url} answered with 1 result")
    assert found.status == "ok"
    assert down.status == "warn" and "/w/api.php (ConnectError" in down.detail
