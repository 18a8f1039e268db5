"""`deep-research doctor`'s checks of this machine's own setup: which `.env` files were
read, directories, where the memory is, and tracing."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from deep_research.checkpoints.target import CheckpointsConfigError, Target
from deep_research.cli.doctor.checks import Check
from deep_research.config import envfile
from deep_research.memory.location import CATALOGUE, configured

# LangSmith reads these, first non-empty wins, and traces only on exactly "true".
TRACING_VARS = (
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING",
)
LANGSMITH_KEYS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")


def check_writable(path: Path, label: str) -> Check:
    """`path` is a directory this process can write in, or can be created as one."""
    existing = next(p for p in [path.absolute(), *path.absolute().parents] if p.exists())
    if not existing.is_dir():
        return Check(
            label,
            "fail",
            f"{existing} is a file, not a directory",
            f"move it away, or run from another directory ({label} is ./{path})",
        )
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".doctor-"):
            pass
    except OSError as error:
        return Check(
            label,
            "fail",
            f"cannot write in {existing}: {error.strerror or error}",
            f"make {existing} writable, or run from a directory you can write in",
        )
    if existing != path.absolute():
        return Check(
            label, "ok", f"{path}/ will be created on the first run ({existing} is writable)"
        )
    return Check(label, "ok", f"{path}/ is writable")


# Where memory was by default before it moved to the user's data directory.
OLD_MEMORY_DIR = Path(".deep_research/memory")


def check_settings() -> Check:
    """Which `.env` files this process read (nearest first), or that it read none."""
    if envfile.disabled():
        return Check(
            "settings",
            "ok",
            f"no .env read ({envfile.OPT_OUT} is off): the environment and defaults",
        )
    read = envfile.files_read()
    if read:
        files = ", ".join(str(path) for path in read)
        first = "the environment, then these in order" if len(read) > 1 else "the environment"
        detail = f"read {files} ({first} wins)"
        if ignored := envfile.refused():
            names = ", ".join(ignored[:8])
            return Check(
                "settings",
                "warn",
                f"{detail}; ignored {names} from {read[0]}: a project's .env may not name a "
                "program to run",
                f"set it in the environment or in {envfile.user_env_path()}",
            )
        if unkeyed := envfile.unkeyed():
            return _unkeyed_check(detail, read[0], unkeyed)
        return Check("settings", "ok", detail)
    return Check(
        "settings",
        "ok",
        f"no .env found (looked from {Path.cwd()} upward and at {envfile.user_env_path()}): "
        "the environment and defaults",
    )


def _unkeyed_check(detail: str, project: Path, unkeyed: list[tuple[str, list[str]]]) -> Check:
    """Endpoints a project's `.env` set, ignored: their keys were set elsewhere."""
    names = ", ".join(name for name, _ in unkeyed[:8])
    keys = ", ".join(dict.fromkeys(key for _, found in unkeyed[:8] for key in found))
    return Check(
        "settings",
        "warn",
        f"{detail}; ignored {names} from {project}: a project's .env may not send keys set "
        f"elsewhere ({keys}) to an endpoint of its own",
        f"set the endpoint in the environment or in {envfile.user_env_path()}, or its key in "
        f"{project} too",
    )


def check_memory(use_memory: bool, environ: Mapping[str, str] = os.environ) -> Check:
    """Where a run's memory and library are (the real path), and whether it can be written.

    Nothing is opened: no chromadb, no lock (a running `langgraph dev` may hold it)."""
    if not use_memory:
        return Check("memory", "ok", "off (use_memory=false): nothing is recalled or stored")
    location = configured()
    if location.path is None:
        return Check("memory", "ok", f"on the {location.describe()} (CHROMA_HOST)")
    # Named with where it was set: an `.env` copied from an older `.env.example` sets a
    # project-local MEMORY_DIR, and `langgraph dev` lets `.env` win over the environment.
    chosen = (
        envfile.source_of("MEMORY_DIR")
        if environ.get("MEMORY_DIR", "").strip()
        else "your data directory"
    )
    writable = check_writable(location.path, "memory")
    if writable.status != "ok":
        fix = "set MEMORY_DIR to a directory you can write in"
        return Check("memory", "fail", f"{location.path} ({chosen}): {writable.detail}", fix)
    old = OLD_MEMORY_DIR.absolute()
    if (old / CATALOGUE).is_file() and old != location.path:
        return Check(
            "memory",
            "warn",
            f"{location.path} ({chosen}); a project-local memory at {OLD_MEMORY_DIR}/ (the "
            "default before the data directory) is not used",
            f"set MEMORY_DIR={OLD_MEMORY_DIR} to keep using it here, or leave it",
        )
    return Check("memory", "ok", f"{location.path} ({chosen}, every folder's runs share it)")


def check_tracing(environ: Mapping[str, str] = os.environ) -> Check:
    """With LangSmith tracing on, a key to send the traces with is set."""
    setting = next(
        ((name, environ[name]) for name in TRACING_VARS if environ.get(name, "").strip()), None
    )
    if setting is None or setting[1] != "true":
        return Check("tracing", "ok", "LangSmith tracing is off")
    if any(environ.get(name, "").strip() for name in LANGSMITH_KEYS):
        return Check("tracing", "ok", f"LangSmith tracing is on ({setting[0]}=true) with a key")
    return Check(
        "tracing",
        "warn",
        f"{setting[0]}=true but neither LANGSMITH_API_KEY nor LANGCHAIN_API_KEY is set: "
        "runs work, but no trace reaches LangSmith",
        f"set LANGSMITH_API_KEY, or {setting[0]}=false",
    )


def check_checkpoints(target: Target, timeout: float) -> Check:
    """Where runs are kept: this directory's SQLite file, or a PostgreSQL server reached
    now (named without its password). Blocking: run it in a thread."""
    if not target.shared:
        return Check(
            "checkpoints",
            "ok",
            f"{target.describe()} (this directory's runs; DEEP_RESEARCH_CHECKPOINTS="
            "postgresql://… shares them)",
        )
    from deep_research.checkpoints.postgres import probe

    try:
        version = probe(target, timeout)
    except CheckpointsConfigError as error:
        fix = "start the server or fix DEEP_RESEARCH_CHECKPOINTS (docs/checkpoints.md)"
        return Check("checkpoints", "fail", str(error), fix)
    return Check(
        "checkpoints",
        "ok",
        f"{target.describe()} is reachable (server {version}; every directory using it "
        "shares the runs)",
    )
