"""Where checkpoints go: the local SQLite file, or PostgreSQL named by DEEP_RESEARCH_CHECKPOINTS.

Read from the environment, checked before anything connects: a value that is not a
`postgresql://` URL is a `ConfigError` naming what is allowed. A DSN's password never leaves
this module in text: `describe()` names the server, database and user only, and `scrub()`
takes the password out of a driver's error text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from deep_research.config.names import ConfigError
from deep_research.text.controls import without_controls
from deep_research.text.secrets import REDACTED, redact, without

VARIABLE = "DEEP_RESEARCH_CHECKPOINTS"
SCHEMES = ("postgresql", "postgres")
# The CLI's checkpoints, relative to the directory it runs in (`.deep_research/`).
DEFAULT_SQLITE = Path(".deep_research/checkpoints.sqlite")
SHOWN_CHARS = 60
# `password=` in a key/value DSN or a query: a quoted value (libpq's '...' with \' inside) whole.
PASSWORD_FIELD = re.compile(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&]+)")


class CheckpointsConfigError(ConfigError):
    """DEEP_RESEARCH_CHECKPOINTS is not a PostgreSQL URL, or its server cannot be reached."""


@dataclass(frozen=True)
class Target:
    """The local SQLite file (`dsn` None) or a PostgreSQL database (`dsn`, with password)."""

    sqlite: Path = DEFAULT_SQLITE
    dsn: str | None = field(default=None, repr=False)  # holds the password: never in a repr

    @property
    def shared(self) -> bool:
        return self.dsn is not None

    def describe(self) -> str:
        """Where, for people: the file, or `PostgreSQL user@host:port/db`; never a password."""
        if self.dsn is None:
            return f"SQLite {self.sqlite}"
        parts = urlsplit(self.dsn)
        user = f"{unquote(parts.username)}@" if parts.username else ""
        port = f":{parts.port}" if parts.port else ""
        return f"PostgreSQL {user}{parts.hostname or 'localhost'}{port}/{_database(self.dsn)}"

    def password(self) -> str | None:
        """The password: in the URL's user part, else its `?password=` parameter."""
        if self.dsn is None:
            return None
        parts = urlsplit(self.dsn)
        query = parse_qs(parts.query).get("password", [""])[0]
        return unquote(parts.password or "") or query or None

    def scrub(self, text: str) -> str:
        """`text` (an error, say) without this DSN's password, quoted or not, nor any key."""
        secret = self.password()
        if secret:
            quoted = {quote(secret, safe=""), urlsplit(self.dsn or "").password or ""}
            for form in sorted({secret, *quoted} - {""}, key=len, reverse=True):
                text = without(text, form)  # a short one only where it stands as itself
        return redact(PASSWORD_FIELD.sub(rf"\1{REDACTED}", text))


def target_from(environ: Mapping[str, str] | None = None, sqlite: Path = DEFAULT_SQLITE) -> Target:
    """The checkpoints' target the environment names (unset or empty: the SQLite file)."""
    env = os.environ if environ is None else environ
    value = env.get(VARIABLE, "").strip()
    if not value:
        return Target(sqlite=sqlite)
    scheme = value.partition("://")[0].lower() if "://" in value else ""
    if scheme not in SCHEMES:
        raise CheckpointsConfigError(
            f"{VARIABLE} must be a postgresql://user:password@host:port/database URL (unset: "
            f"the local SQLite file), got {_shown(value)!r}"
        )
    # A URL's host part ends at the first / ? or #: a password with one of them unencoded
    # would be read as the port or the database, and then shown as one.
    rest = value.partition("://")[2]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in rest[len(authority) :]:
        raise CheckpointsConfigError(
            f"{VARIABLE} has an @ after its host: percent-encode the password's / ? # @ "
            f"(%2F %3F %23 %40): {_shown(value)!r}"
        )
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:  # its text may quote a piece of the password: not shown
        raise CheckpointsConfigError(
            f"{VARIABLE} is not a valid URL (a port is a number from 1 to 65535, a host "
            f"in [ ] an IPv6 address): {_shown(value)!r}"
        ) from None
    if not parts.hostname:
        raise CheckpointsConfigError(f"{VARIABLE} names no host: {_shown(value)!r}")
    if not _database(value):
        raise CheckpointsConfigError(
            f"{VARIABLE} names no database (…/DATABASE at the end): {_shown(value)!r}"
        )
    return Target(sqlite=sqlite, dsn=value)


def _database(dsn: str) -> str:
    return unquote(urlsplit(dsn).path.lstrip("/"))


def _shown(value: str) -> str:
    """A bad value as an error may quote it: its password (any `user:…@`) out, cut short."""
    text = without_controls(value)
    if "@" in text and "://" in text:
        scheme, _, rest = text.partition("://")
        credentials, _, host = rest.rpartition("@")
        user = credentials.split(":", 1)[0]
        text = f"{scheme}://{user}:{REDACTED}@{host}" if ":" in credentials else text
    # A libpq `key=value` string, or a URL's `?password=`: the value goes too.
    text = redact(PASSWORD_FIELD.sub(rf"\1{REDACTED}", text))
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
