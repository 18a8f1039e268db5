"""Citations checked in code: source registry, text-fragment links, verification, hygiene."""

from deep_research.citations.fragments import RetrievedText, TextDirective, fragment_of
from deep_research.citations.registry import RegisteredSource, SourceRegistry
from deep_research.citations.safety import check_report
from deep_research.citations.urls import normalise_url
from deep_research.citations.verify import CheckedReport

__all__ = [
    "CheckedReport",
    "RegisteredSource",
    "RetrievedText",
    "SourceRegistry",
    "TextDirective",
    "check_report",
    "fragment_of",
    "normalise_url",
]
