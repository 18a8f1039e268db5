"""`deep-research doctor`'s checks of this machine's own setup: directories and tracing."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from deep_research.cli.doctor.checks import Check

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
