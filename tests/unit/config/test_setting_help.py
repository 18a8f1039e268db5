"""`config.setting_help`: one description per setting, in `Context`'s order, and the one shown."""

from __future__ import annotations

from deep_research.config.names import SETTING_NAMES
from deep_research.config.setting_help import HELP
from deep_research.config.settings import Context


def test_every_setting_has_one_description_in_the_models_order() -> None:
    assert tuple(HELP) == SETTING_NAMES == tuple(Context.model_fields)


def test_the_model_shows_each_description_as_written() -> None:
    shown = {name: field.description for name, field in Context.model_fields.items()}
    assert shown == HELP
    schema = Context.model_json_schema()["properties"]
    assert {name: schema[name]["description"] for name in HELP} == HELP


def test_each_description_is_one_plain_sentence_or_more() -> None:
    for name, text in HELP.items():
        assert text.strip() == text and text.endswith("."), name
        assert "\n" not in text and "  " not in text, name
