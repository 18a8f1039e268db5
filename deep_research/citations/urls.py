"""URL helpers of the citation check: the fragment split, web and PDF URLs.

Which page a URL names is `deep_research.urls.page_key`, shared with the fetch cache.
"""

from __future__ import annotations

from urllib.parse import urlsplit

DIRECTIVE_DELIMITER = ":~:"
_WEB_SCHEMES = ("http", "https")


def split_fragment(url: str) -> tuple[str, str]:
    """`(url without fragment, fragment without '#')`."""
    base, _, fragment = url.partition("#")
    return base, fragment


def is_web_url(url: str) -> bool:
    return urlsplit(url.strip()).scheme.lower() in _WEB_SCHEMES


def is_pdf(url: str, title: str = "") -> bool:
    """PDF viewers ignore text fragments: a `.pdf` path, or a search engine's `[PDF]` tag."""
    path = urlsplit(url).path.lower()
    return path.endswith(".pdf") or title.lstrip().upper().startswith("[PDF]")
