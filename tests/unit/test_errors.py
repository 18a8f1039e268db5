"""`errors`: one base for every error, and its docstring's family names real classes.

tests/unit/test_architecture.py checks that every exception class is a `DeepResearchError`;
this checks the base itself and the map a reader gets from `errors.py`'s docstring.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import deep_research
from deep_research import errors
from deep_research.errors import DeepResearchError

PACKAGE = Path(deep_research.__file__).parent
DOC = errors.__doc__ or ""
# "`A`, `B` (llm.models)": the names before a module in parentheses live in it.
GROUP = re.compile(r"((?:`\w+`,?\s*)+)\(([a-z_.]+)")


def _named_with_module() -> list[tuple[str, str]]:
    return [
        (name, module)
        for names, module in GROUP.findall(DOC)
        for name in re.findall(r"`(\w+)`", names)
    ]


def _defined_classes() -> dict[str, str]:
    """Every class name in the package -> its module, read from the source (no import)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found[node.name] = module
    return found


def test_the_base_is_an_exception_that_carries_its_message() -> None:
    assert issubclass(DeepResearchError, Exception)
    with pytest.raises(DeepResearchError, match="^could not, because$"):
        raise DeepResearchError("could not, because")


def test_the_docstring_names_each_errors_module_truly() -> None:
    named = _named_with_module()
    assert len(named) >= 10, named
    for name, module in named:
        value = getattr(importlib.import_module(f"deep_research.{module}"), name)
        assert value.__module__ == f"deep_research.{module}", f"{name} is not from {module}"
        assert issubclass(value, DeepResearchError), f"{module}.{name}"


def test_every_name_the_docstring_gives_is_a_class_of_the_package() -> None:
    classes = _defined_classes()
    builtins = {"ValueError", "RuntimeError", "LookupError", "DeepResearchError"}
    mentioned = set(re.findall(r"`([A-Z]\w+)`", DOC)) - builtins
    assert mentioned and mentioned <= set(classes), mentioned - set(classes)


def test_a_family_member_is_caught_by_the_base_and_by_its_builtin() -> None:
    from deep_research.config.names import ConfigError

    for catch in (DeepResearchError, ValueError):
        with pytest.raises(catch):
            raise ConfigError("bad value")
