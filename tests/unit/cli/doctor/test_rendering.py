"""cli/doctor/rendering.py: the `page rendering` line: off, a browser that starts, or why not."""

from __future__ import annotations

import pytest

from deep_research.cli.doctor.rendering import check_rendering


async def test_off_by_default_is_ok_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RENDER_PAGES", raising=False)
    check = await check_rendering(5)
    assert check.status == "ok" and check.detail.startswith("off (RENDER_PAGES=false)")


async def test_on_without_a_browser_warns_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RENDER_PAGES", "true")
    monkeypatch.setenv("RENDER_BROWSER", "/no/such/chromium")
    check = await check_rendering(5)
    assert check.status == "warn" and "no browser was found (RENDER_BROWSER)" in check.detail
    assert "RENDER_BROWSER" in check.fix


async def test_a_browser_that_does_not_start_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RENDER_PAGES", "true")
    monkeypatch.setenv("RENDER_BROWSER", "/bin/false")  # found, but no browser
    check = await check_rendering(10)
    assert check.status == "warn" and "the browser did not start" in check.detail


@pytest.mark.slow
async def test_on_with_chromium_names_it_and_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RENDER_PAGES", "true")
    monkeypatch.delenv("RENDER_BROWSER", raising=False)
    monkeypatch.setenv("RENDER_MAX_PAGES", "3")
    check = await check_rendering(30)
    assert check.status == "ok", check
    assert "starts; at most 3 page(s) per search step, 20 s each" in check.detail
    assert "(Chromium " in check.detail
