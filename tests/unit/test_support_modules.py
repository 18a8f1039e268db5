"""The tests' helper modules never shadow an installed package or the standard library.

A script run from tests/support (`killed_step.py`, the fakes started as processes) has that
folder first on `sys.path`: a helper named `dotenv.py` there made python-dotenv's import
fail inside langgraph's, in every kill-and-resume test."""

from __future__ import annotations

import sys
from importlib.metadata import packages_distributions
from pathlib import Path

SUPPORT = Path(__file__).resolve().parents[1] / "support"


def test_no_helper_module_is_named_like_an_installed_or_standard_module() -> None:
    taken = set(packages_distributions()) | set(sys.stdlib_module_names)
    helpers = {path.stem for path in SUPPORT.rglob("*.py") if path.stem != "__init__"}
    assert len(helpers) > 20, "the helpers were found"
    assert sorted(helpers & taken) == []
