"""text/jats.py: an article's prose from JATS XML, and hostile XML refused in fixed words."""

from __future__ import annotations

import pytest

from deep_research.text import jats
from tests.support.jats import article_xml

SECTIONS = [
    ("Introduction", ["Heat pumps heat most new houses in Norway."]),
    ("Results", ["Output fell 12 percent at minus 20.", "Defrost cycles took 4 percent."]),
]


def test_the_abstract_comes_first_then_each_section_without_its_clutter() -> None:
    found = jats.sections(article_xml("Heat pumps in frost", "We study heat pumps.", SECTIONS))
    assert found == [
        "Background\n\nWe study heat pumps.",  # the title is the search result's
        "Introduction\n\nHeat pumps heat most new houses in Norway. [1]",
        "Results\n\nOutput fell 12 percent at minus 20. [1]\n\nDefrost cycles took 4 percent. [1]",
    ]
    text = "\n".join(found)
    for clutter in ("TABLE CELL", "FIGURE CAPTION", "FORMULA", "REFERENCE TITLE", "J Heat", "1."):
        assert clutter not in text


def test_subsections_lists_and_paragraphs_outside_any_section_are_read_in_order() -> None:
    extra = (
        "<sec><title>Methods</title><p>Field <italic>trials</italic>.</p>"
        "<sec><title>Sites</title><list><list-item><p>Tromsø</p></list-item></list></sec></sec>"
    )
    raw = article_xml("T", "A.", [], body_extra=extra).replace(
        b"<body>", b"<body><p>A note before the sections.</p>"
    )
    assert jats.sections(raw)[1:] == [
        "A note before the sections.",
        "Methods\n\nField trials.\n\nSites\n\nTromsø",
    ]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"<html><body><p>x</p></body></html>", "not a JATS article"),
        (b"<rss><channel/></rss>", "not a JATS article"),
        (b"<article><front></front></article>", "an article without text"),
        (b"<article><body><p>cut in the mid", "unreadable XML (ParseError)"),
        (b"", "unreadable XML (ParseError)"),
        # A billion laughs, an external entity, an attribute default copied onto every
        # element it names (gigabytes from a small page): a DOCTYPE declaring anything
        # itself is refused before anything is built.
        (
            b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY l "lol"><!ENTITY l2 "&l;&l;&l;">]>'
            b"<article><body><p>&l2;</p></body></article>",
            "unreadable XML (DTDForbidden)",
        ),
        (
            b'<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><article><p>&x;</p></article>',
            "unreadable XML (DTDForbidden)",
        ),
        (
            b"<!DOCTYPE article [<!ATTLIST b a CDATA '" + b"v" * 1_000 + b"'>]>"
            b"<article><body><sec><p>x" + b"<b/>" * 1_000 + b"</p></sec></body></article>",
            "unreadable XML (DTDForbidden)",
        ),
        (b"<!DOCTYPE article []><article><body><p>x</p></body></article>", "(DTDForbidden)"),
        # An encoding Python has no codec for, or one that is no text encoding.
        (b'<?xml version="1.0" encoding="x-nope"?><article/>', "unreadable XML (LookupError)"),
        (b'<?xml version="1.0" encoding="rot13"?><article/>', "unreadable XML ("),
        (
            b"<article><body>" + b"<sec>" * 5_000 + b"</sec>" * 5_000 + b"</body></article>",
            "nested too deeply",
        ),
        (
            b"<article><body><p>" + b"<b>" * 5_000 + b"</b>" * 5_000 + b"</p></body></article>",
            "nested too deeply",
        ),
        (b"<article><body>" + b"<p/>" * 50_001 + b"</body></article>", "50,000 elements"),
        (b"<article><body>" + b"<p>x</p>" * 50_001 + b"</body></article>", "50,000 elements"),
    ],
)
def test_xml_that_is_no_readable_article_is_refused_in_fixed_words(raw: bytes, why: str) -> None:
    with pytest.raises(jats.NotAnArticle) as refused:
        jats.sections(raw)
    assert why in str(refused.value)


def test_a_section_and_the_number_of_sections_are_bounded() -> None:
    long = [("Long", ["word " * 30_000])]
    many = [(f"S{n}", [f"p{n}"]) for n in range(150)]
    assert len(jats.sections(article_xml("T", "A.", long))[1]) == jats.MAX_SECTION_CHARS
    assert len(jats.sections(article_xml("T", "A.", many))) == jats.MAX_SECTIONS


