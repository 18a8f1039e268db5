"""Citation verification: fabricated links, fragments, URL matching, PDFs, link forms."""

from __future__ import annotations

import random

from deep_research.citations import SourceRegistry, TextDirective, check_report
from deep_research.citations.hygiene import stray_tildes
from deep_research.citations.markdown import describe_inline, parse
from deep_research.state import Source
from deep_research.text.urls import page_key

PAGE = "https://example.org/heat-pumps"
PDF = "https://example.org/report.pdf"
SOURCES = [
    Source(
        url=PAGE,
        title="Heat pumps in Norway",
        content="In Norway, heat pumps work well even at \u221210 \u00b0C, the agency says.",
        found_by="efficiency",
    ),
    Source(url=PDF, title="Annual report", content="Costs fell by a third.", found_by="costs"),
]


def test_fabricated_url_is_unlinked_and_the_claim_text_stays() -> None:
    checked = check_report("Pumps save energy [per a study](https://made-up.example/x).", SOURCES)
    assert checked.body == "Pumps save energy per a study."
    assert checked.check["fabricated_removed"] == 1
    assert checked.check["removed_urls"] == ["https://made-up.example/x"]
    assert checked.check["links_kept"] == 0 and checked.cited == []


def test_fabricated_link_whose_text_is_its_url_is_removed_whole() -> None:
    report = "See [https://made-up.example/x](https://made-up.example/x), <https://nope.example>."
    checked = check_report(report, SOURCES)
    assert "made-up" not in checked.body and "nope" not in checked.body
    assert checked.check["fabricated_removed"] == 2


def test_fragment_not_in_the_retrieved_text_is_dropped_and_the_url_kept() -> None:
    checked = check_report(f"Claim [here]({PAGE}#:~:text=never%20said%20this).", SOURCES)
    assert checked.body == f"Claim [here]({PAGE})."
    assert checked.check["fragments_dropped"] == 1 and checked.check["links_kept"] == 1


def test_fragment_found_after_normalisation_is_rebuilt_from_the_page_text() -> None:
    # Straight minus and lower case in the model's fragment; the page has U+2212.
    fragment = "#:~:text=heat%20pumps%20work%20well%20even%20at%20-10"
    checked = check_report(f"[Works]({PAGE}{fragment}).", SOURCES)
    assert checked.body == (
        f"[Works]({PAGE}#:~:text=heat%20pumps%20work%20well%20even%20at%20%E2%88%9210)."
    )
    assert checked.check["fragments_kept"] == 1 and checked.check["fragments_dropped"] == 0


def test_a_quote_in_the_link_title_becomes_a_fragment() -> None:
    checked = check_report(f'[Works]({PAGE} "work well even at \u221210 \u00b0C").', SOURCES)
    assert (
        checked.body == f"[Works]({PAGE}#:~:text=work%20well%20even%20at%20%E2%88%9210%20%C2%B0C)."
    )
    assert checked.check["fragments_built"] == 1


def test_a_quote_that_is_not_on_the_page_leaves_a_bare_link() -> None:
    checked = check_report(f'[Works]({PAGE} "heat pumps fail below zero").', SOURCES)
    assert checked.body == f"[Works]({PAGE})."
    assert checked.check["fragments_dropped"] == 1 and checked.check["fragments_built"] == 0


def test_pdf_links_get_no_fragment() -> None:
    report = f'[a]({PDF}#:~:text=Costs%20fell) and [b]({PDF} "Costs fell").'
    checked = check_report(report, SOURCES)
    assert checked.body == f"[a]({PDF}) and [b]({PDF})."
    assert checked.check["pdf_fragments_removed"] == 2


def test_urls_match_after_normalisation_and_the_retrieved_spelling_is_linked() -> None:
    report = "[x](HTTPS://Example.ORG:443/heat-pumps/?utm_source=chat#top)"
    checked = check_report(report, SOURCES)
    assert checked.body == f"[x]({PAGE}#top)"
    assert page_key("https://a.org/p%7Ex/?b=2&a=1&fbclid=z") == page_key(
        "https://A.org/p~x?a=1&b=2"
    )
    assert page_key("http://a.org/p") != page_key("https://a.org/p")


def test_bare_urls_autolinks_and_reference_links_become_inline_links() -> None:
    report = f"One {PAGE} two <{PAGE}> three [ref][1].\n\n[1]: {PAGE}\n"
    checked = check_report(report, SOURCES)
    link = f"[Heat pumps in Norway]({PAGE})"
    assert checked.body.startswith(f"One {link} two {link} three [ref]({PAGE}).")
    assert checked.check["links_kept"] == 3 and len(checked.cited) == 1


