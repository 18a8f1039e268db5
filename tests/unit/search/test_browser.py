"""search/browser.py: pages written by script, rendered in the system's Chromium behind the
address guard, within the step's render count and each render's deadline."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from blockbuster import blockbuster_ctx

from deep_research.citations import TextDirective, check_report, fragment_of
from deep_research.config.settings import load_context
from deep_research.search import Answer, Grant, session
from deep_research.search.browser import BROWSERS, find_browser, looks_scripted
from deep_research.search.fetch import Page
from deep_research.search.types import SearchResult
from tests.support.fakes.page_server import PageServer, scripted_paragraphs
from tests.support.fetching import Resolver, fetch, named, renderer
from tests.support.search import ALLOW_PAGES, PAGES_HOST

WRITTEN = scripted_paragraphs("heat-pumps")[2]  # what only the page's script writes


def leftover_profiles() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("deep-research-render-*"))


@pytest.mark.parametrize(
    ("html", "text", "scripted"),
    [
        (b'<div id="root"></div><script src="/app.js"></script>', "", True),
        (b"<body><noscript>Enable JavaScript</noscript></body>", "Loading", True),
        (b"<body><div id=app></div></body>", "", True),
        (b"<body><p>Short note.</p></body>", "Short note.", False),  # short, no script
        (b"<script>track()</script><p>long</p>", "x" * 500, False),  # has its text
    ],
)
def test_a_page_looks_scripted_when_it_gives_little_text_and_shows_script_signs(
    html: bytes, text: str, scripted: bool
) -> None:
    assert looks_scripted(html, text) is scripted


def test_a_hostile_page_of_unclosed_tags_is_judged_in_one_linear_scan() -> None:
    # Unbounded repeats tried each "<div" against the rest of 2 MB: hours, not milliseconds.
    assert looks_scripted(b"<div id=root " * 150_000, "") is False


def test_the_configured_browser_is_used_or_none_is_found() -> None:
    assert find_browser("/no/such/browser") is None
    assert find_browser("sh") == shutil.which("sh") is not None  # a command name, on PATH
    assert find_browser(None) in {shutil.which(name) for name in BROWSERS}


@pytest.mark.parametrize("value", ["  ", "chromium\n--no-sandbox", "chro\x00mium"])
def test_a_browser_setting_that_names_no_program_is_refused(value: str) -> None:
    from pydantic import ValidationError

    from deep_research.config.endpoints import Endpoints

    with pytest.raises(ValidationError, match="RENDER_BROWSER must be"):
        Endpoints(render_browser=value)


@pytest.mark.slow
async def test_text_written_by_script_is_read_only_when_rendering_is_on(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    url = named(bare_pages, "/scripted/heat-pumps")
    before = leftover_profiles()
    plain = await fetch(url)
    assert isinstance(plain, Page) and plain.text == "" and "no main text" in plain.skipped
    shown = await fetch(url, renderer=renderer())
    assert isinstance(shown, Page) and WRITTEN in shown.text, shown
    assert "rendered in a headless browser" in shown.note
    assert "/data/heat-pumps" in bare_pages.requests, "the script's own request went through"
    assert leftover_profiles() == before, "the browser's profile is deleted after the render"
    # Behind a redirect: rendered where the redirects ended (Chromium would not send a
    # redirect it was answered with back through the route).
    moved = await fetch(named(bare_pages, "/redirect/2"), renderer=renderer())
    assert isinstance(moved, Page) and "The truth about redirected" in moved.text
    moved = await fetch(
        named(bare_pages, "/redirect-to?target=/scripted/moved-app"), renderer=renderer()
    )
    assert isinstance(moved, Page) and "Scripted paragraph 1 on moved app" in moved.text


@pytest.mark.slow
async def test_a_page_that_never_stops_is_cut_at_the_deadline_and_the_step_goes_on(
    bare_pages: PageServer, resolver: Resolver
) -> None:
    resolver({PAGES_HOST: ["127.0.0.1"]})
    rendering = renderer(timeout=3.0)
    before = leftover_profiles()
    spun = await fetch(named(bare_pages, "/spinning"), renderer=rendering)
    assert leftover_profiles() == before, "the profile goes with the browser it was cut in"
    assert isinstance(spun, Page) and spun.text == ""
    assert "rendering timed out after 3 s" in spun.skipped
    after = await fetch(named(bare_pages, "/scripted/after-spin"), renderer=rendering)
    assert isinstance(after, Page) and "Scripted paragraph 1 on after spin" in after.text


class AppSearch:
    """Every query finds two app shells on the page server, whose text only a script writes."""

    name, max_concurrency = "scripted", 4

    def __init__(self, port: int) -> None:
        self.base = f"http://{PAGES_HOST}:{port}/scripted"

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        return [SearchResult(f"{self.base}/{s}", s, "An app.") for s in ("heat-pumps", "solar")]


async def step_answer(pages: PageServer, monkeypatch: pytest.MonkeyPatch, run: str) -> Answer:
    """One search step over `AppSearch`, as a researcher's, under langgraph dev's loop check."""
    monkeypatch.setattr("deep_research.search.step.make_provider", lambda n: AppSearch(pages.port))
    context = load_context(
        {"relevance_filter": False, "use_memory": False, "search_library": False}
        | {"fetch_top_n": 2}
    )
    grant = Grant(1, share=1, counted_before=0, cap=1)
    with blockbuster_ctx():  # as langgraph dev runs a step: nothing may block the loop
        async with session(context, run_key=run, owner="o", topic="t", grant=grant) as step:
            return await step.answer(["heat pumps"], max_chars=20_000)


def quoting(url: str, passage: str) -> str:
    """A report sentence citing `passage` on `url` by a text fragment."""
    directive = TextDirective(" ".join(passage.split()[:6]), " ".join(passage.split()[-4:]))
    return f"Installations grew [survey]({url}#{fragment_of([directive])}).\n"


@pytest.mark.slow
async def test_a_search_step_renders_at_most_its_count_and_rendered_text_is_citable(
    pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://{PAGES_HOST}:{pages.port}/scripted/heat-pumps"
    monkeypatch.delenv("RENDER_PAGES", raising=False)
    unrendered = await step_answer(pages, monkeypatch, "unrendered")
    assert not any("Scripted paragraph" in s["content"] for s in unrendered.sources)
    assert check_report(quoting(url, WRITTEN), unrendered.sources).check["fragments_kept"] == 0

    monkeypatch.setenv("RENDER_PAGES", "true")
    monkeypatch.setenv("RENDER_MAX_PAGES", "1")
    answer = await step_answer(pages, monkeypatch, "rendered")
    rendered = [s for s in answer.sources if "Scripted paragraph" in s["content"]]
    assert len(rendered) == 1, "one render allowed for the step"
    passage = scripted_paragraphs(rendered[0]["url"].rsplit("/", 1)[1])[2]
    assert passage in answer.text, "the researcher reads the rendered text"
    checked = check_report(quoting(rendered[0]["url"], passage), answer.sources)
    assert checked.check["fragments_kept"] == 1, "and a report can cite it"
    skipped = [entry["reason"] for entry in answer.trace["skipped_pages"]]
    assert any("1 renders used" in reason for reason in skipped), skipped


async def test_rendering_is_off_unless_the_environment_turns_it_on(
    pages: PageServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deep_research.search.step import renderer as step_renderer

    monkeypatch.delenv("RENDER_PAGES", raising=False)
    assert step_renderer(ALLOW_PAGES) is None
    monkeypatch.setenv("RENDER_PAGES", "true")
    monkeypatch.setenv("RENDER_BROWSER", "/no/such/browser")
    assert step_renderer(ALLOW_PAGES) is None, "no browser: pages are read without rendering"


def test_the_browser_gets_no_key_and_a_home_inside_its_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from deep_research.search.browser import browser_env

    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-in-the-browser")
    env = browser_env("/tmp/deep-research-render-x")
    assert "sk-never-in-the-browser" not in env.values() and "OPENAI_API_KEY" not in env
    assert env["HOME"] == "/tmp/deep-research-render-x"
    assert str(env["XDG_CONFIG_HOME"]).startswith(str(env["HOME"]))
