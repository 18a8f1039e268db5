"""Pages built to keep the extractor busy: bounded CPU, deep nesting, the node cut."""

from __future__ import annotations

import threading
import time

from deep_research.text import extract
from tests.support.fakes.page_server import many_links_html
from tests.support.hostile import EXTRACTION_BOUND


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
    assert tree is not None
    assert extract.cut_nodes(tree, 4)  # html, body, p, b
    assert [node.tag for node in tree.iter()] == ["html", "body", "p", "b"]
    assert tree.text_content() == "abtail"
    assert not extract.cut_nodes(tree, 4), "a tree within the limit is left alone"
