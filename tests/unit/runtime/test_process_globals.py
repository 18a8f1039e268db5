"""Everything that lives as long as the process is held or listed in `runtime/process.py`.

Read from the source: a module-level global that holds state (a mutable container that
is created empty or changed by the module's functions, a lock, a thread or a pool, a name
a `global` statement rebinds, a function whose results are cached for the process) fails
here unless `runtime/process.py` defines it or names it as `module.name` with its reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "deep_research"
HOME = "runtime.process"

# Constructors whose objects hold state that outlives a call.
STATEFUL = {
    "dict",
    "list",
    "set",
    "OrderedDict",
    "defaultdict",
    "deque",
    "Counter",
    "WeakValueDictionary",
    "WeakKeyDictionary",
    "WeakSet",
    "Lock",
    "RLock",
    "Semaphore",
    "BoundedSemaphore",
    "Event",
    "Condition",
    "Thread",
    "ThreadPoolExecutor",
    "Queue",
    "Room",  # search/pdf_room.py: bytes taken and given back, under a lock
    "NativeCalls",  # embedding/native.py: native calls under way, under a lock
}
CACHES = {"cache", "lru_cache"}
# Methods that change a container in place: a constant table that is never changed is not state.
MUTATORS = {
    "append",
    "extend",
    "insert",
    "add",
    "update",
    "pop",
    "popitem",
    "setdefault",
    "clear",
    "remove",
    "discard",
    "move_to_end",
    "appendleft",
}
LISTED = re.compile(r"`([a-z_][\w.]*\.[A-Za-z_]\w*)`")


def _name_of(node: ast.expr) -> str | None:
    """`f` for `f(...)`, `mod.f(...)`, `f`, `mod.f` and `f(maxsize=8)` alike."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _assigned(tree: ast.Module) -> dict[str, ast.expr]:
    values: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and node.value and isinstance(node.target, ast.Name):
            values[node.target.id] = node.value
    return values


def _changed_in_functions(tree: ast.Module) -> set[str]:
    """Module names a function rebinds (`global`) or changes in place."""
    changed: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                changed.update(node.names)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
                if isinstance(node.value, ast.Name):
                    changed.add(node.value.id)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
                and isinstance(node.func.value, ast.Name)
            ):
                changed.add(node.func.value.id)
    return changed


def process_globals(source: str) -> set[str]:
    """The names in one module's source that live as long as the process."""
    tree = ast.parse(source)
    values = _assigned(tree)
    changed = _changed_in_functions(tree)
    found = set()
    for name, value in values.items():
        if name == "__all__":
            continue
        empty = isinstance(value, ast.Dict | ast.List | ast.Set) and not getattr(
            value, "keys" if isinstance(value, ast.Dict) else "elts"
        )
        container = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp)
        if _name_of(value) in STATEFUL or empty or (container and name in changed):
            found.add(name)
    # A rebound name is state even when it starts as None or False.
    found.update(name for name in changed if name in values or _is_global_target(tree, name))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(_name_of(d) in CACHES for d in node.decorator_list):
                found.add(node.name)
    return found


def _is_global_target(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.Global) and name in n.names for n in ast.walk(tree))


def package_globals() -> dict[str, set[str]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        names = process_globals(path.read_text(encoding="utf-8"))
        if names:
            found[_module_name(path)] = names
    return found


def test_every_process_global_is_held_or_listed_in_runtime_process() -> None:
    listed = set(LISTED.findall((PACKAGE / "runtime" / "process.py").read_text("utf-8")))
    found = package_globals()
    missing = sorted(
        f"{module}.{name}"
        for module, names in found.items()
        if module != HOME
        for name in names
        if f"{module}.{name}" not in listed
    )
    assert missing == [], f"add these to runtime/process.py (or move them there): {missing}"
    # A listed name that is gone would tell a reader of state that does not exist.
    everything = {f"{module}.{name}" for module, names in found.items() for name in names}
    stale = sorted(
        name for name in listed if name.split(".")[0] in _units() and name not in everything
    )
    assert stale == [], f"runtime/process.py lists what no longer exists: {stale}"


def _units() -> set[str]:
    return {path.name for path in PACKAGE.iterdir() if path.is_dir() and path.name != "__pycache__"}


def test_the_finder_sees_each_kind_of_process_global() -> None:
    source = """
import functools, threading
from collections import OrderedDict
TABLE = {"a": 1}            # a constant table: never changed
STEPS = ("x", "y")
_seen = {}                  # empty: filled later
_lock = threading.Lock()
_order: OrderedDict[str, int] = OrderedDict()
_grown = {"first": 1}       # changed below
_model = None               # rebound below
__all__ = ["f"]

def f(key):
    global _model
    _model = object()
    _grown[key] = 2
    return TABLE[key]

@functools.lru_cache(maxsize=8)
def g(x):
    return x

@functools.cache
def h():
    return 1
"""
    assert process_globals(source) == {"_seen", "_lock", "_order", "_grown", "_model", "g", "h"}


def test_the_package_has_process_globals_and_process_py_holds_some() -> None:
    found = package_globals()
    assert {"_handed", "_sent", "_turn_slots", "_provider_slots"} <= found[HOME]
    assert {"_model", "_model_lock"} <= found["embedding.loader"]
