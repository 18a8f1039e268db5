"""Totals over a traffic log (calls, tokens, searches, fetches) and a report's citations.

The closing summary and `replay` both count from the log, so they agree, and a resumed
run's totals include the work done before it stopped.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt


@dataclass
class RoleUsage:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    errors: int = 0


@dataclass
class Totals:
    roles: dict[str, RoleUsage] = field(default_factory=lambda: defaultdict(RoleUsage))
    searches: int = 0
    searches_failed: int = 0
    searches_refused: int = 0
    fetches: int = 0
    researchers_failed: int = 0

    def lines(self) -> list[str]:
        out = []
        for role, usage in sorted(self.roles.items()):
            errors = f", {usage.errors} failed" if usage.errors else ""
            out.append(
                f"{role:<13} {usage.calls:>3} calls  {usage.tokens_in:>8,} tokens in  "
                f"{usage.tokens_out:>7,} out{errors}"
            )
        refused = f", {self.searches_refused} refused at the cap" if self.searches_refused else ""
        failed = f", {self.searches_failed} failed" if self.searches_failed else ""
        out.append(f"searches      {self.searches}{failed}{refused}")
        out.append(f"fetches       {self.fetches}")
        if self.researchers_failed:
            out.append(f"researchers   {self.researchers_failed} failed (see 'Research gaps')")
        return out


def totals(records: list[dict[str, Any]]) -> Totals:
    """Add up a traffic log's records."""
    result = Totals()
    for record in records:
        kind = record.get("kind")
        if kind == "model_reply":
            usage = result.roles[record.get("role", "model")]
            usage.calls += 1
            usage.tokens_in += int(record.get("tokens_in") or 0)
            usage.tokens_out += int(record.get("tokens_out") or 0)
        elif kind == "model_error":
            result.roles[record.get("role", "model")].errors += 1
        elif kind == "progress":
            event = record.get("event")
            result.searches += event == "search"
            result.searches_failed += event == "search_failed"
            result.searches_refused += event == "search_refused"
            result.fetches += event == "fetch"
            result.researchers_failed += event == "research_failed"
    return result


def cited_urls(report: str) -> list[str]:
    """Link targets in a Markdown report, in order, parsed rather than pattern-matched."""
    urls = []
    for token in MarkdownIt().parse(report):
        for child in token.children or []:
            href = child.attrGet("href") if child.type == "link_open" else None
            if isinstance(href, str) and href.startswith(("http://", "https://")):
                urls.append(href)
    return urls


def citation_line(report: str, sources: list[dict[str, Any]]) -> str:
    """How many links the report has, and how many point at pages research retrieved."""
    urls = cited_urls(report)
    retrieved = {source["url"] for source in sources}
    # Links may carry a text fragment (#:~:text=...) after the retrieved URL.
    known = sum(1 for url in urls if url.split("#", 1)[0] in retrieved)
    return (
        f"citations     {len(urls)} links: {known} to retrieved pages, "
        f"{len(urls) - known} to pages not retrieved"
    )
