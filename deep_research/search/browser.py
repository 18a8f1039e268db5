"""Rendering a page whose text a script writes, in headless Chromium, behind the address guard.

Off unless RENDER_PAGES is set. Chromium itself reaches no network: its resolver answers
nothing and its proxy is a closed port, and every request a page makes is answered here,
through the same guarded client as every fetch (search/netguard.py), or refused. Each
render gets its own browser process and a fresh temporary profile, deleted after it.
Playwright is imported only when a page is rendered (the `browser` extra).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from deep_research.errors import DeepResearchError
from deep_research.search.netguard import AddressPolicy, GuardedTransport
from deep_research.search.page_requests import RequestLog, router

# A page "looks rendered by script" when its extracted text is shorter than this and its
# HTML has a script tag, an empty app root or a <noscript> notice (docs/search.md).
SCRIPTED_BELOW = 200
# Bounded repeats: a hostile page of "<div " without end costs a linear scan, no more.
SCRIPT_SIGNS = re.compile(
    rb"<script\b|<noscript\b"
    rb"|<div\b[^>]{0,100}?\bid=[\"']?(?:root|app|__next)\b[^>]{0,200}>\s{0,200}</div>",
    re.IGNORECASE,
)
SIGNS_WITHIN = 500_000  # bytes of the page searched for them: an app shell is small
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MAX_HTML_CHARS = 2_000_000  # of the rendered DOM taken for extraction
CLOSE_SECONDS = 10.0  # closing a browser whose page still runs a script
# Beyond the render's deadline and the close: the driver's own start and stop (a Node.js
# process), so that the whole render, whatever hangs, ends by a known time.
DRIVER_SECONDS = 10.0
# No network of Chromium's own (every request is answered by the route below), V8's heap
# bounded, one renderer process, nothing run in the background.
CHROMIUM_ARGS = (
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--js-flags=--max-old-space-size=256",
    "--renderer-process-limit=1",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-gpu",
    "--no-first-run",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)


def browser_env(profile: str) -> dict[str, str | float | bool]:
    """The browser's whole environment: no key of this process's, and a home, config and
    cache inside the temporary profile (Chromium writes crash-report settings and dconf's
    cache there), so nothing is left in the user's home."""
    env: dict[str, str | float | bool] = {"HOME": profile, "XDG_CONFIG_HOME": f"{profile}/config"}
    env |= {"XDG_CACHE_HOME": f"{profile}/cache", "TMPDIR": tempfile.gettempdir()}
    env |= {name: os.environ[name] for name in ("PATH", "LANG", "TZ") if name in os.environ}
    return env


class RenderFailed(DeepResearchError):
    """A render gave no HTML; the message is fixed text, shown to the model as a skip reason."""


def looks_scripted(raw: bytes, text: str) -> bool:
    """Whether a page whose extraction gave `text` is probably written by its scripts."""
    return len(text) < SCRIPTED_BELOW and SCRIPT_SIGNS.search(raw[:SIGNS_WITHIN]) is not None


def find_browser(configured: str | None) -> str | None:
    """The browser to run: RENDER_BROWSER if set (a path or a command name), else the first
    of `BROWSERS` on PATH; None when there is none."""
    for name in (configured,) if configured else BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass(frozen=True)
class Rendered:
    """A rendered page: its DOM (cut), the URL it ended at, and what its requests met."""

    html: str
    url: str
    requests: int
    refused: int  # refused by the address guard


