"""An MCP tool's input schema made one every model provider takes, or refused.

A server's schema is offered to the model as the tool's parameters, and one a provider
rejects (an array without `items`, a list of types, an object without `properties`, a
`$ref`) fails every turn it is offered in. So each schema is rebuilt from the keywords
providers share: arrays get `items`, objects `properties`, a list of types its first
non-null one, local `$ref`s are inlined (a recursive one's repeat takes anything) and
everything else is dropped. Names, enum values, patterns and formats are offered whole or
not at all: the model's call must send and match the server's own. A schema that cannot be
rebuilt (a `$ref` outside the schema or to nothing in it, an unknown type, a property name
a provider refuses) is refused (`UnusableSchema`) and its tool not offered; one nested or
inlined past the bounds is offered as "any object", as a schema too large to offer is.
"""

from __future__ import annotations

import math
import re
from typing import Any

from deep_research.errors import DeepResearchError
from deep_research.text import fences
from deep_research.text.controls import without_controls

MAX_DEPTH = 8  # schemas nested deeper are offered as "any object"
MAX_NODES = 300  # sub-schemas, `$ref`s inlined included
MAX_ENUM = 50  # an enum's first values offered: each one a value the server takes
TEXT_CHARS = 300  # a description or a pattern
# A property's name as every provider takes it (Anthropic's pattern, the strictest): a name
# cannot be cut or changed, since the model's call must send the server's own.
PROPERTY_NAME = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
# Kept as written, when of the kind JSON Schema wants, or not at all (a pattern or format
# cut short is another one; a bound of the wrong kind makes the schema invalid).
_WORDS_KEPT = ("format", "pattern")  # text
_BOUNDS = ("minimum", "maximum")  # finite numbers
_COUNTS = ("minItems", "maxItems", "minLength", "maxLength")  # whole numbers, not negative
_COMBINED = ("anyOf", "oneOf", "allOf")


def any_object() -> dict[str, Any]:
    """The schema of "any object", which every provider takes."""
    return {"type": "object", "properties": {}}


class UnusableSchema(DeepResearchError, ValueError):
    """A schema that cannot be made one a provider takes; its message is fixed words."""


class _TooLarge(DeepResearchError):
    pass


def offered(schema: object) -> dict[str, Any]:
    """The input schema to offer for `schema`: an object schema, rebuilt; "any object" for
    a schema that is no object's or too deep or large. Raises `UnusableSchema`."""
    if not isinstance(schema, dict) or _first_type(schema.get("type", "object")) != "object":
        return any_object()
    try:
        rebuilt = _Rebuild(schema).node(schema, 0, ())
    except _TooLarge:
        return any_object()
    return rebuilt if rebuilt.get("type") == "object" else any_object()


class _Rebuild:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.nodes = 0

    def node(self, schema: object, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        self.nodes += 1
        if depth > MAX_DEPTH or self.nodes > MAX_NODES:
            raise _TooLarge
        if not isinstance(schema, dict):
            return {}  # `true`, or junk: anything
        if "$ref" in schema:
            ref = schema["$ref"]
            if ref in refs:  # a recursive schema (a tree of filters): its repeat takes anything
                return {}
            target = self._target(ref)
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return self.node({**target, **rest}, depth + 1, (*refs, ref))
        out: dict[str, Any] = {}
        if "type" in schema or "properties" in schema:
            kind = _first_type(schema.get("type", "object"))
            out["type"] = kind
            if kind == "object":
                out.update(self._object(schema, depth, refs))
            elif kind == "array":
                items = schema.get("items")
                if isinstance(items, list):  # the tuple form: its first place
                    items = items[0] if items else None
                out["items"] = (
                    self.node(items, depth + 1, refs) if items is not None else {"type": "string"}
                )
        for key in _COMBINED:
            parts = schema.get(key)
            if isinstance(parts, list) and parts:
                out[key] = [self.node(part, depth + 1, refs) for part in parts[:8]]
        out.update(_plain(schema))
        return out

    def _object(self, schema: dict[str, Any], depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
        given = schema.get("properties")
        named = list(given.items()) if isinstance(given, dict) else []
        if any(not PROPERTY_NAME.fullmatch(str(name)) for name, _ in named):
            raise UnusableSchema(
                "it names a property a provider refuses (letters, digits, _ . - and at most "
                "64 characters)"
            )
        properties = {str(name): self.node(sub, depth + 1, refs) for name, sub in named}
        out: dict[str, Any] = {"properties": properties}
        required = schema.get("required")
        if isinstance(required, list):
            kept = [name for name in required if isinstance(name, str) and name in properties]
            if kept:
                out["required"] = kept
        extra = schema.get("additionalProperties")
        if isinstance(extra, bool):
            out["additionalProperties"] = extra
        return out

    def _target(self, ref: object) -> dict[str, Any]:
        """The schema a local `$ref` names (`#/$defs/N`, `#/definitions/N`, `#`)."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise UnusableSchema("it refers to a schema outside itself")
        found: object = self.root
        for part in filter(None, ref[1:].split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            found = found.get(key) if isinstance(found, dict) else None
        if not isinstance(found, dict):
            raise UnusableSchema("it refers to a schema it does not hold")
        return found


def _first_type(kind: object) -> str:
    """A type or a list of types as one type a provider takes: the first that is not null."""
    kinds = kind if isinstance(kind, list) else [kind]
    named = [k for k in kinds if isinstance(k, str)]
    if any(k not in _TYPES for k in named) or not named:
        raise UnusableSchema("it names a type JSON Schema does not have")
    return next((k for k in named if k != "null"), "string")


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    """The keywords kept, when well-formed: words cut and defused (no fence look-alike, no
    control code); what the model's call must match (a pattern, a format, an enum's values,
    bounds) as written or not at all, since a value cut or defused is one the server
    refuses; lists bounded."""
    out: dict[str, Any] = {}
    for key in ("description", "title"):
        if isinstance(schema.get(key), str):
            out[key] = fences.defuse(without_controls(schema[key][:TEXT_CHARS]))
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        offered = [v for v in enum[:MAX_ENUM] if _whole_scalar(v)]
        if offered:
            out["enum"] = offered
    for key in (*_WORDS_KEPT, *_BOUNDS, *_COUNTS):
        value = schema.get(key)
        if key in _WORDS_KEPT and isinstance(value, str) and _whole_scalar(value):
            out[key] = value
        elif key in _BOUNDS and _finite(value):
            out[key] = value
        elif key in _COUNTS and isinstance(value, int) and _finite(value) and value >= 0:
            out[key] = value
    return out


def _finite(value: object) -> bool:
    """A number a provider's JSON takes (no NaN or infinity, which a server's may hold)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _whole_scalar(value: object) -> bool:
    """Whether a value can be offered as it is: a boolean, a finite number, or text short
    enough and with no fence look-alike (defusing it would change it)."""
    if isinstance(value, str):
        return len(value) <= TEXT_CHARS and fences.defuse(value) == value
    return isinstance(value, bool) or _finite(value)
