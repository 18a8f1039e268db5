"""The package's imports point down the layers DESIGN.md names, and no import circle exists.

Read from the source (every `import`, lazy ones inside functions included), so a new arrow
up or a new circle fails here before a reader meets it.
"""

from __future__ import annotations

import ast
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "deep_research"

# Top to bottom, as DESIGN.md's "Layers" draws them. A unit may import its own modules and any
# unit of a lower layer; units of one layer never import each other.
LAYERS: list[set[str]] = [
    {"server"},
    {"cli", "mcp"},
    {"graph"},
    {"nodes", "researcher"},
    {"search", "library"},
    {"memory"},
    {"export"},
    {"citations", "llm"},
    {"embedding", "runtime", "checkpoints"},
    {"config", "state"},
    {"text"},
    {"errors"},
]
# The package's own `__init__` loads `.env` (config.envfile) and nothing else.
ROOT = "__init__"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name}: relative import"
                base = node.module or ""
                # `from x import y`: the module x.y where y is one, else x itself.
                targets = [
                    f"{base}.{alias.name}"
                    if f"{base}.{alias.name}".removeprefix("deep_research.") in modules
                    else base
                    for alias in node.names
                ]
            for target in targets:
                if target == "deep_research" or not target.startswith("deep_research."):
                    continue
                inner = target.removeprefix("deep_research.")
                while inner and inner not in modules:
                    inner = inner.rpartition(".")[0]
                if inner and inner != name:
                    edges[name].add(inner)
    return edges


def _layer(module: str) -> int:
    unit = module.split(".")[0]
    for number, layer in enumerate(LAYERS):
        if unit in layer:
            return number
    raise AssertionError(f"{module}: its unit {unit!r} is in no layer; add it to LAYERS")


def test_every_import_points_down_the_layers() -> None:
    modules = _modules()
    wrong = []
    for source, targets in _imports(modules).items():
        if source == ROOT:
            assert targets == {"config.envfile"}, targets
            continue
        for target in targets:
            same_unit = source.split(".")[0] == target.split(".")[0]
            if not same_unit and _layer(target) <= _layer(source):
                wrong.append(f"{source} -> {target}")
    assert wrong == []


def test_no_module_imports_itself_back_through_others() -> None:
    edges = _imports(_modules())
    in_a_circle = []
    for start in sorted(edges):
        reached, frontier = set(), [start]
        while frontier:
            for target in edges.get(frontier.pop(), ()):
                if target not in reached:
                    reached.add(target)
                    frontier.append(target)
        if start in reached:
            in_a_circle.append(start)
    assert in_a_circle == [], {module: sorted(edges[module]) for module in in_a_circle}


@pytest.mark.parametrize("unit", sorted(set().union(*LAYERS)))
def test_each_unit_of_the_layers_exists(unit: str) -> None:
    assert (PACKAGE / unit).is_dir() or (PACKAGE / f"{unit}.py").is_file(), unit


def test_every_error_the_package_defines_is_a_deep_research_error() -> None:
    import importlib
    import inspect

    from deep_research.errors import DeepResearchError

    outside = []
    for name in _modules():
        if name == ROOT or name.endswith("__main__"):
            continue
        module = importlib.import_module(f"deep_research.{name}")
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not issubclass(value, DeepResearchError)
            ):
                outside.append(f"{name}.{value.__name__}")
    assert outside == []


# A long module is a signal to read it for a split by concern, not a wall to split it under:
# past LONG_MODULE a warning names it (pytest's summary shows it); past MAX_MODULE it fails.
LONG_MODULE = 300
MAX_MODULE = 450
# A long function costs a reader more than a long file: past MAX_FUNCTION lines it fails.
MAX_FUNCTION = 80


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_a_long_module_is_named_and_none_is_far_too_long() -> None:
    too_long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name, lines = f"deep_research/{path.relative_to(PACKAGE)}", _lines(path)
        if lines > MAX_MODULE:
            too_long[name] = lines
        elif lines > LONG_MODULE:
            message = f"{name} has {lines} lines (over {LONG_MODULE}): split it by concern?"
            warnings.warn(message, stacklevel=1)
    assert not too_long, f"modules over {MAX_MODULE} lines: {too_long}"


def test_no_function_is_over_80_lines() -> None:
    """Measured from `def` to the last line of the body (decorators not counted)."""
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION:
                    where = f"deep_research/{path.relative_to(PACKAGE)}:{node.lineno}"
                    too_long.append(f"{where} {node.name}: {lines} lines")
    split = "split each by what it does"
    assert not too_long, f"over {MAX_FUNCTION} lines ({split}):\n" + "\n".join(too_long)


def test_every_module_has_tests_at_its_own_path() -> None:
    """`deep_research/a/b.py` is tested in `tests/unit/a/test_b.py` (or `test_b_<aspect>.py`)."""
    tests = PACKAGE.parent / "tests" / "unit"
    untested = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        folder = tests / path.parent.relative_to(PACKAGE)
        stem = path.stem
        if not [*folder.glob(f"test_{stem}.py"), *folder.glob(f"test_{stem}_*.py")]:
            untested.append(str(path.relative_to(PACKAGE)))
    assert untested == []