def test_namespaced_tags_are_read_by_their_local_names() -> None:
    raw = (
        b'<j:article xmlns:j="http://jats.nlm.nih.gov"><j:front><j:article-meta>'
        b"<j:abstract><j:p>Abstract.</j:p></j:abstract></j:article-meta></j:front>"
        b"<j:body><j:sec><j:title>S</j:title><j:p>Text</j:p></j:sec></j:body></j:article>"
    )
    assert jats.sections(raw) == ["Abstract.", "S\n\nText"]


def test_the_doctype_europe_pmc_sends_is_read_and_never_loaded() -> None:
    """Its DTD is named, not fetched: an article reads as if it had no DOCTYPE line."""
    raw = article_xml("T", "A.", SECTIONS)
    assert raw.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE article PUBLIC')
    without = raw.replace(raw[raw.index(b"<!DOCTYPE") : raw.index(b"<article ")], b"")
    assert jats.sections(raw) == jats.sections(without)


def test_item_0_is_the_opening_even_when_the_front_has_none() -> None:
    raw = b"<article><body><sec><p>first</p></sec><sec><p>second</p></sec></body></article>"
    assert jats.sections(raw) == ["", "first", "second"]


def test_only_the_main_article_s_abstract_and_body_are_read() -> None:
    """A teaser abstract before the main one, and a reviewer's letter (a sub-article with a
    front and a body of its own), are not the article's."""
    raw = (
        b"<article><front><article-meta><abstract abstract-type='teaser'><p>Teaser.</p>"
        b"</abstract><abstract><p>Main.</p></abstract></article-meta></front>"
        b"<sub-article><body><p>Reviewer letter.</p></body></sub-article></article>"
    )
    assert jats.sections(raw) == ["Main."]
    letter = (
        b"<sub-article><front><article-meta><abstract><p>Letter abstract.</p></abstract>"
        b"</article-meta></front><body><sec><p>Letter.</p></sec></body></sub-article>"
    )
    raw = b"<article><front/><body><sec><p>Own.</p></sec></body>" + letter + b"</article>"
    assert jats.sections(raw) == ["", "Own."]
    teaser = b"<abstract abstract-type='teaser'><p>Teaser only.</p></abstract>"
    raw = b"<article><front><article-meta>" + teaser + b"</article-meta></front></article>"
    assert jats.sections(raw) == ["Teaser only."], "a teaser when there is no other"


def test_a_section_of_headings_alone_is_none() -> None:
    """A supplement's or a data statement's heading over what is left out: no prose."""
    raw = (
        b"<article><front><article-meta><abstract><p>A.</p></abstract></article-meta></front>"
        b"<body><sec><title>Supplementary Material</title><supplementary-material>"
        b"<p>S1</p></supplementary-material></sec><sec><title>Data availability</title>"
        b"<sec><title>Code</title></sec></sec><sec><title>Results</title><p>R.</p></sec>"
        b"</body></article>"
    )
    assert jats.sections(raw) == ["A.", "Results\n\nR."]


def test_blocks_inside_a_paragraph_stay_apart_and_footnotes_are_left_out() -> None:
    """A list inside a paragraph is paragraphs of its own, as a browser shows it (a quote
    running from one into the other would not be found on the page); words either side of
    a formula, a figure, a footnote or a line break are two words, not one."""
    raw = (
        b"<article><body><sec><title>Line one<break/>line two</title>"
        b"<p>Steps:<list><list-item><p>one</p></list-item><list-item>"
        b"<p>two</p></list-item></list>and after.</p><p>Claim<fn><p>Footnote words.</p></fn>end."
        b"</p><p>The rate<disp-formula><mml:math xmlns:mml='m'>x</mml:math></disp-formula>rises"
        b"<fig><caption><p>Figure.</p></caption></fig>below.</p><def-list><def-item>"
        b"<term>COP</term><def><p>Heat out over work in.</p></def></def-item></def-list>"
        b"</sec></body></article>"
    )
    assert jats.sections(raw) == [
        "",
        "Line one line two\n\nSteps:\n\none\n\ntwo\n\nand after.\n\nClaim end.\n\n"
        "The rate rises below.\n\nCOP\n\nHeat out over work in.",
    ]


def test_paragraphs_and_lists_outside_any_section_keep_their_inline_words() -> None:
    raw = (
        b"<article><body><p>Field <italic>trials</italic> ran.</p>"
        b"<list><list-item><p>Troms\xc3\xb8</p></list-item><list-item><p>Bergen</p>"
        b"</list-item></list></body></article>"
    )
    assert jats.sections(raw) == ["", "Field trials ran.\n\nTroms\u00f8\n\nBergen"]
