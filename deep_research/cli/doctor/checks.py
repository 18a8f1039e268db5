"""`deep-research doctor`'s checks of the services a run calls: the search providers.

Each check is one function returning `Check`s, callable on its own (the tests call only
the ones they test); network probes run under their own `asyncio.timeout`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal, TypeVar

import httpx
from ddgs import DDGS
from ddgs.exceptions import DDGSException, RatelimitException
from tavily.errors import ForbiddenError, InvalidAPIKeyError

from deep_research.config.endpoints import read_endpoints
from deep_research.config.problems import search_provider_problem
from deep_research.config.settings import Context
from deep_research.llm.chat_models import public_url
from deep_research.search.providers import make_provider, resolve_provider
from deep_research.search.step import enabled_sources
from deep_research.search.types import SearchError
from deep_research.text.secrets import Redactor
from deep_research.text.wording import one_line

T = TypeVar("T")
Status = Literal["ok", "warn", "fail"]

PROBE_QUERY = "heat pump efficiency in cold climates"
DETAIL_CHARS = 400  # a hostile server's error text is cut to this
TAVILY_URL = "https://api.tavily.com"


def clean(text: str) -> str:
    """One printable line, secrets from the environment and credential shapes redacted."""
    # Printable first, then redacted: a control character inside an echoed key would
    # otherwise hide it from the redactor and be stripped only afterwards.
    line = "".join(char for char in " ".join(text.split()) if char.isprintable())
    return one_line(Redactor().text(line), DETAIL_CHARS)


@dataclass(frozen=True)
class Check:
    """One line of the doctor's answer; `fix` says what to change when it is not ok."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def __post_init__(self) -> None:
        # Details quote servers and exceptions: never let one print a key or a control code.
        object.__setattr__(self, "detail", clean(self.detail))
        object.__setattr__(self, "fix", clean(self.fix))


