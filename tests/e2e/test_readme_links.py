"""The docs' links name files and headings that exist; the README is a short front door to all."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.readme import FENCE, PAGES, README, REPO, headings, section

# A Markdown link outside code: [text](target) or [text](target "title").
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`]*`")  # a code span may wrap a line


def prose(text: str) -> str:
    """`text` without its fenced blocks and code spans: links there are examples, not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation out, spaces to hyphens."""
    words = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return words.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(match.group(2)) for match in headings(path.read_text(encoding="utf-8"))}


# The pages a reader follows links on: the README, docs/, and the architecture.
LINKED = {**PAGES, "DESIGN.md": (REPO / "DESIGN.md").read_text(encoding="utf-8")}


def relative_links(name: str) -> list[str]:
    targets = MARKDOWN_LINK.findall(prose(LINKED[name]))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # not https:, mailto:


def test_every_relative_link_in_the_docs_names_a_file_and_heading_that_exist() -> None:
    checked = 0
    for name in LINKED:
        page = REPO / name
        for target in relative_links(name):
            path, _, fragment = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            assert file.is_relative_to(REPO) and file.exists(), f"{name}: {target}"
            if fragment and file.suffix == ".md":
                assert fragment in anchors(file), f"{name}: {target}: no such heading"
            checked += 1
    assert checked > 40, "the links were found"


def test_the_link_checker_catches_a_missing_file_and_a_missing_heading() -> None:
    assert MARKDOWN_LINK.findall(prose('[a](docs/x.md) `[b](c.md)` [d](e.md "t")')) == [
        "docs/x.md",
        "e.md",
    ]
    assert (
        anchor("Check your setup: `deep-research doctor`")
        == "check-your-setup-deep-research-doctor"
    )
    assert "no-such-heading" not in anchors(REPO / "docs" / "configuration.md")
    assert not (REPO / "docs" / "x.md").exists()


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(REPO / target.partition("#")[0]).resolve() for target in relative_links("README.md")}
    pages = {(REPO / name).resolve() for name in PAGES if name.startswith("docs/")}
    assert pages and pages <= linked, sorted(str(p) for p in pages - linked)


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= 250
    for face in (
        "### Terminal",
        "### Notebook",
        "### Agent Server and Studio",
        "### MCP",
        "### Python",
    ):
        text = section(face)
        assert re.search(r"\]\((docs/|examples/)", text), f"{face} links to its page"