class Renderer:
    """Renders pages for one search step: at most `max_pages`, one at a time, each within
    `timeout` seconds."""

    def __init__(
        self, policy: AddressPolicy, *, browser: str, max_pages: int, timeout: float
    ) -> None:
        self._policy = policy
        self._browser = browser
        self._timeout = timeout
        self.max_pages = max_pages
        self.used = 0
        self._one_at_a_time = asyncio.Semaphore(1)

    async def html(self, url: str) -> Rendered:
        """`url` rendered: its DOM and the URL it ended at. Raises `RenderFailed`."""
        if self.used >= self.max_pages:
            raise RenderFailed(f"not rendered: this search step's {self.max_pages} renders used")
        self.used += 1
        async with self._one_at_a_time:
            try:
                return await self._render(url)
            except ImportError as error:
                raise RenderFailed("not rendered: playwright is not installed") from error

    async def _render(self, url: str) -> Rendered:
        await load_playwright()
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        client = httpx.AsyncClient(
            transport=GuardedTransport(self._policy, max_connections=4),
            follow_redirects=False,  # Chromium follows them, each hop through the route again
            timeout=self._timeout,
        )
        log = RequestLog()
        context: Any = None
        whole = self._timeout + CLOSE_SECONDS + DRIVER_SECONDS
        try:
            async with asyncio.timeout(whole), _profile() as profile, async_playwright() as driver:
                try:
                    async with asyncio.timeout(self._timeout):  # the browser's start included
                        context = await _launch(driver, self._browser, profile)
                        handler = router(client, self._policy, log, PlaywrightError)
                        await context.route("**/*", handler)
                        html, final_url = await _load(context, url)
                        return Rendered(html, final_url, log.made, len(log.refused))
                finally:
                    if context is not None:
                        await _close(context)
        except TimeoutError as error:
            raise RenderFailed(f"rendering timed out after {self._timeout:g} s") from error
        except PlaywrightError as error:
            raise RenderFailed("the browser could not render the page") from error
        finally:
            await client.aclose()


async def load_playwright() -> None:
    """Import Playwright in a thread: its first import reads many files, which must not
    block the loop (langgraph dev refuses that); the imports after it are cached."""
    await asyncio.to_thread(_import_playwright)


def _import_playwright() -> None:
    module = importlib.import_module("playwright.async_api")
    # Starting its driver checks that the bundled Node.js is a file, on the loop, unless
    # PLAYWRIGHT_NODEJS_PATH names it: checked here, in the thread, and named once.
    node = Path(module.__file__ or "").parent.parent / "driver" / "node"
    if "PLAYWRIGHT_NODEJS_PATH" not in os.environ and node.is_file():
        os.environ["PLAYWRIGHT_NODEJS_PATH"] = str(node)


@asynccontextmanager
async def _profile() -> AsyncIterator[str]:
    """A fresh temporary profile directory, deleted after (made and removed off the loop)."""
    profile = await asyncio.to_thread(tempfile.mkdtemp, prefix="deep-research-render-")
    try:
        yield profile
    finally:
        await asyncio.to_thread(shutil.rmtree, profile, ignore_errors=True)


async def _launch(driver: Any, browser: str, profile: str) -> Any:
    """`browser` started headless on `profile`, with the flags that keep it off the network."""
    return await driver.chromium.launch_persistent_context(
        profile,
        executable_path=browser,
        headless=True,
        args=list(CHROMIUM_ARGS),
        env=browser_env(profile),
        service_workers="block",
        accept_downloads=False,
    )


async def _load(context: Any, url: str) -> tuple[str, str]:
    """Open `url`, wait for its scripts to settle (at most most of the deadline), take its DOM."""
    from playwright.async_api import TimeoutError as WaitedTooLong

    page = context.pages[0] if context.pages else await context.new_page()
    response = await page.goto(url, wait_until="domcontentloaded")
    if response is None or response.status >= 400:
        raise RenderFailed("the browser could not load the page")
    try:
        await page.wait_for_load_state("networkidle", timeout=5_000)
    except WaitedTooLong:
        pass  # a page that keeps polling: take what it has written so far
    html = await page.evaluate(f"document.documentElement.outerHTML.slice(0, {MAX_HTML_CHARS})")
    return str(html), str(page.url)


async def _close(context: Any) -> None:
    """Close the browser; one whose page still spins is left to the driver's exit to kill."""
    try:
        async with asyncio.timeout(CLOSE_SECONDS):
            await context.close()
    except Exception:  # noqa: BLE001  # closing must not hide the render's own outcome
        pass


async def browser_version(browser: str, timeout: float) -> str:
    """Start `browser` as a render would (same flags, a fresh profile) and name its version.

    Raises `RenderFailed` (fixed text) when it cannot start or Playwright is missing."""
    try:
        await load_playwright()
    except ImportError as error:
        raise RenderFailed("playwright is not installed") from error
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    try:
        async with _profile() as profile, async_playwright() as driver:
            async with asyncio.timeout(timeout):
                context = await _launch(driver, browser, profile)
            try:
                return str(context.browser.version) if context.browser else "unknown"
            finally:
                await _close(context)
    except TimeoutError as error:
        raise RenderFailed(f"the browser did not start within {timeout:g} s") from error
    except PlaywrightError as error:
        raise RenderFailed("the browser did not start") from error
