"""One benchmark case in a fresh process: `python -m benchmarks.case PROFILE K [SECTIONS]`
prints JSON (SECTIONS: `report_in_sections`, auto unless given).

A fresh process per case, so each one pays what a real run pays once: the relevance
model's load, the extractor's first page, the imports. Timing wrappers record when the
search step's and memory's parts ran (search API, relevance scoring and the model's load,
page fetch, extraction; the store's open, chunking and writes), so an idle gap on the
critical path can be told what caused it.
"""

from __future__ import annotations

import time

PROCESS_START = time.perf_counter()

import asyncio  # noqa: E402  # timed from the process start, before every import
import functools  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from benchmarks.rss import own_peak_mb  # noqa: E402

os.environ["DEEP_RESEARCH_DOTENV"] = "0"  # never a developer's `.env`
for _name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "OPENAI_API_KEY", "CHROMA_HOST"):
    os.environ.pop(_name, None)

Activity = tuple[str, float, float]  # kind, start, end
ACTIVITIES: list[Activity] = []


def _timed_sync(kind: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            ACTIVITIES.append((kind, start, time.perf_counter()))

    return wrapper


def _timed_async(kind: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await function(*args, **kwargs)
        finally:
            ACTIVITIES.append((kind, start, time.perf_counter()))

    return wrapper


def instrument() -> None:
    """Wrap the search step's parts in timers; their behaviour is unchanged."""
    from deep_research.checkpoints.sqlite import SettlingSqliteSaver
    from deep_research.embedding import loader
    from deep_research.memory import chunks, store
    from deep_research.memory import open as opening
    from deep_research.search import chain, fetch, relevance
    from deep_research.text import extract

    loader.embedder = _timed_sync("relevance model", loader.embedder)  # type: ignore[method-assign]
    relevance.score_results = _timed_async("relevance scoring", relevance.score_results)  # type: ignore[method-assign]
    extract.to_text = _timed_sync("page extraction", extract.to_text)  # type: ignore[method-assign]
    fetch.PageFetcher.fetch = _timed_async("page fetch", fetch.PageFetcher.fetch)  # type: ignore[method-assign]
    chain.SearchChain.search = _timed_async("search API", chain.SearchChain.search)  # type: ignore[method-assign]
    opening.open_store_blocking = _timed_sync("memory open", opening.open_store_blocking)  # type: ignore[assignment]
    chunks.split = _timed_sync("memory chunking", chunks.split)  # type: ignore[assignment]
    chunks.kept_split = _timed_sync("memory chunking", chunks.kept_split)  # type: ignore[assignment]
    store.Store._put = _timed_sync("memory write", store.Store._put)  # type: ignore[method-assign]
    # The CLI's checkpointer with its durability ("sync"): each step's checkpoint is on disk
    # before the next step starts, so these writes sit on the critical path.
    saver = SettlingSqliteSaver
    saver.aput = _timed_async("checkpoint", saver.aput)  # type: ignore[method-assign]
    saver.aput_writes = _timed_async("checkpoint writes", saver.aput_writes)  # type: ignore[method-assign]


async def run(profile_name: str, k: int, sections: str = "auto") -> dict[str, Any]:
    instrument()
    import multiprocessing

    from benchmarks.world import PROFILES, TOPIC_POOL, serve
    from deep_research.checkpoints.sqlite import open_sqlite
    from deep_research.graph import builder

    imported = time.perf_counter()
    PROFILES[profile_name]  # an unknown profile fails here, not in the world's process
    topics = [
        TOPIC_POOL[i % len(TOPIC_POOL)] + ("" if i < len(TOPIC_POOL) else f" {i}") for i in range(k)
    ]
    # The model server, the search API and the pages run in a process of their own, as
    # real ones do: their work never competes with the run's for this interpreter's GIL.
    spawn = multiprocessing.get_context("spawn")
    ours, theirs = spawn.Pipe()
    world = spawn.Process(target=serve, args=(profile_name, topics, theirs), daemon=True)
    world.start()
    theirs.close()  # the world's end is its own: a world that dies is EOF here, not a hang
    urls = ours.recv()
    os.environ.update(
        LLM_BASE_URL=urls["llm"],
        LLM_MODEL="bench-model",
        LLM_MAX_RETRIES="0",
        TAVILY_API_KEY="tvly-bench",
        TAVILY_API_BASE_URL=urls["tavily"],
        FETCH_ALLOWED_HOSTS="127.0.0.1",
        # A memory of its own, empty: a user's first run, the same in every case (the
        # default, ./.deep_research, would recall the cases run before this one).
        MEMORY_DIR=tempfile.mkdtemp(prefix="bench-memory-"),
    )
    context: Any = {
        "allow_clarification": False,
        # A first run, from nothing: the memory is the case's own empty directory (see
        # MEMORY_DIR above), so nothing is recalled, and `remember` runs as in a user's run.
        "search_library": False,
        # All K at once, on either server: on the laptop's one slot the run finds out that
        # it answers one request at a time and the researchers take turns (llm/slots.py).
        "max_researchers_per_turn": max(1, min(k, 16)),
        "max_searches_per_run": max(25, 4 * k + 2),
        "report_in_sections": sections,
    }
    question: Any = {"messages": [{"role": "user", "content": "Are heat pumps worth it?"}]}
    config: Any = {"configurable": {"thread_id": "bench"}}
    published = one_slot_at = 0.0
    checkpoints = Path(tempfile.mkdtemp(prefix="bench-checkpoints-")) / "checkpoints.sqlite"
    async with open_sqlite(checkpoints) as saver:  # as the CLI keeps a run, and as durably
        graph = builder.compile(checkpointer=saver)
        started = time.perf_counter()
        # As the CLI streams: its progress events too, from inside the research subgraphs.
        async for namespace, mode, chunk in graph.astream(
            question,
            config,
            context=context,
            stream_mode=["custom", "updates"],
            subgraphs=True,
            durability="sync",
        ):
            if mode == "updates" and not namespace and "finalize" in chunk:
                published = time.perf_counter()  # the report is out: state, the CLI's file
            elif mode == "custom" and chunk.get("event") == "one_slot":
                one_slot_at = time.perf_counter()  # found out: the researchers take turns
        ended = time.perf_counter()
        out = (await graph.aget_state(config)).values
    ours.send("stop")
    log = ours.recv()
    world.join(10)
    return {
        "profile": profile_name,
        "k": k,
        "sections": sections,
        "process_start": PROCESS_START,
        "imported": imported,
        "run_started": started,
        "report_published": published,
        "one_slot_at": one_slot_at,
        "run_ended": ended,
        "calls": log["calls"],
        "activities": ACTIVITIES,
        "searches": log["searches"],
        "fetches": log["fetches"],
        "report_chars": len(out.get("final_report") or ""),
        "usage": out.get("usage"),
        "peak_rss_mb": own_peak_mb(),
    }


def main() -> None:
    profile, k = sys.argv[1], int(sys.argv[2])
    sections = sys.argv[3] if len(sys.argv) > 3 else "auto"
    result = asyncio.run(run(profile, k, sections))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # worker threads (the relevance model) are not joined: the result is out


if __name__ == "__main__":
    main()