def test_links_in_code_are_not_citations() -> None:
    report = "Use `[x](https://made-up.example)`.\n\n```\n[y](https://made-up.example)\n```\n"
    checked = check_report(report, SOURCES)
    assert checked.body == report and checked.check["fabricated_removed"] == 0


def test_links_inside_containers_and_across_lines_are_edited_in_place() -> None:
    report = (
        "> Quoted [claim](https://made-up.example)\n> and [kept](" + PAGE + '\n> "not there").\n'
        "\n- item [two](https://made-up.example/2)\n  1. nested [ok](" + PAGE + ")\n"
    )
    checked = check_report(report, SOURCES)
    assert checked.body == (
        f"> Quoted claim\n> and [kept]({PAGE}).\n\n- item two\n  1. nested [ok]({PAGE})\n"
    )


def test_links_in_table_cells() -> None:
    report = f"| a | b |\n|---|---|\n| [x](https://made-up.example) | [x]({PAGE}/) |\n"
    checked = check_report(report, SOURCES)
    assert checked.body == f"| a | b |\n|---|---|\n| x | [x]({PAGE}) |\n"


def test_registry_merges_spellings_of_one_page_and_keeps_retrieval_order() -> None:
    registry = SourceRegistry(
        [
            *SOURCES,
            Source(url=PAGE + "/", title="dup", content="A second snippet.", found_by="costs"),
        ]
    )
    assert len(registry) == 2
    assert registry.lookup("https://example.org/HEAT-PUMPS") is None  # paths are case-sensitive
    entry = registry.lookup(PAGE + "#frag")
    assert entry is not None and entry.number == 1 and entry.found_by == ["efficiency", "costs"]
    assert entry.retrieved.locate(TextDirective("second snippet")) is not None


def test_a_paragraph_emptied_by_removal_keeps_a_placeholder() -> None:
    # Without it, the indented block below would stop being code and join the list above.
    report = "1. item\n\n<https://made-up.example>\n\n    code [x](https://made-up.example)\n"
    checked = check_report(report, SOURCES)
    assert checked.body == (
        "1. item\n\n(link removed: not a retrieved source)\n\n    code [x](https://made-up.example)\n"
    )


def test_escaped_line_breaks_backslashes_and_entities_parse() -> None:
    report = f"line\\\nnext \\a &amp; &#126; ~ [x]({PAGE})"
    assert check_report(report, SOURCES).body == f"line\\\nnext \\a &amp; &#126; \\~ [x]({PAGE})"


PIECES = [
    f'[a ~b]({PAGE} "heat pumps work")',
    "[f](https://fake.example/q#:~:text=z)",
    "text ~ more",
    "`c~`",
    "https://fake.example/bare",
    "<https://fake.example/auto>",
    "\\~",
    f"**bold [l]({PAGE}#:~:text=Norway)**",
    "<span>~</span>",
    "![img ~](https://img.example/a.png)",
    "[r][1]",
    "line\\",
    "[![i](https://img.example/x.png)](https://fake.example)",
    "_em ~_",
    f"[x](<{PAGE}> 'the agency says')",
    "[https://fake.example](https://fake.example)",
]
PREFIXES = ["", "> ", "- ", "1. ", "  - ", "> - ", "\t", "- > ", "10) ", "## 3. ", "    "]


def random_report(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(1, 6)):
        body = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4)))
        shape = rng.random()
        if shape < 0.15:
            lines += ["| h | i |", "|---|---|", f"| {body} | {body} |"]
        elif shape < 0.2:
            lines += ["```", body, "```"]
        else:
            lines.append(rng.choice(PREFIXES) + body)
        if rng.random() < 0.3:
            lines.append("")
    return "\n".join([*lines, "[1]: https://fake.example/ref"])


def test_random_reports_come_out_with_only_retrieved_links_and_no_stray_tildes() -> None:
    rng = random.Random(20240601)
    retrieved = {source["url"] for source in SOURCES}
    for _ in range(300):
        report = random_report(rng)
        checked = check_report(report, SOURCES)
        for token in parse(checked.body):
            if token.type == "inline":
                inline = describe_inline(token)
                assert {link.href.split("#")[0] for link in inline.links} <= retrieved, report
                assert not stray_tildes(inline), report
        assert check_report(checked.body, SOURCES).body == checked.body, "checking is idempotent"
