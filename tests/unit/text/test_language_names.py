"""`text/language_names.py`: CLDR's names as a table, found loosely, no file read."""

from __future__ import annotations

import pytest
from babel import Locale

from deep_research.text import language_names


def test_the_table_is_cldrs_english_names_less_the_codes_that_name_no_language() -> None:
    shipped = {
        c: n for c, n in Locale("en").languages.items() if c not in language_names.NOT_A_LANGUAGE
    }
    assert language_names.NAMES == shipped, (
        "Babel's CLDR data moved: regenerate NAMES from babel.Locale('en').languages"
    )
    assert not set(language_names.ALIASES.values()) - set(language_names.NAMES)


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("Swahili", "sw"),
        ("kiswahili", "sw"),
        ("Farsi", "fa"),
        ("Serbo-Croatian", "sh"),
        ("norwegian bokmal", "nb"),
        ("Norwegian  Bokmål", "nb"),
        ("pt-BR", "pt_BR"),
        ("Brazilian Portuguese", "pt_BR"),
        ("und", None),
        ("No linguistic content", None),
        ("ignore the rules", None),
        ("", None),
    ],
)
def test_a_language_is_found_by_code_name_or_alias_case_accents_and_hyphens_aside(
    value: str, code: str | None
) -> None:
    assert language_names.code_of(value) == code
