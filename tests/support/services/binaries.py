"""Where the service programs are, and who may run them: a clear failure when they are missing."""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

import pytest

# .ci/run installs these; a developer's machine needs the same line.
APT_LINE = "apt-get install -y postgresql-15 redis-server"
POSTGRES_BIN_DIRS = [Path("/usr/lib/postgresql/15/bin")]
# Postgres refuses to run as root: a root test process runs it as this user.
SERVICE_USER = "postgres"


def missing(program: str) -> None:
    pytest.fail(
        f"{program} is not installed; the tests start a real one. "
        f"Install it with `{APT_LINE}` (.ci/run does).",
        pytrace=False,
    )


def postgres_bin() -> Path:
    """The directory holding initdb and postgres (PostgreSQL 15, else any on PATH)."""
    candidates = [*POSTGRES_BIN_DIRS]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "postgres").is_file():
            return directory
    missing("PostgreSQL 15 (initdb, postgres)")
    raise AssertionError("unreachable")


def redis_server() -> Path:
    found = shutil.which("redis-server")
    if not found:
        missing("redis-server")
    return Path(str(found))


def run_as() -> pwd.struct_passwd | None:
    """The user to run a service as: `postgres` when the tests run as root, else no change."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        pytest.fail(
            f"the tests run as root and there is no {SERVICE_USER!r} user to run PostgreSQL "
            f"as; `{APT_LINE}` creates it.",
            pytrace=False,
        )
    raise AssertionError("unreachable")
