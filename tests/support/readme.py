"""Reading the documentation's code blocks, and running its Python snippets as a reader would.

The documentation is README.md (the front door) and the pages under docs/. A test names a
section by its heading, or a block by a marker just before it, without saying which page
holds it: the text moves between pages, the check stays. A heading or marker found on two
pages is an error, so a check can never read the wrong one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
# Every page a reader reaches from the README, by its path relative to the repository.
PAGES: dict[str, str] = {
    "README.md": README,
    **{f"docs/{page.name}": page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("*.md"))},
}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^(#+) (.+)$", re.MULTILINE)


def page_with(marker: str) -> str:
    """The one page whose text contains `marker`."""
    found = [text for text in PAGES.values() if marker in text]
    assert len(found) == 1, f"{marker!r} is on {len(found)} pages, not one"
    return found[0]


def block_after(marker: str, text: str | None = None) -> str:
    """The body of the first fenced block after `marker` (in `text`, or on its one page)."""
    if text is None:
        text = page_with(marker)
    start = text.index(marker)
    match = FENCE.search(text, start)
    assert match, f"no code block after {marker!r}"
    return match.group(2)


def headings(text: str) -> list[re.Match[str]]:
    """The Markdown headings of `text`, outside fenced blocks (a `# comment` is no heading)."""
    fenced = [match.span() for match in FENCE.finditer(text)]
    return [
        match
        for match in HEADING.finditer(text)
        if not any(start <= match.start() < end for start, end in fenced)
    ]


def section(heading: str) -> str:
    """The text under `heading` (its words; the level is the page's) to the next heading of
    the same or a higher level, on the one page that has it."""
    title = heading.lstrip("#").strip()
    found = [
        (text, match)
        for text in PAGES.values()
        for match in headings(text)
        if match.group(2).strip() == title
    ]
    assert len(found) == 1, f"heading {title!r} is on {len(found)} pages or places, not one"
    text, match = found[0]
    level = len(match.group(1))
    ends = [
        later.start()
        for later in headings(text)
        if later.start() > match.start() and len(later.group(1)) <= level
    ]
    return text[match.start() : min(ends) if ends else len(text)]


def run_with_top_level_await(source: str, names: dict[str, Any] | None = None) -> Any:
    """Compile `source` as Jupyter and `python -m asyncio` do: `await` allowed at the top.

    `names` is the session's namespace, shared by the snippets a page runs one after another."""
    return eval(  # noqa: S307  # the documentation's own snippet
        compile(source, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT),
        {} if names is None else names,
    )
