"""Deterministic evaluators: one per property that citation checking promises.

Each takes a run's outputs (`final_report` and `sources`, as in the graph's output state)
and returns `{"key", "score", "comment"}`: the shape LangSmith's `evaluate` records, and
what the offline runner prints. Scores are 0-1; `None` means "does not apply".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypedDict

from deep_research.citations import SourceRegistry
from deep_research.citations.fragments import FragmentError, parse_directives
from deep_research.citations.hygiene import numbered_prefix, stray_tildes
from deep_research.citations.markdown import Link, describe_inline, parse
from deep_research.text.urls import DIRECTIVE_DELIMITER, is_web_url, split_fragment


class Score(TypedDict):
    key: str
    score: float | None
    comment: str


def _report(outputs: Mapping[str, Any]) -> str:
    report = outputs.get("final_report")
    if not isinstance(report, str):
        raise ValueError("outputs need a 'final_report' string (the graph's output state)")
    return report


def _registry(outputs: Mapping[str, Any]) -> SourceRegistry:
    return SourceRegistry(outputs.get("sources") or [])


def _citations(report: str) -> Iterator[Link]:
    """Every link that points outside the report (jumps to '#section' are not citations)."""
    for token in parse(report):
        if token.type == "inline":
            yield from (
                link for link in describe_inline(token).links if not link.href.startswith("#")
            )


def _share(good: int, total: int, what: str) -> tuple[float | None, str]:
    if not total:
        return None, f"no {what}"
    return good / total, f"{good} of {total} {what}"


def stray_tilde_count(outputs: Mapping[str, Any]) -> Score:
    """1 when no unescaped `~` is left in prose (it strikes text through in GFM)."""
    count = sum(
        len(stray_tildes(describe_inline(t))) for t in parse(_report(outputs)) if t.type == "inline"
    )
    return Score(key="stray_tildes", score=float(count == 0), comment=f"{count} stray tildes")


def numbered_headings(outputs: Mapping[str, Any]) -> Score:
    """1 when no heading starts with a section number ("## 1. Background")."""
    tokens = parse(_report(outputs))
    numbered = [
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and numbered_prefix(tokens[i + 1].content)
    ]
    comment = "; ".join(numbered) if numbered else "no numbered headings"
    return Score(key="numbered_headings", score=float(not numbered), comment=comment)


def link_format(outputs: Mapping[str, Any]) -> Score:
    """Share of citations written `[text](https://...)`: inline, labelled, no title."""
    report = _report(outputs)
    links = list(_citations(report))
    uniform = [
        link for link in links
        if link.kind == "inline" and not link.title and is_web_url(link.href)
        and link.label_end > link.start + 1
    ]  # fmt: skip
    score, comment = _share(len(uniform), len(links), "links in [text](url) form")
    return Score(key="link_format", score=score, comment=comment)


def citations_resolve(outputs: Mapping[str, Any]) -> Score:
    """Share of cited URLs that were retrieved in this run (after URL normalisation)."""
    registry = _registry(outputs)
    links = list(_citations(_report(outputs)))
    resolved = sum(registry.lookup(link.href) is not None for link in links)
    score, comment = _share(resolved, len(links), "citations resolve to retrieved sources")
    return Score(key="citations_resolve", score=score, comment=comment)


def fragments_found(outputs: Mapping[str, Any]) -> Score:
    """Share of text fragments whose passage is in the retrieved text of their source."""
    registry = _registry(outputs)
    total = found = 0
    for link in _citations(_report(outputs)):
        directive_part = split_fragment(link.href)[1].partition(DIRECTIVE_DELIMITER)[2]
        if not directive_part:
            continue
        total += 1
        source = registry.lookup(link.href)
        try:
            directives = parse_directives(directive_part)
        except FragmentError:
            continue
        if source and directives and all(source.retrieved.locate(d) for d in directives):
            found += 1
    score, comment = _share(found, total, "fragments found in the retrieved text")
    return Score(key="fragments_found", score=score, comment=comment)


OFFLINE_EVALUATORS: list[Callable[[Mapping[str, Any]], Score]] = [
    stray_tilde_count,
    numbered_headings,
    link_format,
    citations_resolve,
    fragments_found,
]


def cited_urls(outputs: Mapping[str, Any]) -> list[str]:
    """Unique cited URLs without fragments, in order of first citation."""
    return list(
        dict.fromkeys(split_fragment(link.href)[0] for link in _citations(_report(outputs)))
    )
