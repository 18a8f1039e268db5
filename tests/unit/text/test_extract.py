"""Page extraction: trafilatura's own extractor first, its fallbacks where it finds little."""

from __future__ import annotations

from typing import Any

import pytest
import trafilatura

from deep_research.text import extract
from tests.support.fakes.page_server import heavy_article_html

WORDS = " ".join(f"word{i}" for i in range(80))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each trafilatura.extract call was a fast one."""
    made: list[bool] = []
    original = trafilatura.extract

    def counted(*args: Any, **kwargs: Any) -> str | None:
        made.append(bool(kwargs.get("fast")))
        return original(*args, **kwargs)

    monkeypatch.setattr(trafilatura, "extract", counted)
    return made


def test_a_news_page_is_read_once_without_the_fallbacks(calls: list[bool]) -> None:
    html = heavy_article_html("heat-pumps").encode()
    text = extract.to_text("html", html, "utf-8", "https://example.org/news")
    assert len(text) >= extract.THOROUGH_BELOW
    assert calls == [True], "the comparison with readability and jusText doubles the CPU"


@pytest.mark.parametrize("block", ["div", "span", "li"])
def test_text_only_the_fallbacks_find_is_still_read(calls: list[bool], block: str) -> None:
    # trafilatura's own extractor finds nothing in bare <div>s, <span>s or list items.
    body = "".join(f"<{block}>{WORDS} sentence {i}.</{block}>" for i in range(5))
    html = f"<html><body><ul>{body}</ul></body></html>".encode()
    text = extract.to_text("html", html, "utf-8", "https://example.org/plain")
    assert all(f"sentence {i}." in text for i in range(5)), text
    assert calls == [True, False]
