"""`file:` links in a report: a library document retrieved in this run is a source like a
web page (a PDF page its own, opened at `#page=N`); any other file link is removed."""

from __future__ import annotations

from deep_research.citations import check_report
from deep_research.state import Source

PDF = "file:///home/me/docs/energy%20report.pdf"
NOTES = "file:///home/me/docs/notes.md"
SOURCES = [
    Source(
        url=f"{PDF}#page=3",
        title="energy report.pdf, page 3",
        content="Wind gave half.",
        found_by="t",
    ),
    Source(url=NOTES, title="notes.md", content="The grid was upgraded in 2024.", found_by="t"),
]


def test_library_links_are_kept_at_their_page_and_listed_by_file_name() -> None:
    checked = check_report(
        f"Wind [a]({PDF}#page=3). Whole file [b]({PDF}). Unread page [c]({PDF}#page=9). "
        f'Grid [d]({NOTES} "The grid was upgraded").\n',
        SOURCES,
    )
    body = checked.render()
    assert f"[a]({PDF}#page=3)" in body
    # The file without a page, or at a page never retrieved: the page that was.
    assert f"[b]({PDF}#page=3)" in body and f"[c]({PDF}#page=3)" in body
    assert f"[d]({NOTES}#:~:text=The%20grid%20was%20upgraded)" in body  # checked in its text
    assert f"1. [energy report.pdf, page 3]({PDF}#page=3)\n2. [notes.md]({NOTES})" in body
    assert checked.check["fabricated_removed"] == 0


def test_file_links_to_anything_not_retrieved_from_the_library_are_removed() -> None:
    outside = [
        "file:///etc/passwd",
        "file:///home/me/docs/other.pdf#page=3",
        "file://attacker.example/home/me/docs/notes.md",  # a host: not a library URL
        "FILE:///home/me/.ssh/id_rsa",
    ]
    report = " ".join(f"[x{i}]({url})" for i, url in enumerate(outside)) + f" <{outside[0]}>\n"
    checked = check_report(report, SOURCES)
    assert "file:" not in checked.body.lower()
    assert checked.check["removed_urls"] == [*outside, outside[0]]
    assert checked.check["fabricated_removed"] == 5


def test_a_web_link_is_unaffected_by_a_library_source_of_the_same_path() -> None:
    checked = check_report("[x](https://home/me/docs/notes.md)\n", SOURCES)
    assert checked.check["removed_urls"] == ["https://home/me/docs/notes.md"]
