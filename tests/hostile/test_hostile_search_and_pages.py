"""Hostile search APIs and pages: web text that tries to steer the agent, results of the
wrong shape, pages built to keep the extractor busy after the fetch has timed out."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from deep_research.search import extract
from deep_research.search.fetch import PageFetcher
from deep_research.search.netguard import AddressPolicy
from tests.support.fakes.page_server import PageServer, many_links_html
from tests.support.search import PAGES_HOST

ALLOW_PAGES = AddressPolicy(allowed_hosts=frozenset({PAGES_HOST}))
# Generous: the bounded extraction takes about 1.5 s of CPU on a loaded 2-core machine;
# unbounded, the same page took more than two minutes.
EXTRACTION_BOUND = 30.0


# --- pages that keep the extractor busy ----------------------------------------------


def test_page_of_60000_links_is_extracted_in_bounded_cpu_keeping_its_start() -> None:
    raw = many_links_html().encode()
    result: dict[str, object] = {}

    def work() -> None:
        started = time.thread_time()
        result["text"] = extract.to_text("html", raw, "utf-8", "http://pages.test/links")
        result["cpu"] = time.thread_time() - started

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(EXTRACTION_BOUND)
    assert not worker.is_alive(), "extraction still running: its input was not bounded"
    assert isinstance(result["cpu"], float) and result["cpu"] < EXTRACTION_BOUND
    text = str(result["text"])
    assert text.startswith("# The truth about many links") and "Paragraph 6" in text


def test_deeply_nested_page_is_extracted_without_error() -> None:
    raw = ("<html><body><p>Visible start.</p>" + "<div>" * 100_000 + "deep").encode()
    assert "Visible start." in extract.to_text("html", raw, "utf-8", "http://pages.test/deep")


def test_cut_nodes_keeps_the_first_nodes_in_document_order_and_drops_the_rest() -> None:
    from trafilatura.utils import load_html

    tree = load_html(b"<html><body><p>a<b>b</b>tail</p><p>c</p><div><p>d</p></div></body></html>")
    assert extract.cut_nodes(tree, 4)  # html, body, p, b
    assert [node.tag for node in tree.iter()] == ["html", "body", "p", "b"]
    assert tree.text_content() == "abtail"
    assert not extract.cut_nodes(tree, 4), "a tree within the limit is left alone"


async def test_after_a_fetch_timeout_no_extraction_thread_keeps_burning_cpu(
    pages: PageServer,
) -> None:
    # The fetcher's extraction runs in the loop's default executor: an executor of its own
    # here, so the test can wait for every thread it ran to finish.
    executor = ThreadPoolExecutor(max_workers=2)
    asyncio.get_running_loop().set_default_executor(executor)
    url = f"http://{PAGES_HOST}:{pages.port}/links"
    async with PageFetcher(ALLOW_PAGES, timeout=1.0, max_chars=2_000) as fetcher:
        page = await fetcher.fetch(url)
    assert page.text.startswith("# The truth about many links") or "timed out" in page.skipped
    drained = threading.Thread(target=executor.shutdown, kwargs={"wait": True}, daemon=True)
    drained.start()
    drained.join(EXTRACTION_BOUND)
    assert not drained.is_alive(), "an extraction thread still runs long after the fetch ended"
