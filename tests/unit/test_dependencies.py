"""pyproject.toml says what the package uses: every third-party import is declared, every core
dependency is imported or explained, and every library whose private parts the code reaches
into has an upper bound.

Read from the source (every `import`, lazy ones inside functions included) and mapped to
distributions by what is installed, so a new import of an undeclared library fails here,
not on a user's machine that lacks it.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "deep_research"
PYPROJECT = ROOT / "pyproject.toml"

# Imported only on a provider's own path, inside a function, from an optional extra (never
# a core dependency): the module, the one file that may import it, and the extra whose
# distribution brings it.
OPTIONAL = {
    # `init_chat_model` builds every provider beyond local and openai (llm/init_chat.py).
    "langchain": ("llm/init_chat.py", "anthropic", "langchain"),
    # AWS credentials, asked only for bedrock, under `except ImportError`; langchain-aws
    # brings botocore.
    "botocore": ("config/model_providers.py", "bedrock", "langchain-aws"),
    # The PDF export's fetcher (export/pdf.py), after export/needs.py imported WeasyPrint
    # or said how to install it.
    "weasyprint": ("export/pdf.py", "export", "weasyprint"),
    # Page rendering (search/browser.py), only when RENDER_PAGES is on.
    "playwright": ("search/browser.py", "browser", "playwright"),
}
# The distributed server's own libraries (deep_research/server/, the `server` extra; Aegra
# needs Python 3.12+): imported only under server/, never by the package beneath it.
SERVER_ONLY = {
    "aegra_api": "aegra-api",
    "fastapi": "fastapi",
    "starlette": "starlette",
}
# Libraries whose private parts the code reaches into, and where: each needs an upper bound
# wherever pyproject.toml names it, so a release that moves them cannot break an install.
PRIVATE_REACHES = {
    "langchain-openai": "llm/lenient_chat.py overrides ChatOpenAI._create_chat_result",
    "langchain": "llm/init_chat.py reads langchain.chat_models.base._BUILTIN_PROVIDERS",
    "langchain-ollama": "llm/init_chat.py reads ChatOllama._async_client",
    "markdown-it-py": "citations/markdown.py wraps inline rules and reads their state",
}


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return _canonical(match.group())


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict[str, list[str]]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    return {"": project["dependencies"], **project["optional-dependencies"]}


@cache
def _imports() -> dict[str, set[tuple[str, bool]]]:
    """Every third-party module imported, with (file, whether inside a function) for each."""
    found: dict[str, set[tuple[str, bool]]] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top in sys.stdlib_module_names or top in ("deep_research", "__future__"):
                    continue
                where = (str(path.relative_to(PACKAGE)), id(node) in lazy)
                found.setdefault(name, set()).add(where)
    return found


@cache
def _owners() -> dict[str, list[str]]:
    return packages_distributions()  # reads every installed distribution: once


@cache
def _distribution(module: str) -> str | None:
    """The installed distribution `module` comes from (namespace packages shared by several,
    such as `langgraph`, are told apart by the file the module is)."""
    candidates = sorted(set(_owners().get(module.partition(".")[0], [])))
    if len(candidates) <= 1:
        return _canonical(candidates[0]) if candidates else None
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    origin = Path(spec.origin).resolve()
    for name in candidates:
        if any(Path(str(f.locate())).resolve() == origin for f in distribution(name).files or []):
            return _canonical(name)
    return None


def test_every_third_party_import_is_declared() -> None:
    declared = {_name(requirement) for requirement in _project()[""]}
    undeclared = {}
    for module, places in sorted(_imports().items()):
        top = module.partition(".")[0]
        if top in OPTIONAL or top in SERVER_ONLY:
            continue  # checked below
        owner = _distribution(module)
        if owner not in declared:
            undeclared[module] = (owner, sorted(file for file, _ in places))
    assert undeclared == {}, "imported but not in [project].dependencies"


def test_optional_imports_stay_on_their_provider_path() -> None:
    extras = _project()
    imported = _imports()
    for module, (file, extra, brought_by) in OPTIONAL.items():
        places = {
            where
            for name, found in imported.items()
            if name.split(".")[0] == module
            for where in found
        }
        assert places == {(file, True)}, f"{module}: imported only inside {file}'s functions"
        assert brought_by in {_name(r) for r in extras[extra]}, f"{module}: not in .[{extra}]"
        assert module not in {_name(r) for r in extras[""]}, f"{module} is optional"


def test_server_imports_stay_in_the_server_and_its_extra() -> None:
    server = {_name(r) for r in _project()["server"]}
    for module, places in _imports().items():
        top = module.partition(".")[0]
        if top in SERVER_ONLY:
            outside = sorted(file for file, _ in places if not file.startswith("server/"))
            assert outside == [], f"{module} imported outside server/"
            assert SERVER_ONLY[top] in server, f"{module}: not in .[server]"
    assert "aegra-api" in server


def test_every_core_dependency_is_imported_or_explained() -> None:
    used = {_distribution(module) for module in _imports()}
    lines = PYPROJECT.read_text(encoding="utf-8").splitlines()
    unexplained = []
    for requirement in _project()[""]:
        if _name(requirement) in used:
            continue
        number = next(i for i, line in enumerate(lines) if line.strip() == f'"{requirement}",')
        # A comment on the line before (the end of a block saying why) or on the line itself.
        if not (lines[number - 1].strip().startswith("#") or "#" in lines[number]):
            unexplained.append(requirement)
    assert unexplained == [], "core dependencies never imported and not explained"


def test_a_library_reached_into_has_an_upper_bound_wherever_it_is_named() -> None:
    unbounded = [
        f"{extra or 'dependencies'}: {requirement} ({why})"
        for extra, requirements in _project().items()
        for requirement in requirements
        for name, why in PRIVATE_REACHES.items()
        if _name(requirement) == name and "<" not in requirement
    ]
    assert unbounded == []


def test_what_the_keepers_chroma_app_imports_comes_with_a_users_install() -> None:
    """memory/keeper.py serves `chromadb.server.fastapi`; chromadb lists some of what that
    app imports (FastAPI) only in its dev extra, so a user's install must bring it itself."""
    spec = importlib.util.find_spec("chromadb.server.fastapi")
    assert spec is not None and spec.origin
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    tops = {
        alias.name.partition(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import)
        for alias in n.names
    }
    tops |= {
        n.module.partition(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module and not n.level
    }
    brought = _installed_with({_name(r) for r in _project()[""]})
    # A namespace package (`opentelemetry`) has several owners: one brought is enough.
    missing = {
        top: owners
        for top in tops - set(sys.stdlib_module_names)
        if (owners := {_canonical(o) for o in _owners().get(top, [])}) and not owners & brought
    }
    assert missing == {}, "imported by the keeper's app, in no user's install"


def _installed_with(names: set[str]) -> set[str]:
    """`names` and everything they require, extras aside (what a user's install brings)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen
