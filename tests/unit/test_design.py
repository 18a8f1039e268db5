"""DESIGN.md follows the tree: its layers are the ones enforced, its packages those on disk.

The layers are read from tests/unit/test_architecture.py's `LAYERS` (parsed, not imported:
no test module imports another), the packages and modules from deep_research/ itself. A
module added, moved or renamed without DESIGN.md following fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "deep_research"
DESIGN = (REPO / "DESIGN.md").read_text(encoding="utf-8")


def table_after(heading: str) -> list[list[str]]:
    """The cells of the first Markdown table under `heading`, header and rule left out."""
    text = DESIGN.split(f"\n{heading}\n", 1)[1]
    rows = [line for line in text.split("\n## ", 1)[0].splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in rows[2:]]


def enforced_layers() -> list[set[str]]:
    source = (REPO / "tests" / "unit" / "test_architecture.py").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "LAYERS":
            assert node.value is not None
            layers: list[set[str]] = ast.literal_eval(node.value)
            return layers
    raise AssertionError("test_architecture.py defines LAYERS")


def top_level_names(cell: str) -> list[str]:
    """The code spans of `cell` outside parentheses: the modules a row lists, not their notes."""
    names, depth = [], 0
    for token in re.finditer(r"`[^`]*`|[()]", cell):
        text = token.group(0)
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
        elif depth == 0:
            names.append(text.strip("`"))
    return names


def on_disk(unit: Path) -> list[str]:
    """A package's modules as DESIGN.md names them: `name` for a file, `name/` for a package."""
    files = [p.stem for p in unit.glob("*.py") if p.stem not in ("__init__", "__main__")]
    packages = [f"{p.name}/" for p in unit.iterdir() if (p / "__init__.py").exists()]
    return sorted(files + packages)


def test_the_layers_table_is_the_one_the_architecture_test_enforces() -> None:
    rows = table_after("## Layers")
    shown = [set(top_level_names(units)) for _, units, _ in rows]
    assert shown == enforced_layers()


def test_every_package_and_root_module_has_its_row() -> None:
    rows = {row[0].strip("`"): row for row in table_after("## Packages")}
    expected = {f"{p.stem}.py" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    expected |= {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert expected <= set(rows), sorted(expected - set(rows))
    assert set(rows) - expected == {"prompts/*.md"}, "no row names a unit that is gone"


def test_each_package_row_lists_exactly_its_modules() -> None:
    for row in table_after("## Packages"):
        unit = row[0].strip("`")
        if not unit.endswith("/") or unit == "prompts/*.md":
            continue
        assert top_level_names(row[2]) and sorted(top_level_names(row[2])) == on_disk(
            PACKAGE / unit
        ), unit


def test_the_row_reader_skips_what_a_row_says_in_parentheses() -> None:
    assert top_level_names("`a` (the `b`), `c/` (`d`: `e`)") == ["a", "c/"]
