"""URL helpers of the citation check: the fragment split, web, library and PDF URLs.

Which page a URL names is `deep_research.urls.page_key`, shared with the fetch cache.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from deep_research.urls import is_file_url, is_web_url, library_page_anchor

DIRECTIVE_DELIMITER = ":~:"


def source_base(url: str) -> str:
    """What a source is keyed by: the URL without its fragment, except that a library
    document's `#page=N` stays (each PDF page is a source of its own)."""
    base, fragment = split_fragment(url)
    anchor = library_page_anchor(base, fragment)
    return f"{base}#{anchor}" if anchor else base


def is_citable_url(url: str) -> bool:
    """A web page, or a local file as the library names it (`file:///…`, no host). Which
    files were really retrieved is the registry's to say: only the library source makes
    `file:` sources, so a path outside the library can never be found there."""
    return is_web_url(url) or is_file_url(url)


def split_fragment(url: str) -> tuple[str, str]:
    """`(url without fragment, fragment without '#')`."""
    base, _, fragment = url.partition("#")
    return base, fragment


def is_pdf(url: str, title: str = "") -> bool:
    """PDF viewers ignore text fragments: a `.pdf` path, or a search engine's `[PDF]` tag."""
    path = urlsplit(url).path.lower()
    return path.endswith(".pdf") or title.lstrip().upper().startswith("[PDF]")
