"""`deep-research doctor`'s check of page rendering (RENDER_PAGES): off, or whether the
browser is found and starts as a render would start it."""

from __future__ import annotations

from deep_research.cli.doctor.checks import Check
from deep_research.config.endpoints import read_endpoints
from deep_research.search.browser import RenderFailed, browser_version, find_browser

NAME = "page rendering"
INSTALL = 'pip install -e ".[browser]"'


async def check_rendering(timeout: float) -> Check:
    """Off; or on and Chromium starts; or on and it cannot (a run then reads pages unrendered)."""
    endpoints = read_endpoints()
    if not endpoints.render_pages:
        return Check(NAME, "ok", "off (RENDER_PAGES=false): pages are read as downloaded")
    browser = find_browser(endpoints.render_browser)
    if browser is None:
        where = "RENDER_BROWSER" if endpoints.render_browser else "chromium on PATH"
        return Check(
            NAME,
            "warn",
            f"RENDER_PAGES is on but no browser was found ({where}): pages are read unrendered",
            "install Chromium (apt-get install chromium) or set RENDER_BROWSER to its path",
        )
    try:
        version = await browser_version(browser, timeout)
    except RenderFailed as failed:
        fix = INSTALL if "playwright" in str(failed) else f"check that {browser} runs"
        return Check(
            NAME, "warn", f"RENDER_PAGES is on but {failed}: pages are read unrendered", fix
        )
    return Check(
        NAME,
        "ok",
        f"on: {browser} (Chromium {version}) starts; at most {endpoints.render_max_pages} "
        f"page(s) per search step, {endpoints.render_timeout:g} s each",
    )
