"""`search.mcp_schemas`: an MCP tool's input schema rebuilt into one providers take."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.search.mcp_schemas import MAX_DEPTH, UnusableSchema, any_object, offered

# What providers reject, all in one schema (as in the wild: hand-written or generated).
HOSTILE: dict[str, Any] = {
    "type": "object",
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "properties": {
        "term": {"type": ["string", "null"], "description": "what to look up"},
        "tags": {"type": "array"},
        "filter": {"$ref": "#/$defs/Filter"},
        "extra": {"type": "object"},
        "pair": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]},
        "kind": {"enum": ["a", "b", {"nested": 1}], "examples": ["a"]},
    },
    "required": ["term", "missing", 3],
    "$defs": {"Filter": {"type": "object", "properties": {"year": {"type": "integer"}}}},
}
SANE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "term": {"type": "string", "description": "what to look up"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "filter": {"type": "object", "properties": {"year": {"type": "integer"}}},
        "extra": {"type": "object", "properties": {}},
        "pair": {"type": "array", "items": {"type": "integer"}},
        "kind": {"enum": ["a", "b"]},
    },
    "required": ["term"],
}


def test_what_providers_reject_is_rebuilt_into_what_they_take() -> None:
    assert offered(HOSTILE) == SANE


def test_a_sane_schema_keeps_its_shape() -> None:
    assert offered(SANE) == SANE


BAD = {"type": "object", "properties": {"a b": {"type": "string"}}}  # a name no provider takes


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        (
            {"type": "object", "properties": {"x": {"$ref": "https://evil.example/s.json"}}},
            "outside itself",
        ),
        ({"type": "object", "properties": {"x": {"$ref": "#/$defs/Absent"}}}, "does not hold"),
        ({"type": "object", "properties": {"x": {"type": "bigint"}}}, "type"),
        ({"type": "object", "properties": {"n" * 65: {"type": "string"}}}, "property"),
        ({"type": "object", "properties": {"a name": {"type": "string"}}}, "property"),
        ({"type": "object", "properties": {"": {"type": "string"}}}, "property"),
        (
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/D"}}, "$defs": {"D": BAD}},
            "property",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "object", "properties": {"é": {}}}}},
            "property",
        ),
    ],
    ids=[
        "remote-ref",
        "missing-ref",
        "unknown-type",
        "long-name",
        "spaced-name",
        "empty-name",
        "inlined-name",
        "nested-name",
    ],
)
def test_a_schema_that_cannot_be_rebuilt_is_refused_in_fixed_words(
    schema: dict[str, Any], why: str
) -> None:
    with pytest.raises(UnusableSchema, match=why):
        offered(schema)


def deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_nesting_past_the_bound_is_offered_as_any_object() -> None:
    assert offered(deep(MAX_DEPTH)) == deep(MAX_DEPTH)
    assert offered(deep(MAX_DEPTH + 2)) == any_object()
    assert offered(deep(5000)) == any_object(), "no recursion error"


def test_inlining_that_multiplies_is_bounded() -> None:
    """`$defs` that each use the one below twice: 2**20 nodes if inlined whole."""
    defs = {
        f"D{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(20)
    }
    defs["D20"] = {"type": "string"}
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs}
    assert offered(schema) == any_object()


@pytest.mark.parametrize("schema", [{"type": "string"}, [], "x", None, {"type": "array"}])
def test_a_schema_of_no_object_is_offered_as_any_object(schema: Any) -> None:
    assert offered(schema) == any_object()


def test_words_are_clipped_and_junk_keywords_dropped() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {
                "type": "string",
                "description": "d" * 9000,
                "x-junk": {"$ref": "https://x"},
                "maxLength": True,
            }
        },
        "additionalProperties": "no",
    }
    rebuilt = offered(schema)
    assert rebuilt["properties"]["q"] == {"type": "string", "description": "d" * 300}
    assert "additionalProperties" not in rebuilt


def test_names_and_enum_values_are_offered_whole_or_not_at_all() -> None:
    """A model's call must send the server's own names and values: a name of 64 characters
    is offered as it is, an enum value too long to offer is left out, not cut."""
    long_value, name, longest = "v" * 301, "n" * 64, "w" * 300
    schema = {
        "type": "object",
        "properties": {
            name: {"type": "string", "enum": ["short", long_value, 3, None, longest]},
            "only_long": {"type": "string", "enum": [long_value]},
            # The first 50 values are looked at: past them, a short one is not offered.
            "late": {"type": "string", "enum": [long_value] * 50 + ["ok"]},
            "dotted.name-1": {"type": "string"},
            "patterned": {"type": "string", "pattern": "^a+$", "format": "f" * 300},
            "long_pattern": {"type": "string", "pattern": "a" * 301, "format": "f" * 301},
            # Of the wrong kind, a keyword makes the schema invalid: it is left out.
            "odd": {
                "type": "string",
                "pattern": 5,
                "format": 7,
                "minLength": "3",
                "maxLength": -1,
                "minItems": 1.5,
                "minimum": "5",
                "maximum": float("nan"),
            },
            "bounded": {"type": "number", "minimum": -1.5, "maximum": 10, "minLength": 0},
        },
    }
    rebuilt = offered(schema)["properties"]
    assert rebuilt[name] == {"type": "string", "enum": ["short", 3, longest]}
    assert rebuilt["only_long"] == rebuilt["late"] == {"type": "string"}
    assert rebuilt["dotted.name-1"] == {"type": "string"}
    assert rebuilt["patterned"] == {"type": "string", "pattern": "^a+$", "format": "f" * 300}
    assert rebuilt["long_pattern"] == {"type": "string"}  # a pattern cut short is another
    assert rebuilt["odd"] == {"type": "string"}
    assert rebuilt["bounded"] == {"type": "number", "minimum": -1.5, "maximum": 10, "minLength": 0}


def test_a_recursive_schema_is_offered_with_its_repeat_taking_anything() -> None:
    """A tree (pydantic's and FastMCP's filters): each repeat of a `$ref` inside itself is
    offered as anything, rather than the tool refused."""
    tree = {
        "type": "object",
        "properties": {"filter": {"$ref": "#/$defs/F"}},
        "$defs": {
            "F": {
                "type": "object",
                "properties": {"all": {"type": "array", "items": {"$ref": "#/$defs/F"}}},
            }
        },
    }
    rebuilt = offered(tree)
    node = rebuilt["properties"]["filter"]
    assert node["type"] == "object"
    assert node["properties"]["all"] == {"type": "array", "items": {}}
    assert "$defs" not in str(rebuilt) and "$ref" not in str(rebuilt)
