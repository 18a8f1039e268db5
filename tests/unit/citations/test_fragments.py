"""Text-fragment directives: encoding, parsing, matching and building."""

from __future__ import annotations

import pytest

from deep_research.citations.fragments import (
    FragmentError,
    RetrievedText,
    TextDirective,
    directive_from_quote,
    fragment_of,
    parse_directives,
)


def test_commas_dashes_and_ampersands_are_percent_encoded_and_round_trip() -> None:
    directive = TextDirective(start="cost-benefit, R&D", end="50-60 %", prefix="a-b", suffix="x,y")
    encoded = directive.encode()
    assert encoded == "text=a%2Db-,cost%2Dbenefit%2C%20R%26D,50%2D60%20%25,-x%2Cy"
    assert parse_directives(encoded) == [directive]


def test_non_ascii_is_utf8_percent_encoded() -> None:
    assert TextDirective("Zürich – 5 °C").encode() == "text=Z%C3%BCrich%20%E2%80%93%205%20%C2%B0C"


def test_several_directives_and_unknown_ones() -> None:
    parsed = parse_directives("text=alpha&note=ignored&text=beta,gamma")
    assert parsed == [TextDirective("alpha"), TextDirective("beta", "gamma")]
    assert fragment_of(parsed) == ":~:text=alpha&text=beta,gamma"


@pytest.mark.parametrize("bad", ["text=", "text=-,", "text=a,b,c", "text=-only-"])
def test_malformed_directives_are_rejected(bad: str) -> None:
    with pytest.raises(FragmentError):
        parse_directives(bad)


def test_matching_ignores_case_whitespace_and_quote_styles() -> None:
    page = RetrievedText(
        "The agency said: \u201cHeat   pumps\nwork\u201d \u2014 even at \u221210 \u00b0C."
    )
    span = page.locate(TextDirective('"heat pumps work" - even at -10 °c'))
    assert span is not None
    assert page.words(*span) == [
        "\u201cHeat",
        "pumps",
        "work\u201d",
        "\u2014",
        "even",
        "at",
        "\u221210",
        "\u00b0C",
    ]


def test_terms_must_sit_on_word_boundaries() -> None:
    page = RetrievedText("Air-source heat pumps are common.")
    assert page.locate(TextDirective("pump")) is None
    assert page.locate(TextDirective("heat pumps")) is not None


def test_non_ascii_and_cjk_text() -> None:
    page = RetrievedText("In der Straße stehen Wärmepumpen. 热泵在寒冷气候中效率较高。")
    assert page.locate(TextDirective("STRASSE stehen")) is not None  # casefold: ß == ss
    span = page.locate(TextDirective("寒冷气候"))
    assert span is not None
    assert page.directive_for(*span).encode() == "text=%E5%AF%92%E5%86%B7%E6%B0%94%E5%80%99"


def test_quote_with_an_ellipsis_becomes_a_range() -> None:
    directive = directive_from_quote("\u201cheat pumps cut bills ... by a third.\u201d")
    assert directive == TextDirective("heat pumps cut bills", "by a third")


def test_long_passages_are_cited_by_first_and_last_words() -> None:
    text = "Intro. " + " ".join(f"w{i}" for i in range(30)) + " outro."
    page = RetrievedText(text)
    span = page.locate(TextDirective(" ".join(f"w{i}" for i in range(30))))
    assert span is not None
    built = page.directive_for(*span)
    assert built == TextDirective("w0 w1 w2", "w27 w28 w29")
    assert page.locate(built) == span


def test_repeated_phrases_get_context_so_the_first_match_is_the_cited_one() -> None:
    page = RetrievedText(
        "Heat pumps work well. In Norway, heat pumps work well in winter. "
        "In Sweden, heat pumps work well in winter too."
    )
    sweden = page.locate(TextDirective("heat pumps work well in winter", prefix="Sweden,"))
    assert sweden is not None
    built = page.directive_for(*sweden)
    assert built.prefix == "Sweden,"
    assert page.locate(built) == sweden
    norway = page.locate(TextDirective("heat pumps work well in winter"))
    assert norway is not None and norway < sweden
    assert page.locate(page.directive_for(*norway)) == norway


def test_range_ends_are_chosen_so_the_range_is_not_longer_than_the_passage() -> None:
    # "a b c" opens both an early sentence and the passage: three start words are ambiguous.
    text = "a b c early end x y z. a b c d e f g h i j k l m n o p end x y z"
    page = RetrievedText(text)
    passage = page.locate(TextDirective("a b c d e f g h i j k l m n o p end x y z"))
    assert passage is not None
    built = page.directive_for(*passage)
    assert page.locate(built) == passage