async def off_loop(function: Callable[[], T]) -> T:
    """`function()` in a daemon thread, awaited.

    `asyncio.to_thread` would do, except that `asyncio.run` waits for its threads on the
    way out: a probe abandoned at its deadline (ddgs with no network, a model load) must
    not hold the answer back. A daemon thread is simply left behind.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():  # the deadline may have cancelled it
            outcome()

    def run() -> None:
        report: Callable[[], None]
        try:
            report = partial(future.set_result, function())
        except BaseException as error:  # handed to the awaiting task, which decides
            report = partial(future.set_exception, error)
        try:
            loop.call_soon_threadsafe(settle, report)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    threading.Thread(target=run, name="doctor-probe", daemon=True).start()
    return await future


# ---------------------------------------------------------------------------- search


def search_names(context: Context) -> list[str]:
    """The providers a run would use, in order: the main one (`auto` resolved), then fallbacks."""
    names = [resolve_provider(context.search_provider), *context.fallback_providers]
    return list(dict.fromkeys(names))


async def check_searches(context: Context, timeout: float, query: str = PROBE_QUERY) -> list[Check]:
    """Every provider of the run's chain answers one query (`query`: one search each).

    A run falls back along the chain, so one working provider is enough: the others'
    failures are then warnings.
    """
    names = search_names(context)
    checks = await asyncio.gather(*(check_search(name, timeout, query) for name in names))
    offered = [name for name in enabled_sources(context, scholarly=True) if name not in names]
    more = [Check("search sources", "ok", _offered(offered))] if offered else []
    if any(check.status == "ok" for check in checks):
        return [
            Check(c.name, "warn", c.detail + " (the run can use another provider)", c.fix)
            if c.status == "fail"
            else c
            for c in checks
        ] + more
    return list(checks) + more


def _offered(names: list[str]) -> str:
    """What `auto` offers researchers beside the web (`scholarly_sources`), unprobed."""
    return (
        f"researchers of a topic the orchestrator marks scholarly may also choose "
        f"{', '.join(names)} (keyless; a search there falls back to the web; "
        f"`deep-research doctor --search {names[0]}` checks one)"
    )


async def check_search(name: str, timeout: float, query: str = PROBE_QUERY) -> Check:
    """Provider `name` answers `query` within `timeout` seconds."""
    label = f"search {name}"
    endpoints = read_endpoints()
    problem = search_provider_problem(name, endpoints)
    if problem:
        return Check(label, "fail", problem, f"set the variable it names, or drop {name}")
    if name == "ddgs":
        return await _check_ddgs(timeout, query)
    where = public_url(
        {
            "tavily": endpoints.tavily_api_base_url or TAVILY_URL,
            "arxiv": endpoints.arxiv_api_url,
            "wikipedia": endpoints.wikipedia_api_url,
            "openalex": endpoints.openalex_api_url,
            "europepmc": endpoints.europepmc_api_url,
        }.get(name, endpoints.searxng_url or "")
    )
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout):
            results = await make_provider(name).search(query, 3)
    except TimeoutError:
        return Check(
            label,
            "fail",
            f"unreachable: {where} did not answer within {timeout:g} s",
            "check the network and the URL, or raise --timeout",
        )
    except SearchError as error:
        return _search_failure(label, name, where, error)
    seconds = time.monotonic() - started
    if not results:
        return Check(label, "warn", f"{where} answered but found nothing for {query!r}")
    found = f"{len(results)} result{'s' if len(results) != 1 else ''}"
    return Check(label, "ok", f"{where} answered with {found} in {seconds:.1f} s")


def _search_failure(label: str, name: str, where: str, error: SearchError) -> Check:
    cause = error.__cause__
    if isinstance(cause, InvalidAPIKeyError):
        return Check(label, "fail", f"{where} rejected the key", "check TAVILY_API_KEY (tvly-...)")
    if isinstance(cause, ForbiddenError):
        return Check(
            label, "fail", f"{where} refused the request: {cause}", "check the Tavily plan and key"
        )
    if error.rate_limited:
        return Check(label, "warn", f"{where} is rate-limiting: {error}", "wait, or add a fallback")
    status = error.status
    if status is None and isinstance(cause, httpx.HTTPStatusError):
        status = cause.response.status_code
    if name == "searxng" and status == 403:
        return Check(
            label,
            "fail",
            f"{where} answered 403 to format=json: its JSON format is disabled",
            "add `json` under `search: formats:` in SearXNG's settings.yml and restart it",
        )
    if isinstance(cause, httpx.TransportError):
        return Check(
            label,
            "fail",
            f"unreachable: {where} ({type(cause).__name__}: {cause})",
            "check the network (and the provider's URL variable if set)",
        )
    return Check(label, "fail", f"{where}: {error}", "check the provider's URL and key")


async def _check_ddgs(timeout: float, query: str) -> Check:
    def search() -> list[dict[str, str]]:
        # ddgs's own per-request timeout, so its thread ends soon after our deadline.
        return DDGS(timeout=max(1, round(timeout))).text(query, max_results=3)

    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout):
            items = await off_loop(search)
    except TimeoutError:
        return Check(
            "search ddgs",
            "fail",
            f"unreachable: DuckDuckGo did not answer within {timeout:g} s",
            "check the internet connection, or set TAVILY_API_KEY or SEARXNG_URL",
        )
    except RatelimitException as error:
        return Check("search ddgs", "warn", f"rate-limited: {error}", "wait a few minutes")
    except DDGSException as error:
        if "no results" in str(error).lower():
            return Check("search ddgs", "warn", "answered but found nothing")
        # ddgs chains its HTTP client's errors with " > "; the last link is the reason.
        reason = str(error).rsplit(" > ", 1)[-1].removesuffix("')")
        return Check(
            "search ddgs",
            "fail",
            f"unreachable: {reason}",
            "check the internet connection, or set TAVILY_API_KEY or SEARXNG_URL",
        )
    seconds = time.monotonic() - started
    return Check("search ddgs", "ok", f"answered with {len(items)} results in {seconds:.1f} s")
