"""URLs as the agent reads them: which page a URL names (one notion of "the same page" for
the fetch cache, the run's sources and the citation registry: `…/a/`, `…/a#x` and
`…/a?utm_source=y` are one page), which URLs may be cited, and their fragments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

# Query parameters that only say where a click came from; they never change the page.
_TRACKING_PREFIXES = ("utm_",)
_TRACKING_NAMES = frozenset({"fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Characters a path may carry unescaped (RFC 3986 pchar minus '%'), so that
# "/a%20b" and "/a b" or "%7E" and "~" normalise to the same key.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_WEB_SCHEMES = ("http", "https")
# A PDF's page: `file:///…/a.pdf#page=3` (the library's) or `https://…/a.pdf#page=3` (a
# PDF found on the web) names page 3, a source of its own.
_PAGE_ANCHOR = re.compile(r"page=([1-9][0-9]{0,5})")
# Longer URLs are not links a page or an API would give (browsers and CDNs stop near 2,000).
MAX_URL_CHARS = 2_048
# An http(s) URL with a host and no whitespace or control characters anywhere.
_WEB_URL = re.compile(r"https?://[^\s/?#\x00-\x1f\x7f]+[^\s\x00-\x1f\x7f]*", re.IGNORECASE)


def _split(url: str) -> SplitResult | None:
    """`url`'s parts, or None for one `urlsplit` refuses (an unclosed IPv6 bracket, which
    a search result may carry): such a URL names no page we can fetch or cite."""
    try:
        return urlsplit(url.strip())
    except ValueError:
        return None


def is_web_url(url: str) -> bool:
    parts = _split(url)
    return parts is not None and parts.scheme.lower() in _WEB_SCHEMES


def checked_web_url(value: object) -> str | None:
    """`value` when it is an http(s) URL an outside answer may name for us to fetch: a host,
    at most `MAX_URL_CHARS`, no whitespace, control, format (bidi) or surrogate character."""
    if not isinstance(value, str) or len(value) > MAX_URL_CHARS or not value.isprintable():
        return None
    return value if _WEB_URL.fullmatch(value) and _split(value) is not None else None


def is_file_url(url: str) -> bool:
    """A local file in the form the library writes: `file:///absolute/path` (no host)."""
    parts = _split(url)
    return (
        parts is not None
        and parts.scheme.lower() == "file"
        and not parts.netloc
        and parts.path.startswith("/")
    )


def pdf_page_anchor(base: str, fragment: str) -> str:
    """`page=N` when `fragment` names a page and `base` is a citable URL (a library file or
    a web page), else ''.

    A web page's `#page=N` is kept in its key, but only a PDF's pages are ever registered
    as sources (search/pdf_pages.py): a link to an HTML page at `#page=2` finds no source of
    that key, and the registry leads it to the page itself (citations/registry.py).
    """
    return fragment if is_citable_url(base) and _PAGE_ANCHOR.fullmatch(fragment) else ""


def pdf_page_number(url: str) -> int:
    """The page `url` names (`…#page=N`), or 0. Only for a URL the registry kept, which
    keeps `#page=N` on a PDF's pages alone (memory stores the fact beside the URL:
    `memory.research.stored_pdf_page`)."""
    base, fragment = split_fragment(url)
    anchor = pdf_page_anchor(base, fragment)
    return int(anchor.removeprefix("page=")) if anchor else 0


def pdf_page_url(url: str, page: int) -> str:
    """The URL of page `page` (1-based) of the PDF at `url` (its fragment replaced)."""
    return f"{split_fragment(url)[0]}#page={page}"


def page_key(url: str) -> str:
    """Which page a URL names: one key for every spelling of it (case, default port,
    trailing slash, fragment, escaping, parameter order, tracking parameters).

    The scheme is kept, since http and https may serve different things.
    """
    parts = _split(url)
    if parts is None:  # unparsable: a key of its own, never another page's
        return url.strip()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:  # a malformed port: keep the key distinct rather than guess
        port = None
        host = parts.netloc.lower()
    scheme = parts.scheme.lower()
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    path = quote(unquote(parts.path), safe=_PATH_SAFE).rstrip("/")
    query = urlencode(
        sorted(
            (name, value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if not _is_tracking(name)
        )
    )
    # A file URL has no host: urlunsplit would drop the '//' that `file:///` needs.
    key = urlunsplit((scheme, netloc, path, query, ""))
    if scheme == "file":
        key = f"file://{path}" + (f"?{query}" if query else "")
    # A PDF's page is a page of its own (the fetch of the file keys by `file_key`).
    anchor = pdf_page_anchor(url.partition("#")[0], parts.fragment)
    return f"{key}#{anchor}" if anchor else key


def file_key(url: str) -> str:
    """Which file a URL names: `page_key` without a PDF page (one fetch per PDF)."""
    return page_key(split_fragment(url)[0])


def source_key(source: Mapping[str, object]) -> str:
    """Which page a retrieved source (`state.Source`) is: its URL's `page_key`, where a web
    URL's `#page=N` counts only on a source the search step marked as a PDF's page
    (`pdf_page`); a library file's page always does (only the library makes those)."""
    url = str(source["url"])
    if "pdf_page" not in source and is_web_url(url):
        url = split_fragment(url)[0]
    return page_key(url)


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_NAMES or lowered.startswith(_TRACKING_PREFIXES)


# The citation check's URL helpers: the fragment split, citable URLs and PDF links.
DIRECTIVE_DELIMITER = ":~:"


def source_base(url: str) -> str:
    """What a source is keyed by: the URL without its fragment, except that a PDF's
    `#page=N` stays (each PDF page is a source of its own)."""
    base, fragment = split_fragment(url)
    # `a.pdf#page=3:~:text=…` is still page 3 (the text directive is dropped on a PDF).
    anchor = pdf_page_anchor(base, fragment.partition(DIRECTIVE_DELIMITER)[0])
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
    parts = _split(url)
    path = parts.path.lower() if parts is not None else ""
    return path.endswith(".pdf") or title.lstrip().upper().startswith("[PDF]")
